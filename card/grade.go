package card

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// canaryToken matches a canary token the store makes ("tfc-" and hex),
// and any other token-shaped "tfc-" word: the grade page masks them.
var canaryToken = regexp.MustCompile(`tfc-[A-Za-z0-9_-]{8,}`)

// maskCanaries replaces canary tokens in text: whole canary lines keep
// their marker and lose their token.
func maskCanaries(text string) string {
	text = detect.CanaryLine.ReplaceAllStringFunc(text, func(line string) string {
		m := detect.CanaryLine.FindStringSubmatch(line)
		return strings.Replace(line, m[1], store.CanaryMask, 1)
	})
	return canaryToken.ReplaceAllStringFunc(text, func(tok string) string {
		if tok == store.CanaryMask {
			return tok
		}
		return store.CanaryMask
	})
}

// Grade implements handlers.Cards: one grade's details, as its check run
// says them, for anyone who can read the repository; with the runner's
// full output for the requester, maintainers and admins.
func (s *Service) Grade(ctx context.Context, viewer string, id int64) (*handlers.GradePage, error) {
	var (
		g    db.Grade
		ct   cardTicket
		raw  json.RawMessage
		runs []db.AgentRun
	)
	err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if g, err = tx.Grade(ctx, id); err != nil {
			return err
		}
		if ct.tk, err = tx.Ticket(ctx, g.TicketID); err != nil {
			return err
		}
		if ct.repo, err = tx.Repository(ctx, ct.tk.RepositoryID); err != nil {
			return err
		}
		if raw, err = tx.GradeReport(ctx, id); err != nil {
			return err
		}
		runs, err = tx.AgentRuns(ctx, ct.tk.ID)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil, handlers.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	// Anyone who can read the repository sees its check runs, so anyone
	// who can read it sees the grade's details; the runner's output only
	// those who decide on the ticket's tests.
	if _, err := s.authorize(ctx, viewer, &ct, pipeline.MaySeeCheck); err != nil {
		return nil, err
	}
	if !pipeline.MaySeeCheck(ct.perm, ct.requester) || !ct.repo.RemovedAt.IsZero() {
		return nil, handlers.ErrNotFound
	}
	full := pipeline.MaySeeOutput(ct.perm, ct.requester)
	if full {
		// The runner's output is read for those who may see it only.
		if err := s.db.Tx(ctx, func(tx *db.Tx) error {
			var err error
			raw, err = tx.GradeReportForRequester(ctx, id)
			return err
		}); err != nil {
			return nil, err
		}
	}
	page := &handlers.GradePage{ID: g.ID, Ticket: s.ticketInfo(ct), PR: g.PRNumber, HeadSHA: g.HeadSHA, Digest: g.Digest, Version: g.VersionNumber,
		State: string(g.State), Started: g.StartedAt, Finished: g.FinishedAt,
		PRURL: fmt.Sprintf("%s%s/%s/pull/%d", s.webURL, ct.repo.Owner, ct.repo.Name, g.PRNumber), Full: full,
		CardLink: pipeline.MaySeeCheck(ct.perm, ct.requester), AgentRuns: implementerRuns(runs), AgentWarnings: db.TicketWarnings(runs)}
	if len(raw) == 0 {
		return page, nil
	}
	var r report.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("read the report of grade %d: %w", id, err)
	}
	var criteria map[string][]string
	if g.VersionNumber > 0 {
		v, err := s.store.Version(ctx, ct.st, g.VersionNumber)
		if err != nil {
			s.log.WarnContext(ctx, "grade page: version metadata", "grade", id, "err", err)
		}
		criteria = v.Criteria
	}
	page.Report = reportView(&r, criteria, ct.tk.Body)
	if pipeline.MayView(ct.perm, ct.requester) && g.VersionNumber > 0 {
		page.Reproduce = reproduceCommand(g.PRNumber, g.HeadSHA, g.VersionNumber, r.Settings)
		page.TestsArchive = pipeline.TestsArchivePath(ct.repo.Owner, ct.repo.Name, ct.tk.IssueNumber, g.VersionNumber)
	}
	var (
		st       versionState
		attempts []db.GradeAttempt
	)
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if g.VersionNumber > 0 {
			if st, err = s.versionState(ctx, tx, ct.tk.ID, g.VersionNumber); err != nil {
				return err
			}
		}
		attempts, err = tx.GradeAttempts(ctx, g.ID)
		return err
	}); err != nil {
		return nil, err
	}
	page.Approval = approvalView(st)
	if page.Regressions, err = s.regressionsView(ctx, g.ID, full); err != nil {
		return nil, err
	}
	for _, a := range attempts {
		page.Attempts = append(page.Attempts, handlers.AttemptView{Attempt: a.Attempt, State: string(a.State), Verdict: a.Verdict, Trust: a.Trust,
			Passed: a.Passed, Total: a.Total, Finished: a.FinishedAt})
	}
	page.Report.TrustMeans = trustMeaning(page.Report.Trust)
	if !full {
		page.Report.Output, page.Report.OutputTruncated = "", false
		page.Report.CaseNames = nil
	}
	return page, nil
}

// regressionsView is grade id's regression run for its page, with the
// pull request's run's output when full; nil when it had none.
func (s *Service) regressionsView(ctx context.Context, id int64, full bool) (*handlers.RegressionsView, error) {
	var run db.RegressionRun
	err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		run, err = tx.RegressionRunOf(ctx, id)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := &handlers.RegressionsView{State: run.State}
	if len(run.Report) > 0 {
		var r report.Regressions
		if err := json.Unmarshal(run.Report, &r); err != nil {
			return nil, fmt.Errorf("read the regression run of grade %d: %w", id, err)
		}
		counts := func(c report.SuiteCounts) handlers.SuiteCountsView {
			return handlers.SuiteCountsView{Total: c.Total, Passed: c.Passed, Failed: c.Failed, Errors: c.Errors, Skipped: c.Skipped}
		}
		v.Report = &handlers.RegressionsReport{Verdict: string(r.Verdict), Reasons: r.Reasons, Base: counts(r.Base), PR: counts(r.PR),
			Regressed: r.Regressed, Changed: r.Changed, Flaky: r.Flaky, FailingOnBase: r.FailingOnBase}
	}
	if full {
		v.Output = maskCanaries(run.Output)
	}
	return v, nil
}

// reportView is a report as the grade page shows it, canaries masked.
func reportView(r *report.Report, criteria map[string][]string, issueBody string) *handlers.ReportView {
	rv := &handlers.ReportView{Verdict: string(r.Verdict), Trust: string(r.Trust), Sealing: report.SealingLine(r.Sealing), Reasons: r.Reasons,
		Passed: r.Counts.Passed, Failed: r.Counts.Failed, Errors: r.Counts.Errors, Skipped: r.Counts.Skipped, Total: r.Counts.Total,
		TouchedTests: r.TouchedTests, Contaminated: r.Contaminated, Sentinels: r.Sentinels, UIDSplit: r.Isolation.UIDSplit,
		Image: r.Image, TestsDigest: r.TestsDigest, RepoDigest: r.RepoDigest, Runner: strings.Join(r.Runner, " "), ExitCode: r.ExitCode,
		Duration: time.Duration(r.DurationSeconds * float64(time.Second)).Round(time.Millisecond),
		Output:   maskCanaries(hideSentinels(r.Output, r)), OutputTruncated: r.OutputTruncated,
		SkippedOnBase: r.SkippedOnBase, Environment: report.EnvironmentLine(r.Environment, r.Network)}
	for _, s := range r.TamperContext {
		rv.TamperContext = append(rv.TamperContext, handlers.PathReason{Path: s.Path, Reason: s.Reason})
	}
	for _, id := range slices.Sorted(maps.Keys(r.CaseNames)) {
		rv.CaseNames = append(rv.CaseNames, handlers.PathReason{Path: id, Reason: maskCanaries(r.CaseNames[id])})
	}
	for i, reason := range rv.Reasons {
		rv.Reasons[i] = maskCanaries(reason)
	}
	byTest := map[string][]string{}
	for c, tests := range criteria {
		for _, t := range tests {
			byTest[t] = append(byTest[t], c)
		}
	}
	outcome := map[string]report.Outcome{}
	for _, t := range r.Tests {
		if isSentinel(t.ID) {
			continue
		}
		outcome[t.ID] = t.Outcome
		rv.Tests = append(rv.Tests, handlers.TestOutcome{ID: t.ID, Outcome: string(t.Outcome), Criteria: byTest[t.ID]})
	}
	for c, tests := range criteria {
		score := handlers.CriterionScore{ID: c, Text: pipeline.CriterionText(c, issueBody), Total: len(tests)}
		for _, t := range tests {
			if outcome[t] == report.OutcomePassed {
				score.Passed++
			}
		}
		rv.Criteria = append(rv.Criteria, score)
	}
	slices.SortFunc(rv.Criteria, func(a, b handlers.CriterionScore) int { return strings.Compare(a.ID, b.ID) })
	for _, t := range r.TamperSignals {
		rv.TamperSignals = append(rv.TamperSignals, handlers.PathReason{Path: t.Path, Reason: t.Reason})
	}
	for _, c := range r.Contamination {
		rv.Contamination = append(rv.Contamination, handlers.PathReason{Path: c.HiddenFile, Reason: c.Where})
	}
	return rv
}

// trustMeaning says in one sentence what a trust level means.
func trustMeaning(trust string) string {
	switch report.Trust(trust) {
	case report.TrustSealed:
		return "sealed: the hidden tests and their assertions ran in a process of their own, as a user the code under test could not reach; the code under test ran apart and saw only what the tests handed it."
	case report.TrustSplit:
		return "split: the hidden tests ran apart from the code under test, but some passing tests were decided by a comparison of the code under test's own objects; the grade page names them."
	case report.TrustIsolated:
		return "isolated: the hidden tests ran as root-owned files the code under test could not read or change, under a separate user, with no network."
	case report.TrustBestEffort:
		return "best_effort: the sandbox ran without the user split, so the code under test could in principle reach the hidden tests; the grade is likely right but not proven sealed."
	case report.TrustLow:
		return "low: a test command of the repository's own ran instead of the sealed pytest runner, so the grade says what that command reported and nothing more."
	}
	return ""
}

// approvalView is how a version was signed and what its base check
// measured of its tests, as the grade page shows it; nil for a version the
// database does not hold.
func approvalView(st versionState) *handlers.ApprovalView {
	if st.row.ID == 0 {
		return nil
	}
	a := &handlers.ApprovalView{}
	for _, s := range st.sigs {
		a.Signers = append(a.Signers, handlers.Signature{Login: s.ApprovedBy, At: s.ApprovedAt, ReviewSeconds: s.ReviewSeconds, Fast: s.Fast})
	}
	f := pipeline.NewApprovalFacts(nil, st.check) // the signatures are shown with their time
	a.Tests, a.Guards, a.Mutation, a.Twinned, a.TwinsOf = f.Tests, f.Guards, f.Mutation.Summary(), f.Twinned, f.TwinsOf
	return a
}

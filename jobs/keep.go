package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// KeepTestsArgs is the job that keeps a ticket's approved hidden tests as
// regression tests (keep_tests) once pull request PR's grade passed and a
// reviewer approved it. It is enqueued by each of the things it waits for
// (a passing grade, an approving review, the merge a follow-up waits
// for), in whatever order they come, and decides from what GitHub and the
// database show when it runs.
type KeepTestsArgs struct {
	Ticket int64 `json:"ticket"`
	PR     int   `json:"pr"`
}

// Kind implements river.JobArgs.
func (KeepTestsArgs) Kind() string { return "keep_tests" }

// InsertOpts implements river.JobArgsWithInsertOpts. Every trigger gets a
// job of its own, none unique: River's uniqueness would count a running
// job, whose reads may predate the event that enqueues the next (an
// approval arriving while a pass's job reads the reviews). The job is
// idempotent instead: the ticket's row keeps the tests once, the commit
// onto a pull request moves its branch only as a fast forward from the
// head that passed, and a retried job finds its own commit by its trailer.
func (KeepTestsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5}
}

// keepBranch is the branch of a follow-up pull request of kept tests.
func keepBranch(issue int) string { return fmt.Sprintf("testfirst/keep-tests-%d", issue) }

// KeepTestsWorker keeps a ticket's approved hidden tests: the store's
// masked card copy without its canary lines (store.Card.Kept), committed
// by the app onto the pull request's head (keep_tests: commit) or, once
// it is merged, onto a branch of its own with a pull request
// (keep_tests: follow_up, and a fork's pull request, which the app cannot
// push to). A ticket's tests are kept once (db.SaveKeptTests); a retried
// job finds its own commit by its trailer and records it.
type KeepTestsWorker struct {
	river.WorkerDefaults[KeepTestsArgs]
	db     *db.DB
	github installationClients
	store  *store.Writer
	log    *slog.Logger
	// requireUIDSplit is the service's TESTFIRST_UID_SPLIT=required: a
	// pass whose uid split was not proven was refused, and keeps nothing.
	requireUIDSplit bool
}

// Work implements river.Worker.
func (w *KeepTestsWorker) Work(ctx context.Context, job *river.Job[KeepTestsArgs]) error {
	var (
		tk   db.Ticket
		repo db.Repository
		prev db.KeptTests
		had  bool
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if tk, err = tx.Ticket(ctx, job.Args.Ticket); err != nil {
			return err
		}
		if repo, err = tx.Repository(ctx, tk.RepositoryID); err != nil {
			return err
		}
		prev, err = tx.KeptTestsOf(ctx, tk.ID)
		had = err == nil
		if errors.Is(err, db.ErrNotFound) {
			err = nil
		}
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	log := w.log.With("ticket", tk.ID, "issue", tk.IssueNumber, "pr", job.Args.PR, "repo", repo.Owner+"/"+repo.Name)
	if had && prev.State == db.KeptDone {
		log.InfoContext(ctx, "tests not kept again: kept already", "commit", prev.CommitSHA)
		return nil // kept once, never twice
	}
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	switch {
	case fc.LoadError != nil:
		return retryOrCancel(fc.LoadError)
	case fc.ParseError != nil:
		// The file is wrong: the repository is told where it is read for a
		// ticket or a grade; nothing is made public on a guess.
		log.InfoContext(ctx, "tests not kept: the repository's config is wrong", "err", fc.ParseError)
		return nil
	case fc.Config.KeepTests == pipeline.KeepOff:
		log.InfoContext(ctx, "tests not kept: keep_tests is off")
		return nil
	}
	mode := fc.Config.KeepTests
	v, err := approvedVersion(ctx, w.store, storeTicket(repo, tk.IssueNumber))
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	pr, err := gi.Pull(ctx, repo.Owner, repo.Name, job.Args.PR)
	if err != nil {
		return retryOrCancel(err)
	}
	k := db.KeptTests{TicketID: tk.ID, PRNumber: pr.Number, Mode: mode, Version: v.Number, Digest: v.Digest}
	if had && prev.PRNumber == pr.Number && prev.Digest == v.Digest {
		// A fork's pull request that passed and was approved waits for its
		// merge: what made it eligible is recorded.
		k = prev
	} else {
		// A retried job whose commit reached the pull request's head
		// before it was recorded finds it there.
		if mode == pipeline.KeepCommit && pr.Open {
			adopted, err := w.adopt(ctx, log, gi, repo, tk, pr, v, fc.Config, &k)
			if err != nil || adopted {
				return err
			}
		}
		why, err := w.eligible(ctx, gi, repo, tk, pr, v, fc.Config, &k)
		if err != nil {
			return err
		}
		if why != "" {
			log.InfoContext(ctx, "tests not kept yet", "why", why)
			return nil
		}
	}
	fork := !strings.EqualFold(pr.HeadRepo, repo.Owner+"/"+repo.Name)
	switch {
	case mode == pipeline.KeepCommit && pr.Open && !fork:
		return w.commit(ctx, log, gi, repo, tk, pr, k)
	case mode == pipeline.KeepCommit && fork && !had:
		k.Mode, k.State = pipeline.KeepFollowUp, db.KeptWaitingMerge
		k.Note = fmt.Sprintf("the branch of #%d is in the fork %s, which testfirst cannot push to", pr.Number, pr.HeadRepo)
		if err := w.db.Tx(ctx, func(tx *db.Tx) error {
			if err := tx.SaveKeptTests(ctx, k); err != nil {
				return err
			}
			return audit(ctx, tx, "testfirst", tk.ID, "tests.keep_waiting", map[string]any{"pr": pr.Number, "why": k.Note, "version": k.Version,
				"digest": k.Digest, "approved_by": k.ApprovedBy})
		}); err != nil {
			return err
		}
		if _, err := gi.CreateComment(ctx, repo.Owner, repo.Name, tk.IssueNumber, pipeline.KeptForkComment(pr.Number)); err != nil {
			return retryOrCancel(err)
		}
	}
	if !pr.Merged {
		log.InfoContext(ctx, "tests not kept yet: the follow-up waits for the merge")
		return nil
	}
	k.Mode = pipeline.KeepFollowUp
	return w.followUp(ctx, log, gi, repo, tk, pr, k)
}

// adopt records the commit of kept tests an earlier attempt made, when
// the pull request's head is it: a commit whose message carries the
// ticket's trailer, whose one parent is eligible (its grade passed, a
// reviewer approved), and whose tree is exactly that parent's with the
// kept files. A message is anyone's to write; the tree and the parent's
// pass are not, so an author's commit that only borrows the trailer is
// graded as any other head.
func (w *KeepTestsWorker) adopt(ctx context.Context, log *slog.Logger, gi *github.Installation, repo db.Repository, tk db.Ticket, pr github.Pull,
	v *store.Version, cfg pipeline.RepoConfig, k *db.KeptTests) (bool, error) {
	head, err := gi.GitCommit(ctx, repo.Owner, repo.Name, pr.HeadSHA)
	if err != nil {
		return false, retryOrCancel(err)
	}
	if !strings.Contains(head.Message, pipeline.KeptTrailerLine(tk.IssueNumber, v.Digest)) || len(head.Parents) != 1 {
		return false, nil
	}
	parent := pr
	parent.HeadSHA = head.Parents[0]
	why, err := w.eligible(ctx, gi, repo, tk, parent, v, cfg, k)
	if err != nil {
		return false, err
	}
	if why != "" {
		log.InfoContext(ctx, "head carries the kept-tests trailer, but its parent does not keep them", "why", why)
		return false, nil
	}
	files, err := w.keptFiles(ctx, repo, tk, v.Number)
	if err != nil {
		return false, err
	}
	want, err := gi.TreeWith(ctx, repo.Owner, repo.Name, parent.HeadSHA, files)
	if err != nil {
		return false, retryOrCancel(err)
	}
	if want != head.Tree {
		log.InfoContext(ctx, "head carries the kept-tests trailer, but its tree is not its parent's with the kept tests", "head", head.SHA)
		return false, nil
	}
	k.Branch, k.ParentSHA, k.CommitSHA = pr.HeadRef, parent.HeadSHA, head.SHA
	return true, w.record(ctx, log, gi, repo, tk, *k)
}

// eligible says why pull request pr does not keep ticket tk's tests yet
// ("" when it does), filling k's approver: the grade of its head against
// the approved version v passed, and a reviewer with write access who is
// not its author approved it.
func (w *KeepTestsWorker) eligible(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr github.Pull,
	v *store.Version, cfg pipeline.RepoConfig, k *db.KeptTests) (string, error) {
	var g db.Grade
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		g, err = tx.GradeByHead(ctx, pr.HeadSHA, v.Digest)
		return err
	})
	switch {
	case errors.Is(err, db.ErrNotFound):
		return fmt.Sprintf("head %s has no grade against v%d", pipeline.ShortSHA(pr.HeadSHA), v.Number), nil
	case err != nil:
		return "", err
	case g.TicketID != tk.ID || g.State != pipeline.GradeCompleted || g.Verdict != string(report.VerdictPass):
		return fmt.Sprintf("the grade of head %s against v%d is %s %s, not a pass", pipeline.ShortSHA(pr.HeadSHA), v.Number, g.State, g.Verdict), nil
	case (w.requireUIDSplit || cfg.UIDSplit == pipeline.UIDSplitRequired) && g.Trust != string(report.TrustIsolated):
		return fmt.Sprintf("the pass of head %s was refused: the uid split is required and its trust is %s", pipeline.ShortSHA(pr.HeadSHA), g.Trust), nil
	}
	reviews, err := gi.Reviews(ctx, repo.Owner, repo.Name, pr.Number)
	if err != nil {
		return "", retryOrCancel(err)
	}
	var rs []pipeline.Review
	for _, r := range reviews {
		rs = append(rs, pipeline.Review{Reviewer: r.Reviewer, ReviewerID: r.ReviewerID, State: r.State})
	}
	by, ok, err := pipeline.KeepApprover(rs, pr.AuthorID, pr.Author, func(login string) (bool, error) {
		perm, err := gi.Permission(ctx, repo.Owner, repo.Name, login)
		return pipeline.HasWriteAccess(perm), err
	})
	if err != nil {
		return "", retryOrCancel(err)
	}
	if !ok {
		return "no reviewer with write access other than the author approved it", nil
	}
	k.ApprovedBy, k.ParentSHA = by, pr.HeadSHA
	return "", nil
}

// keptFiles are the approved version's files as kept: as the writer
// handed them in, without the store's canary lines.
func (w *KeepTestsWorker) keptFiles(ctx context.Context, repo db.Repository, tk db.Ticket, version int) ([]github.FileChange, error) {
	card, err := w.store.Card(ctx, storeTicket(repo, tk.IssueNumber), version)
	if err != nil {
		return nil, err
	}
	files, err := card.Kept()
	if err != nil {
		return nil, river.JobCancel(fmt.Errorf("the tests of v%d cannot be kept: %w", version, err))
	}
	out := make([]github.FileChange, 0, len(files))
	for _, f := range files {
		out = append(out, github.FileChange{Path: f.Path, Content: f.Data})
	}
	return out, nil
}

// commit adds the kept tests onto the pull request's head that passed.
func (w *KeepTestsWorker) commit(ctx context.Context, log *slog.Logger, gi *github.Installation, repo db.Repository, tk db.Ticket, pr github.Pull,
	k db.KeptTests) error {
	files, err := w.keptFiles(ctx, repo, tk, k.Version)
	if err != nil {
		return err
	}
	approvedBy := w.testsApprovedBy(ctx, repo, tk, k.Version)
	sha, err := gi.CommitOnto(ctx, repo.Owner, repo.Name, pr.HeadRef, k.ParentSHA,
		pipeline.KeptCommitMessage(tk.IssueNumber, k.Version, k.Digest, approvedBy), files)
	if errors.Is(err, github.ErrBranchMoved) {
		// The author pushed after the pass: that head is graded on its own,
		// and its pass enqueues this job again.
		log.InfoContext(ctx, "tests not kept: the branch moved on", "err", err)
		return nil
	}
	if err != nil {
		return retryOrCancel(err)
	}
	k.Branch, k.CommitSHA = pr.HeadRef, sha
	return w.record(ctx, log, gi, repo, tk, k)
}

// followUp adds the kept tests on a branch of testfirst's off the default
// branch and opens a pull request of them.
func (w *KeepTestsWorker) followUp(ctx context.Context, log *slog.Logger, gi *github.Installation, repo db.Repository, tk db.Ticket, pr github.Pull,
	k db.KeptTests) error {
	branch := keepBranch(tk.IssueNumber)
	sha := ""
	// A retried job finds its branch made already.
	if head, err := gi.BranchHead(ctx, repo.Owner, repo.Name, branch); err == nil {
		c, err := gi.GitCommit(ctx, repo.Owner, repo.Name, head)
		if err != nil {
			return retryOrCancel(err)
		}
		if strings.Contains(c.Message, pipeline.KeptTrailerLine(tk.IssueNumber, k.Digest)) {
			sha = head
		}
	} else if !errors.Is(err, github.ErrNotFound) {
		return retryOrCancel(err)
	}
	if sha == "" {
		files, err := w.keptFiles(ctx, repo, tk, k.Version)
		if err != nil {
			return err
		}
		base, err := gi.BranchHead(ctx, repo.Owner, repo.Name, repo.DefaultBranch)
		if err != nil {
			return retryOrCancel(err)
		}
		approvedBy := w.testsApprovedBy(ctx, repo, tk, k.Version)
		if sha, err = gi.CommitFiles(ctx, repo.Owner, repo.Name, branch, base,
			pipeline.KeptCommitMessage(tk.IssueNumber, k.Version, k.Digest, approvedBy), files); err != nil {
			return retryOrCancel(err)
		}
	}
	n, err := gi.OpenPull(ctx, repo.Owner, repo.Name, branch, repo.DefaultBranch, pipeline.KeptFollowUpTitle(tk.IssueNumber),
		pipeline.KeptFollowUpBody(tk.IssueNumber, pr.Number, k.Version, k.Digest))
	if err != nil {
		return retryOrCancel(err)
	}
	k.Branch, k.CommitSHA, k.FollowUpPR = branch, sha, n
	return w.record(ctx, log, gi, repo, tk, k)
}

// testsApprovedBy is who approved the version's tests, for the commit's
// message; "the requester" when the store cannot say.
func (w *KeepTestsWorker) testsApprovedBy(ctx context.Context, repo db.Repository, tk db.Ticket, version int) string {
	v, err := w.store.Version(ctx, storeTicket(repo, tk.IssueNumber), version)
	if err != nil || v.Decision == nil || v.Decision.By == "" {
		return "the requester"
	}
	return v.Decision.By
}

// keptWhere says where kept tests went, for the ticket, the audit log and
// later grades.
func keptWhere(k db.KeptTests) string {
	if k.FollowUpPR != 0 {
		return fmt.Sprintf("commit %s in pull request #%d, after #%d was merged", pipeline.ShortSHA(k.CommitSHA), k.FollowUpPR, k.PRNumber)
	}
	return fmt.Sprintf("commit %s on pull request #%d", pipeline.ShortSHA(k.CommitSHA), k.PRNumber)
}

// record writes down that the tests were kept, with its audit event, and
// tells the ticket.
func (w *KeepTestsWorker) record(ctx context.Context, log *slog.Logger, gi *github.Installation, repo db.Repository, tk db.Ticket,
	k db.KeptTests) error {
	k.State, k.KeptAt = db.KeptDone, time.Now()
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.SaveKeptTests(ctx, k); err != nil {
			return err
		}
		return audit(ctx, tx, "testfirst", tk.ID, pipeline.AuditTestsKept, map[string]any{"pr": k.PRNumber, "mode": k.Mode, "version": k.Version,
			"digest": k.Digest, "approved_by": k.ApprovedBy, "branch": k.Branch, "parent_sha": k.ParentSHA, "commit_sha": k.CommitSHA,
			"follow_up_pr": k.FollowUpPR, "note": k.Note})
	})
	if errors.Is(err, db.ErrKeptAlready) {
		return nil
	}
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "hidden tests kept", "mode", k.Mode, "commit", k.CommitSHA, "follow_up_pr", k.FollowUpPR, "approved_by", k.ApprovedBy)
	if _, err := gi.CreateComment(context.WithoutCancel(ctx), repo.Owner, repo.Name, tk.IssueNumber, pipeline.KeptComment(k.Version, keptWhere(k))); err != nil {
		// Recorded and audited: the comment is the ticket's courtesy.
		log.WarnContext(ctx, "kept tests not told on the issue", "err", err)
	}
	return nil
}

// enqueueKeep enqueues the keep_tests job of each ticket pull request pr
// of repo closes, in tx.
func enqueueKeep(ctx context.Context, tx *db.Tx, repoID int64, pr int) error {
	p, err := tx.PullRequest(ctx, repoID, pr)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, issue := range p.Links {
		tk, err := tx.TicketByIssue(ctx, repoID, issue)
		if errors.Is(err, db.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := tx.InsertJob(ctx, KeepTestsArgs{Ticket: tk.ID, PR: pr}, nil); err != nil {
			return err
		}
	}
	return nil
}

// applyKept tells a grade that its ticket's hidden tests are public, kept
// by keep_tests: the grade of the kept commit itself (the head that passed
// while they were hidden, with the tests added) says so and keeps its
// verdict; every other later grade is contaminated, saying where they went.
func applyKept(ctx context.Context, d *db.DB, ticketID int64, head string, rep *report.Report) error {
	var k db.KeptTests
	err := d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		k, err = tx.KeptTestsOf(ctx, ticketID)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil || k.State != db.KeptDone {
		return err
	}
	if k.FollowUpPR == 0 && head == k.CommitSHA {
		rep.Reasons = append([]string{pipeline.KeptHeadNote(k.ParentSHA)}, rep.Reasons...)
		return nil
	}
	rep.Contaminated, rep.Verdict = true, report.VerdictContaminated
	rep.Reasons = append([]string{pipeline.KeptReason(keptWhere(k))}, rep.Reasons...)
	return nil
}

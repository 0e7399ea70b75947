package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
)

// maxSummaryBytes keeps the summary under GitHub's limit, which it counts
// in characters and in bytes.
const maxSummaryBytes = checkrun.MaxSummary - 1024

// Graded is what a check run says about one grade.
type Graded struct {
	Report *report.Report
	// Version and Digest are the approved version graded against.
	Version int
	Digest  string
	// Criteria maps criterion ids to the test ids that cover them;
	// IssueBody is the issue they come from, for each one's text.
	Criteria  map[string][]string
	IssueBody string
	// DetailsURL is the grade's page on the approval card.
	DetailsURL string
	// Owner, Repo and Issue name the ticket graded against; the summary
	// links to its issue.
	Owner, Repo string
	Issue       int
	// Warnings are said first, each on a line of its own: what the
	// ticket's agents make doubtful (AgentWarnings).
	Warnings []string
	// Approval is how the version was approved and how strong its tests
	// measured, for reviewers who cannot open the card; nil when unknown.
	Approval *ApprovalFacts
}

// ApprovalFacts are what the requester saw of the approved version's
// strength on the card and how it was signed: counts and logins only,
// nothing of the tests or the reference patch.
type ApprovalFacts struct {
	Signers []SignerFact
	// Tests and Guards count the version's tests and those that already
	// pass on the base.
	Tests, Guards int
	// Mutation is the reference patch's mutation check, if it ran.
	Mutation *report.Mutation
	// Twinned of TwinsOf tests have twins.
	Twinned, TwinsOf int
}

// NewApprovalFacts gathers the facts of a version from its signers and its
// base check (nil when it has not run): the one reading of them the check
// run and the grade page share.
func NewApprovalFacts(signers []SignerFact, check *VersionCheck) *ApprovalFacts {
	a := &ApprovalFacts{Signers: signers}
	if check == nil {
		return a
	}
	a.Tests, a.Guards = len(check.Tests), len(check.Base.GuardTests)
	if check.Reference != nil {
		a.Mutation = check.Reference.Mutation
	}
	if check.Twins != nil {
		a.Twinned, a.TwinsOf = check.Twins.Twinned, check.Twins.Of
	}
	return a
}

// SignerFact is one signature of the approved version.
type SignerFact struct {
	Login         string
	ReviewSeconds int64
	Fast          bool
}

// writeApproval writes the facts of the approval for the summary's tail.
func writeApproval(b *strings.Builder, a *ApprovalFacts) {
	fmt.Fprintf(b, "\n### The approved tests\n\n")
	for _, s := range a.Signers {
		fmt.Fprintf(b, "- signed by %s after %s on the approval card", code(report.EscapeText(s.Login)), (time.Duration(s.ReviewSeconds) * time.Second).String())
		if s.Fast {
			b.WriteString(" (a fast approval: under the repository's `fast_approval` time)")
		}
		b.WriteString("\n")
	}
	if a.Tests > 0 {
		fmt.Fprintf(b, "- %d hidden tests, %d of them guard tests (they already pass on the base commit)\n", a.Tests, a.Guards)
	}
	if m := a.Mutation.Summary(); m != "" {
		fmt.Fprintf(b, "- mutation of the writer's reference patch: %s\n", prose(m))
	}
	if a.TwinsOf > 0 {
		fmt.Fprintf(b, "- %d of %d tests have twins (a copy expecting a changed value, which an honest implementation fails)\n", a.Twinned, a.TwinsOf)
	}
}

// conclusions maps verdicts to check run conclusions: only a pass
// succeeds; an invalid task needs the requester.
var conclusions = map[report.Verdict]string{
	report.VerdictPass:         checkrun.ConclusionSuccess,
	report.VerdictFail:         checkrun.ConclusionFailure,
	report.VerdictError:        checkrun.ConclusionFailure,
	report.VerdictTampered:     checkrun.ConclusionFailure,
	report.VerdictContaminated: checkrun.ConclusionFailure,
	report.VerdictInvalidTask:  checkrun.ConclusionActionRequired,
}

// CompletedCheckRun renders a finished grade. It shows counts, failing
// test ids, criteria, detectors and digests; never a test body or the
// runner's output.
func CompletedCheckRun(headSHA string, g Graded) checkrun.Run {
	r := g.Report
	conclusion, ok := conclusions[r.Verdict]
	if !ok {
		conclusion = checkrun.ConclusionFailure
	}
	return checkrun.Run{
		Name:       CheckRunName,
		HeadSHA:    headSHA,
		Status:     checkrun.StatusCompleted,
		Conclusion: conclusion,
		Title:      Title(r),
		Summary:    Summary(g),
		DetailsURL: g.DetailsURL,
		Actions:    []checkrun.Action{RegradeAction},
	}
}

// Title is "12/14 hidden tests passed · trust: isolated" (with "· 1 skipped
// as on the base" before the trust when tests skipped here and on the
// base), prefixed with the verdict when it is not a plain pass or fail,
// and with the verdict and what a reviewer should look at when the run
// showed it: repository tests the pull request changed, tamper signals,
// runtime signals ("pass · 1 repository test changed · 14/14 hidden tests
// passed · trust: isolated").
func Title(r *report.Report) string {
	t := fmt.Sprintf("%d/%d hidden tests passed · trust: %s", r.Counts.Passed, r.Counts.Total, r.Trust)
	if n := len(r.SkippedOnBase); n > 0 {
		t = fmt.Sprintf("%d/%d hidden tests passed · %d skipped as on the base · trust: %s", r.Counts.Passed, r.Counts.Total, n, r.Trust)
	}
	var raised []string
	if n := len(r.TouchedTests); n > 0 {
		raised = append(raised, plural(n, "repository test", "repository tests")+" changed")
	}
	if n := len(r.TamperSignals); n > 0 {
		raised = append(raised, plural(n, "tamper signal", "tamper signals"))
	}
	if n := report.WeakSignals(r.Evidence); n > 0 {
		raised = append(raised, fmt.Sprintf("runtime signals: %d", n))
	}
	if len(raised) > 0 {
		return fmt.Sprintf("%s · %s · %s", r.Verdict, strings.Join(raised, " · "), t)
	}
	if r.Verdict != report.VerdictPass && r.Verdict != report.VerdictFail {
		t = string(r.Verdict) + " · " + t
	}
	return t
}

// trustMeaning says in one line what each trust level means for the
// verdict.
var trustMeaning = map[report.Trust]string{
	report.TrustSealed: "the hidden tests and every assertion ran in a process of their own, as a user the code under test could not reach; " +
		"the code under test ran in another process and saw only the values the tests handed it, so it could not read the expected answers or forge the grade.",
	report.TrustSplit: "the hidden tests ran in a process of their own, apart from the code under test, but some passing tests compared an object of the code under test " +
		"with its own comparison, which the code under test decides: read which below.",
	report.TrustIsolated: "the code under test ran as another user than the grader, without network, could not change the root-owned hidden tests, " +
		"and the grade was written by testfirst's runner: the verdict can be relied on.",
	report.TrustBestEffort: "the sandbox could not run the code under test as a separate user, so it could have rewritten the hidden tests " +
		"or forged the grade: read the verdict with the detectors below.",
	report.TrustLow: "the tests ran with a custom command, not testfirst's pytest runner, so nothing stops the code under test from " +
		"shaping the result: a reviewer must check it.",
}

// TrustLine is one line on what trust t means.
func TrustLine(t report.Trust) string {
	if m, ok := trustMeaning[t]; ok {
		return fmt.Sprintf("Trust %s: %s", t, m)
	}
	return fmt.Sprintf("Trust %s: unknown to this version of testfirst.", prose(string(t)))
}

// prose makes text from the grader (which may name files of the pull
// request) safe as plain markdown prose: every character that could start
// a link, a mention, HTML, a heading, a table cell or emphasis is
// backslash-escaped, and control characters are escaped.
func prose(s string) string {
	s = report.EscapeText(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>@#|~!&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Summary is the check run's markdown body, under GitHub's size limit.
func Summary(g Graded) string {
	r := g.Report
	var b strings.Builder
	fmt.Fprintf(&b, "**Verdict: %s** · trust: %s · graded against hidden tests v%d", r.Verdict, r.Trust, g.Version)
	if g.Issue > 0 {
		fmt.Fprintf(&b, " of [#%d](/%s/%s/issues/%d)", g.Issue, g.Owner, g.Repo, g.Issue)
	}
	fmt.Fprintf(&b, "\n\n%s\n\n", TrustLine(r.Trust))
	if line := report.SealingLine(r.Sealing); line != "" {
		fmt.Fprintf(&b, "%s\n\n", prose(line))
	}
	for _, w := range g.Warnings {
		fmt.Fprintf(&b, "> **Warning:** %s\n\n", prose(w))
	}
	for _, reason := range r.Reasons {
		fmt.Fprintf(&b, "- %s\n", prose(reason))
	}
	c := r.Counts
	fmt.Fprintf(&b, "\n| passed | failed | errors | skipped | total |\n|---|---|---|---|---|\n| %d | %d | %d | %d | %d |\n", c.Passed, c.Failed, c.Errors, c.Skipped, c.Total)

	tail := &strings.Builder{}
	if len(r.SkippedOnBase) > 0 {
		fmt.Fprintf(tail, "\n### Hidden tests that skip here and on the base\n\nThey skip in the grader's environment on the base commit too: reported skipped, they do not count against the grade. The requester saw them before approving. A test that ran on the base and skips here does not pass.\n\n")
		for i, id := range r.SkippedOnBase {
			if i == maxDetectorLines {
				fmt.Fprintf(tail, "- … and %d more\n", len(r.SkippedOnBase)-i)
				break
			}
			fmt.Fprintf(tail, "- %s\n", code(report.ShortText(id, 120)))
		}
	}
	if len(g.Criteria) > 0 {
		outcome := map[string]report.Outcome{}
		for _, t := range r.Tests {
			outcome[t.ID] = t.Outcome
		}
		ids := make([]string, 0, len(g.Criteria))
		for id := range g.Criteria {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		fmt.Fprintf(tail, "\n### Criteria\n\n| criterion | tests passed |\n|---|---|\n")
		for _, id := range ids {
			passed := 0
			for _, t := range g.Criteria[id] {
				if outcome[t] == report.OutcomePassed {
					passed++
				}
			}
			name := code(report.EscapeText(id))
			if text := CriterionText(id, g.IssueBody); text != "" {
				name += " " + prose(text)
			}
			fmt.Fprintf(tail, "| %s | %d/%d |\n", cell(name), passed, len(g.Criteria[id]))
		}
	}
	if len(r.TamperSignals) > 0 || len(r.Evidence) > 0 || len(r.TouchedTests) > 0 || r.Contaminated {
		fmt.Fprintf(tail, "\n### Detectors\n")
		writeDetectors(tail, r)
	}
	if g.Approval != nil {
		writeApproval(tail, g.Approval)
	}
	// For reviewers who want to grade the commit again themselves: folded,
	// so the implementer reads the verdict first.
	fmt.Fprintf(tail, "\n<details><summary>Reproduce (for reviewers)</summary>\n\n- tests: %s (v%d)\n- tree: %s\n- grader image: %s\n",
		code(g.Digest), g.Version, code(r.RepoDigest), code(r.Image))
	if line := report.EnvironmentLine(r.Environment, r.Network); line != "" {
		fmt.Fprintf(tail, "- environment: %s\n", code(report.EscapeText(line)))
	}
	fmt.Fprintf(tail, "\n</details>\n")

	// The failing ids come last in the budget: the rest always fits.
	if len(r.Failed) > 0 {
		budget := maxSummaryBytes - b.Len() - tail.Len() - 200
		fmt.Fprintf(&b, "\n### Hidden tests that did not pass\n\n")
		flaky := map[string]bool{}
		for _, t := range r.Tests {
			flaky[t.ID] = t.Outcome == report.OutcomeFlaky
		}
		for i, id := range r.Failed {
			line := "- " + code(report.EscapeText(id)) + "\n"
			if flaky[id] {
				line = "- " + code(report.EscapeText(id)) + " — flaky: failed, then passed when run again alone\n"
			}
			if len(line) > budget {
				fmt.Fprintf(&b, "- … and %d more\n", len(r.Failed)-i)
				break
			}
			budget -= len(line)
			b.WriteString(line)
		}
	}
	b.WriteString(tail.String())
	return truncate(b.String(), maxSummaryBytes)
}

// maxDetectorLines bounds the rows of each list in the detectors section
// (kinds of signal, kinds of evidence, touched tests, canary sightings), and
// detectorDetailBytes the room its example paths and listed paths may take,
// so that the section always fits; every list says its total.
const (
	maxDetectorLines    = 40
	detectorDetailBytes = 16 << 10
)

// writeDetectors writes the tamper signals and the runtime evidence
// grouped by reason with counts, strongest first, and the touched tests and
// canary sightings; each list with its total, every path escaped. Once the
// details are out of room, rows keep their counts and reasons and lose their
// examples, and lists say how many they left out.
func writeDetectors(b *strings.Builder, r *report.Report) {
	room := detectorDetailBytes
	details := func(es []string) string {
		s := examples(es)
		if len(s) > room {
			return "…"
		}
		room -= len(s)
		return s
	}
	if len(r.Evidence) > 0 {
		strong, weak := report.StrongSignals(r.Evidence), report.WeakSignals(r.Evidence)
		fmt.Fprintf(b, "\n**Runtime evidence**: %d strong, %d runtime signals (weak), strongest first\n\n| seen | strength | reason | e.g. |\n|---|---|---|---|\n", strong, weak)
		for i, e := range r.Evidence {
			if i == maxDetectorLines {
				fmt.Fprintf(b, "| … | | %d more kinds | |\n", len(r.Evidence)-i)
				break
			}
			fmt.Fprintf(b, "| %d | %s | %s | %s |\n", e.Count, e.Strength, cell(code(report.ShortText(e.Reason, 120))), details(e.Examples))
		}
	}
	if tw := r.Twins; tw != nil {
		if tw.NotRun != "" {
			fmt.Fprintf(b, "\n**Twins**: not run for this grade; the verdict stands on the other checks\n")
		} else {
			fmt.Fprintf(b, "\n**Twins**: %d of %d hidden tests ran beside a twin that a correct implementation fails (%d without one); %d passed beside their twin\n",
				tw.Twinned, tw.Of, tw.Untwinnable, len(tw.Contradictions))
			for i, id := range tw.Contradictions {
				line := fmt.Sprintf("- passed beside its twin: %s\n", code(report.ShortText(id, 120)))
				if i == maxDetectorLines || len(line) > room {
					fmt.Fprintf(b, "- … and %d more\n", len(tw.Contradictions)-i)
					break
				}
				room -= len(line)
				b.WriteString(line)
			}
		}
	}
	if len(r.TamperSignals) > 0 {
		groups := report.GroupTamperSignals(r.TamperSignals)
		fmt.Fprintf(b, "\n**%d tamper signals** of %d kinds, strongest first\n\n| files | reason | e.g. |\n|---|---|---|\n", len(r.TamperSignals), len(groups))
		for i, g := range groups {
			if i == maxDetectorLines {
				rest := 0
				for _, g := range groups[i:] {
					rest += g.Count
				}
				fmt.Fprintf(b, "| %d | %d more kinds | |\n", rest, len(groups)-i)
				break
			}
			fmt.Fprintf(b, "| %d | %s | %s |\n", g.Count, cell(code(g.Reason)), details(g.Examples))
		}
	}
	if len(r.TouchedTests) > 0 || r.Contaminated {
		b.WriteString("\n")
	}
	for i, p := range r.TouchedTests {
		line := fmt.Sprintf("- touched test: %s\n", code(report.ShortText(p, 120)))
		if i == maxDetectorLines || len(line) > room {
			fmt.Fprintf(b, "- … and %d more touched tests (%d in total)\n", len(r.TouchedTests)-i, len(r.TouchedTests))
			break
		}
		room -= len(line)
		b.WriteString(line)
	}
	for i, s := range r.Contamination {
		line := fmt.Sprintf("- contaminated: canary of hidden %s seen in %s\n", code(report.ShortText(s.HiddenFile, 120)), code(report.ShortText(s.Where, 120)))
		if i == maxDetectorLines || len(line) > room {
			fmt.Fprintf(b, "- … and %d more canary sightings (%d in total)\n", len(r.Contamination)-i, len(r.Contamination))
			break
		}
		room -= len(line)
		b.WriteString(line)
	}
}

// examples renders the examples of a group as code spans in a table cell,
// each escaped and shortened.
func examples(es []string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = code(report.ShortText(e, 120))
	}
	return cell(strings.Join(parts, ", "))
}

// cell makes s safe inside a table cell: a pipe, even in a code span, would
// end the cell and let a path forge the next one.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// code renders s as an inline code span: nothing in it is markdown, HTML,
// a mention or a link. Newlines become spaces; the fence is longer than
// any run of backticks in s.
func code(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || longest > 0 {
		s = " " + s + " "
	}
	return fence + s + fence
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

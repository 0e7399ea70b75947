package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// maxSummaryBytes keeps the summary under GitHub's limit, which it counts
// in characters and in bytes.
const maxSummaryBytes = MaxSummary - 1024

// Graded is what a check run says about one grade.
type Graded struct {
	Report *Report
	// Version and Digest are the approved version graded against.
	Version int
	Digest  string
	// Criteria maps criterion ids to the test ids that cover them.
	Criteria map[string][]string
	// DetailsURL is the grade's page on the approval card.
	DetailsURL string
}

// conclusions maps verdicts to check run conclusions: only a pass
// succeeds; an invalid task needs the requester.
var conclusions = map[Verdict]string{
	VerdictPass:         ConclusionSuccess,
	VerdictFail:         ConclusionFailure,
	VerdictError:        ConclusionFailure,
	VerdictTampered:     ConclusionFailure,
	VerdictContaminated: ConclusionFailure,
	VerdictInvalidTask:  ConclusionActionRequired,
}

// CompletedCheckRun renders a finished grade. It shows counts, failing
// test ids, criteria, detectors and digests; never a test body or the
// runner's output.
func CompletedCheckRun(headSHA string, g Graded) CheckRun {
	r := g.Report
	conclusion, ok := conclusions[r.Verdict]
	if !ok {
		conclusion = ConclusionFailure
	}
	return CheckRun{
		Name:       CheckRunName,
		HeadSHA:    headSHA,
		Status:     StatusCompleted,
		Conclusion: conclusion,
		Title:      Title(r),
		Summary:    Summary(g),
		DetailsURL: g.DetailsURL,
		Actions:    []CheckAction{RegradeAction},
	}
}

// Title is "12/14 hidden tests passed · trust: isolated", prefixed with the
// verdict when it is not a plain pass or fail.
func Title(r *Report) string {
	t := fmt.Sprintf("%d/%d hidden tests passed · trust: %s", r.Counts.Passed, r.Counts.Total, r.Trust)
	if r.Verdict != VerdictPass && r.Verdict != VerdictFail {
		t = string(r.Verdict) + " · " + t
	}
	return t
}

// Summary is the check run's markdown body, under GitHub's size limit.
func Summary(g Graded) string {
	r := g.Report
	var b strings.Builder
	fmt.Fprintf(&b, "**Verdict: %s** · trust: %s · graded against hidden tests v%d\n\n", r.Verdict, r.Trust, g.Version)
	for _, reason := range r.Reasons {
		fmt.Fprintf(&b, "- %s\n", code(reason))
	}
	c := r.Counts
	fmt.Fprintf(&b, "\n| passed | failed | errors | skipped | total |\n|---|---|---|---|---|\n| %d | %d | %d | %d | %d |\n", c.Passed, c.Failed, c.Errors, c.Skipped, c.Total)

	tail := &strings.Builder{}
	if len(g.Criteria) > 0 {
		outcome := map[string]Outcome{}
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
				if outcome[t] == OutcomePassed {
					passed++
				}
			}
			fmt.Fprintf(tail, "| %s | %d/%d |\n", code(id), passed, len(g.Criteria[id]))
		}
	}
	if len(r.TamperSignals) > 0 || len(r.TouchedTests) > 0 || r.Contaminated {
		fmt.Fprintf(tail, "\n### Detectors\n\n")
		for _, s := range r.TamperSignals {
			fmt.Fprintf(tail, "- tamper signal: %s — %s\n", code(s.Path), code(s.Reason))
		}
		for _, p := range r.TouchedTests {
			fmt.Fprintf(tail, "- touched test: %s\n", code(p))
		}
		for _, s := range r.Contamination {
			fmt.Fprintf(tail, "- contaminated: canary of hidden %s seen in %s\n", code(s.HiddenFile), code(s.Where))
		}
	}
	fmt.Fprintf(tail, "\n### Reproduce\n\n- tests: %s (v%d)\n- tree: %s\n- grader image: %s\n", code(g.Digest), g.Version, code(r.RepoDigest), code(r.Image))

	// The failing ids come last in the budget: the rest always fits.
	if len(r.Failed) > 0 {
		budget := maxSummaryBytes - b.Len() - tail.Len() - 200
		fmt.Fprintf(&b, "\n### Hidden tests that did not pass\n\n")
		for i, id := range r.Failed {
			line := "- " + code(id) + "\n"
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

package pipeline

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/report"
)

func TestAgentTexts(t *testing.T) {
	rep := &report.Report{Verdict: report.VerdictFail, Trust: report.TrustIsolated, Counts: report.Counts{Total: 5, Passed: 3, Failed: 1, Errors: 1},
		Failed: []string{"tests/test_a.py::test_x", "tests/test_a.py::test_y"}, Output: "E assert secret"}
	fb := ImplementerFeedback(rep)
	if !strings.Contains(fb, "3 of 5 hidden tests passed (1 failed, 1 errors, 0 skipped)") || !strings.Contains(fb, "- tests/test_a.py::test_y\n") ||
		strings.Contains(fb, "secret") {
		t.Errorf("feedback %q", fb)
	}
	for _, c := range []struct {
		v            report.Verdict
		round, limit int
		want         bool
	}{{report.VerdictFail, 1, 3, true}, {report.VerdictFail, 3, 3, false}, {report.VerdictPass, 1, 3, false},
		{report.VerdictContaminated, 1, 3, false}, {report.VerdictTampered, 1, 3, false}, {report.VerdictError, 1, 3, false}} {
		if got := NextRound(c.v, c.round, c.limit); got != c.want {
			t.Errorf("NextRound(%s, %d, %d) = %v", c.v, c.round, c.limit, got)
		}
	}
	cr := CompletedCheckRun("abc", Graded{Report: rep, Version: 2, Warnings: []string{EgressGitHubWarning, IndependenceWarning("codex", "codex")}})
	if !strings.Contains(cr.Summary, "> **Warning:** agent egress could reach GitHub: results may not be valid\n") ||
		!strings.Contains(cr.Summary, "the writer and the implementer are the same harness (codex)") {
		t.Errorf("summary lacks the warnings:\n%s", cr.Summary)
	}
	if b := AgentPullBody(4, "codex", 2); !strings.HasPrefix(b, "Fixes #4\n") {
		t.Errorf("pull request body %q", b)
	}
}

package pipeline

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
)

// The regression check run says counts and ids, never the output, fails
// only on a regression, and is neutral when the suite could not be
// compared.
func TestRegressionsCheckRun(t *testing.T) {
	base := report.Regressions{Base: report.SuiteCounts{Total: 5, Passed: 4, Failed: 1}, PR: report.SuiteCounts{Total: 5, Passed: 3, Failed: 2},
		Output: "SECRET-OUTPUT", Budget: 600, FailingOnBase: 1}
	for _, c := range []struct {
		name       string
		edit       func(*report.Regressions)
		conclusion string
		says       []string
	}{
		{"pass", func(r *report.Regressions) { r.Verdict = report.VerdictPass; r.Flaky = []string{"t.py::flaky"} },
			checkrun.ConclusionSuccess, []string{"no regressions", "t.py::flaky", "1 test failed on the base already"}},
		{"fail", func(r *report.Regressions) {
			r.Verdict, r.Regressed, r.RegressedCount = report.VerdictFail, []string{"t.py::a", "t.py::b"}, 2
			r.Reasons = []string{"2 test(s) that passed on the base fail with the pull request"}
		}, checkrun.ConclusionFailure, []string{"2 regressions: 2 of the 4 tests", "`t.py::a`", "`t.py::b`"}},
		{"changed", func(r *report.Regressions) { r.Verdict, r.Changed = report.VerdictPass, []string{"t.py::rewritten"} },
			checkrun.ConclusionNeutral, []string{"no regressions; 1 test this pull request changed fails in its base form", "`t.py::rewritten`"}},
		{"error", func(r *report.Regressions) {
			r.Verdict, r.Reasons = report.VerdictError, []string{"the suite could not be compared: on the base, pytest collected no tests"}
		}, checkrun.ConclusionNeutral, []string{"could not be compared", "pytest collected no tests"}},
	} {
		r := base
		c.edit(&r)
		cr := RegressionsCheckRun("abc", 9, &r, "https://x/grades/9")
		text := cr.Title + "\n" + cr.Summary
		if cr.Conclusion != c.conclusion || cr.Name != RegressionsCheckRunName || cr.ExternalID != "regressions:9" || cr.Status != checkrun.StatusCompleted {
			t.Errorf("%s: %+v", c.name, cr)
		}
		for _, s := range c.says {
			if !strings.Contains(text, s) {
				t.Errorf("%s: check run lacks %q:\n%s", c.name, s, text)
			}
		}
		if strings.Contains(text, "SECRET-OUTPUT") {
			t.Errorf("%s: the check run quotes the output", c.name)
		}
	}
}

package pipeline

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
)

// TestRefusedCheckRun: with the uid split required, a grade that ran
// without it proven is refused (action_required, the reason, no verdict
// nor counts); a proven grade, an error that ran nothing, and any grade
// when nothing requires the split are posted as graded.
func TestRefusedCheckRun(t *testing.T) {
	proven := &report.Report{Verdict: report.VerdictPass, Trust: report.TrustIsolated, Counts: report.Counts{Passed: 10, Total: 10},
		Isolation: report.Isolation{UIDSplit: true, UID: 123456, GID: 123456}, Runtime: "runsc"}
	bestEffort := &report.Report{Verdict: report.VerdictPass, Trust: report.TrustBestEffort, Counts: report.Counts{Passed: 10, Total: 10},
		Isolation: report.Isolation{UID: 0, CapEff: "00000000a80425fb"}, Runtime: "runc"}
	errored := &report.Report{Verdict: report.VerdictError, Trust: report.TrustIsolated}
	const by = "grading.uid_split: required"
	tests := []struct {
		name       string
		r          *report.Report
		requiredBy string
		refused    bool
	}{
		{"best_effort, required", bestEffort, by, true},
		{"best_effort, not required", bestEffort, "", false},
		{"proven, required", proven, by, false},
		{"error, required", errored, by, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr, refused := RefusedCheckRun("abc", Graded{Report: tt.r}, tt.requiredBy)
			if refused != tt.refused {
				t.Fatalf("refused %v; want %v", refused, tt.refused)
			}
			if !refused {
				return
			}
			if cr.Conclusion != checkrun.ConclusionActionRequired || cr.Status != checkrun.StatusCompleted {
				t.Errorf("conclusion %s %s; want completed action_required", cr.Status, cr.Conclusion)
			}
			for _, want := range []string{"uid split was not proven", by} {
				if !strings.Contains(cr.Title, want) {
					t.Errorf("title %q does not say %q", cr.Title, want)
				}
			}
			for _, want := range []string{"refused", by, "best_effort", "uid 0", "00000000a80425fb", "No verdict is posted"} {
				if !strings.Contains(cr.Summary, want) {
					t.Errorf("summary does not say %q:\n%s", want, cr.Summary)
				}
			}
			if strings.Contains(cr.Title, "10/10") || strings.Contains(cr.Summary, "10/10") || strings.Contains(cr.Title, "pass") {
				t.Errorf("a refused grade shows its result: %q\n%s", cr.Title, cr.Summary)
			}
		})
	}
}

// TestParseRepoConfigUIDSplit: grading.uid_split is allowed by default,
// required when asked, and anything else is an error naming both values.
func TestParseRepoConfigUIDSplit(t *testing.T) {
	c, err := ParseRepoConfig(nil)
	if err != nil || c.UIDSplit != UIDSplitAllowed {
		t.Errorf("default: %q, %v", c.UIDSplit, err)
	}
	c, err = ParseRepoConfig([]byte("grading:\n  uid_split: required\n"))
	if err != nil || c.UIDSplit != UIDSplitRequired {
		t.Errorf("required: %q, %v", c.UIDSplit, err)
	}
	_, err = ParseRepoConfig([]byte("grading:\n  uid_split: yes\n"))
	if err == nil || !strings.Contains(err.Error(), "grading.uid_split") || !strings.Contains(err.Error(), "required") || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("bad value: %v", err)
	}
}

// TestParseRepoConfigSplit: grading.split is off by default, on when asked
// (YAML's bare on and off are words here, not booleans), and anything
// else is an error naming both values.
func TestParseRepoConfigSplit(t *testing.T) {
	c, err := ParseRepoConfig(nil)
	if err != nil || c.Split != SplitOff {
		t.Errorf("default: %q, %v", c.Split, err)
	}
	for _, v := range []string{"on", `"on"`} {
		c, err = ParseRepoConfig([]byte("grading:\n  split: " + v + "\n"))
		if err != nil || c.Split != SplitOn {
			t.Errorf("split: %s: %q, %v", v, c.Split, err)
		}
	}
	_, err = ParseRepoConfig([]byte("grading:\n  split: true\n"))
	if err == nil || !strings.Contains(err.Error(), "grading.split") || !strings.Contains(err.Error(), `"on"`) && !strings.Contains(err.Error(), " on ") {
		t.Errorf("bad value: %v", err)
	}
}

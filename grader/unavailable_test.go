package grader

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/report"
)

// TestWantOfUnavailable: a fail or invalid_task whose run could not import
// a module becomes an error naming it when the environment lacks a
// package; a pass, a tampered grade, and a failure with every import
// found keep their verdict, and each says what was not installed.
func TestWantOfUnavailable(t *testing.T) {
	const missing = "E   ModuleNotFoundError: No module named 'nosuchpkg'\n"
	for _, tt := range []struct {
		verdict report.Verdict
		output  string
		want    report.Verdict
	}{
		{report.VerdictFail, missing, report.VerdictError},
		{report.VerdictInvalidTask, missing, report.VerdictError},
		{report.VerdictFail, "assert 1 == 2\n", report.VerdictFail},
		{report.VerdictPass, missing, report.VerdictPass},
		{report.VerdictTampered, missing, report.VerdictTampered},
	} {
		rep := &report.Report{Verdict: tt.verdict, Output: tt.output, Environment: &report.Environment{Unavailable: []string{"nosuchpkg>=1: the package index has no distribution of it"}}}
		wantOfUnavailable(rep)
		joined := strings.Join(rep.Reasons, "\n")
		if rep.Verdict != tt.want || !strings.Contains(joined, "nosuchpkg>=1: the package index has no distribution of it") ||
			(tt.want == report.VerdictError) != strings.Contains(joined, `for want of the import "nosuchpkg"`) {
			t.Errorf("%s with %q: %s %q, want %s", tt.verdict, tt.output, rep.Verdict, rep.Reasons, tt.want)
		}
	}
	rep := &report.Report{Verdict: report.VerdictFail, Output: missing, Environment: &report.Environment{}}
	if wantOfUnavailable(rep); rep.Verdict != report.VerdictFail || len(rep.Reasons) != 0 {
		t.Errorf("an environment with everything installed: %s %q", rep.Verdict, rep.Reasons)
	}
}

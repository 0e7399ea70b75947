package evaluate

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

func TestEvidenceMergeKeepsCounts(t *testing.T) {
	var set EvidenceSet
	set.Merge(report.Evidence{Reason: "frame_access", Strength: report.StrengthWeak, Count: 30, Examples: []string{"a", "b"}})
	set.Merge(report.Evidence{Reason: "frame_access", Strength: report.StrengthWeak, Count: 1, Examples: []string{"c"}})
	got := set.List()
	want := []report.Evidence{{Reason: "frame_access", Strength: report.StrengthWeak, Count: 31, Examples: []string{"a", "b", "c"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
}

func TestPytestSummary(t *testing.T) {
	tests := []struct {
		out  string
		want map[string]int
		ok   bool
	}{
		{"== 1 failed, 11 passed in 0.03s ==\n", map[string]int{"failed": 1, "passed": 11}, true},
		{"x\n=== 2 errors, 1 warning in 61.20s (0:01:01) ===\n", map[string]int{"error": 2, "warning": 1}, true},
		{"=== no tests ran in 0.01s ===\n", map[string]int{}, true},
		{"== 1 passed in 0.1s ==\nprinted later\n== 3 passed in 0.1s ==\n", map[string]int{"passed": 3}, true},
		{"no summary\n", nil, false},
	}
	for _, tt := range tests {
		got, ok := pytestSummary([]byte(tt.out))
		if ok != tt.ok || !cmp.Equal(got, tt.want) {
			t.Errorf("pytestSummary(%q) = %v, %v; want %v, %v", tt.out, got, ok, tt.want, tt.ok)
		}
	}
}

// TestNoStartRecord: a runner whose plugin never reported is strong
// evidence when it ended by itself, but a run killed at its deadline before
// pytest loaded the plugin was starved of time (a loaded machine), not
// bent: no code of the tree runs before the plugin's start record, so
// that is a weak signal and the grade stays what the run's outcome says.
func TestNoStartRecord(t *testing.T) {
	tests := []struct {
		name string
		res  wrapper.Result
		want report.Evidence
	}{
		{
			name: "ended by itself",
			res:  wrapper.Result{Runner: []string{"pytest"}, ExitCode: 0},
			want: report.Evidence{Reason: ReasonChannelClosed, Strength: report.StrengthStrong, Count: 1, Examples: []string{"the runner's plugin sent no start record"}},
		},
		{
			name: "killed at its deadline",
			res:  wrapper.Result{Runner: []string{"pytest"}, ExitCode: -1, TimedOut: true},
			want: report.Evidence{Reason: ReasonNotStarted, Strength: report.StrengthWeak, Count: 1, Examples: []string{"the run was killed at its deadline before the runner's plugin started"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var set EvidenceSet
			runtimeEvidence(&tt.res, &set)
			got := set.List()
			if !slices.ContainsFunc(got, func(e report.Evidence) bool { return cmp.Equal(e, tt.want) }) {
				t.Errorf("evidence %+v, want it to hold %+v", got, tt.want)
			}
			for _, e := range got {
				if tt.res.TimedOut && e.Strength == report.StrengthStrong {
					t.Errorf("strong evidence of a starved run: %+v", e)
				}
			}
		})
	}
}

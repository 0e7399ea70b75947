package evaluate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
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

package grader

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// withEvidence gives r what an honest run's plugin reports about it: a
// start record, no events, and an end record that matches r's exit status
// and report, with pytest's summary line to match.
func withEvidence(r *wrapper.Result) *wrapper.Result {
	cases, _ := parseJUnit(r.JUnit)
	tallies := map[string]int{}
	for _, c := range cases {
		switch c.Outcome {
		case report.OutcomePassed:
			tallies["passed"]++
		case report.OutcomeFailed:
			tallies["failed"]++
		case report.OutcomeSkipped:
			tallies["skipped"]++
		default:
			tallies["error"]++
		}
	}
	sum := sha256.Sum256(r.JUnit)
	digest := hex.EncodeToString(sum[:])
	r.Evidence = &wrapper.RuntimeEvidence{
		Started:      true,
		Ends:         1,
		End:          &wrapper.EndRecord{ExitStatus: r.ExitCode, Cases: len(cases), Tallies: tallies, ReportSHA256: digest, ReportBytes: int64(len(r.JUnit))},
		ReportSHA256: digest,
		ReportBytes:  int64(len(r.JUnit)),
	}
	var parts []string
	for _, k := range summaryCategories {
		if n := tallies[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no tests ran"}
	}
	r.Output = []byte("===== " + strings.Join(parts, ", ") + " in 0.10s =====\n")
	return r
}

func TestRuntimeEvidence(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *wrapper.Result)
		want map[string]report.Strength // reason -> strength
	}{
		{"honest", func(r *wrapper.Result) {}, map[string]report.Strength{}},
		{"no channel", func(r *wrapper.Result) { r.Evidence = nil }, map[string]report.Strength{ReasonChannelClosed: report.StrengthStrong}},
		{"no start", func(r *wrapper.Result) { r.Evidence.Started = false }, map[string]report.Strength{ReasonChannelClosed: report.StrengthStrong}},
		{"garbled", func(r *wrapper.Result) { r.Evidence.Garbled = []string{"line 3 has a wrong signature"} }, map[string]report.Strength{ReasonChannelGarbled: report.StrengthStrong}},
		{"tripwire", func(r *wrapper.Result) { r.Evidence.TripwireBytes = 512 }, map[string]report.Strength{ReasonReportForgery: report.StrengthStrong}},
		{"overflow", func(r *wrapper.Result) { r.Evidence.Overflow = true }, map[string]report.Strength{ReasonChannelOverflow: report.StrengthWeak}},
		{"no end, exit 1", func(r *wrapper.Result) { r.Evidence.End, r.Evidence.Ends = nil, 0 }, map[string]report.Strength{ReasonEndMissing: report.StrengthStrong}},
		{"no end, exec'd", func(r *wrapper.Result) {
			r.Evidence.End, r.Evidence.Ends = nil, 0
			r.Evidence.Events = []wrapper.EvidenceEvent{{Reason: "exec", Strength: "weak", Count: 1, Examples: []string{"os.exec /bin/false"}}}
		}, map[string]report.Strength{ReasonEndMissing: report.StrengthStrong, "exec": report.StrengthWeak}},
		{"no end, killed at the deadline", func(r *wrapper.Result) {
			r.Evidence.End, r.Evidence.Ends, r.TimedOut, r.Signal = nil, 0, true, "signal 9 (killed)"
		}, map[string]report.Strength{}},
		{"no end, usage error", func(r *wrapper.Result) { r.Evidence.End, r.Evidence.Ends, r.ExitCode = nil, 0, 4 }, map[string]report.Strength{}},
		{"two ends", func(r *wrapper.Result) { r.Evidence.Ends = 2 }, map[string]report.Strength{ReasonEndDuplicated: report.StrengthStrong}},
		{"end from a forked child", func(r *wrapper.Result) { r.Evidence.Ends, r.Evidence.ForkedEnds = 2, 1 }, map[string]report.Strength{ReasonForkedSession: report.StrengthStrong}},
		{"exit status changed", func(r *wrapper.Result) { r.ExitCode = 0 }, map[string]report.Strength{ReasonExitMismatch: report.StrengthStrong}},
		{"report written to", func(r *wrapper.Result) {
			r.Evidence.ReportSHA256 = strings.Repeat("0", 64)
			r.Evidence.ReportBytes += 10
		}, map[string]report.Strength{ReasonReportMismatch: report.StrengthStrong}},
		{"case count", func(r *wrapper.Result) { r.Evidence.End.Cases++ }, map[string]report.Strength{ReasonReportMismatch: report.StrengthStrong}},
		{"summary forged", func(r *wrapper.Result) {
			r.Output = append(r.Output, "===== 5 passed in 0.01s =====\n"...)
		}, map[string]report.Strength{ReasonSummaryMismatch: report.StrengthStrong}},
		{"summary missing", func(r *wrapper.Result) { r.Output = []byte("nothing\n") }, map[string]report.Strength{ReasonSummaryMissing: report.StrengthWeak}},
		{"summary cut with the output", func(r *wrapper.Result) { r.Output, r.OutputTruncated = []byte("x"), true }, map[string]report.Strength{}},
		{"plugin events", func(r *wrapper.Result) {
			r.Evidence.Events = []wrapper.EvidenceEvent{
				{Reason: "identity_mismatch", Strength: "strong", Count: 2, Examples: []string{"_pytest.python.Function.runtest at collection"}},
				{Reason: "frame_access", Strength: "weak", Count: 30, Examples: []string{"a", "b"}},
			}
		}, map[string]report.Strength{"identity_mismatch": report.StrengthStrong, "frame_access": report.StrengthWeak}},
		{"command job", func(r *wrapper.Result) { r.Runner = nil; r.Evidence = nil }, map[string]report.Strength{}},
		{"hidden directory writable", func(r *wrapper.Result) { unsealedHidden(r) }, map[string]report.Strength{ReasonDirsUnsealed: report.StrengthWeak}},
		{"no directory states", func(r *wrapper.Result) { r.Isolation.Dirs, r.Isolation.DirsSealed = nil, false }, map[string]report.Strength{ReasonDirsUnsealed: report.StrengthWeak}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gradeRun("test_b")
			tt.edit(r)
			var set evidenceSet
			runtimeEvidence(r, &set)
			got := map[string]report.Strength{}
			for _, e := range set.list() {
				got[e.Reason] = e.Strength
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvidenceMergeKeepsCounts(t *testing.T) {
	var set evidenceSet
	set.merge(report.Evidence{Reason: "frame_access", Strength: report.StrengthWeak, Count: 30, Examples: []string{"a", "b"}})
	set.merge(report.Evidence{Reason: "frame_access", Strength: report.StrengthWeak, Count: 1, Examples: []string{"c"}})
	got := set.list()
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

package grader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

func TestRuntimeEvidence(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *wrapper.Result)
		want map[string]report.Strength // reason -> strength
	}{
		{"honest", func(r *wrapper.Result) {}, map[string]report.Strength{}},
		{"no channel", func(r *wrapper.Result) { r.Evidence = nil }, map[string]report.Strength{evaluate.ReasonChannelClosed: report.StrengthStrong}},
		{"no start", func(r *wrapper.Result) { r.Evidence.Started = false }, map[string]report.Strength{evaluate.ReasonChannelClosed: report.StrengthStrong}},
		{"garbled", func(r *wrapper.Result) { r.Evidence.Garbled = []string{"line 3 has a wrong signature"} }, map[string]report.Strength{evaluate.ReasonChannelGarbled: report.StrengthStrong}},
		{"tripwire", func(r *wrapper.Result) { r.Evidence.TripwireBytes = 512 }, map[string]report.Strength{evaluate.ReasonReportForgery: report.StrengthStrong}},
		{"overflow", func(r *wrapper.Result) { r.Evidence.Overflow = true }, map[string]report.Strength{evaluate.ReasonChannelOverflow: report.StrengthWeak}},
		{"no end, exit 1", func(r *wrapper.Result) { r.Evidence.End, r.Evidence.Ends = nil, 0 }, map[string]report.Strength{evaluate.ReasonEndMissing: report.StrengthStrong}},
		{"no end, exec'd", func(r *wrapper.Result) {
			r.Evidence.End, r.Evidence.Ends = nil, 0
			r.Evidence.Events = []wrapper.EvidenceEvent{{Reason: "exec", Strength: "weak", Count: 1, Examples: []string{"os.exec /bin/false"}}}
		}, map[string]report.Strength{evaluate.ReasonEndMissing: report.StrengthStrong, "exec": report.StrengthWeak}},
		{"no end, killed at the deadline", func(r *wrapper.Result) {
			r.Evidence.End, r.Evidence.Ends, r.TimedOut, r.Signal = nil, 0, true, "signal 9 (killed)"
		}, map[string]report.Strength{}},
		{"no end, usage error", func(r *wrapper.Result) { r.Evidence.End, r.Evidence.Ends, r.ExitCode = nil, 0, 4 }, map[string]report.Strength{}},
		{"two ends", func(r *wrapper.Result) { r.Evidence.Ends = 2 }, map[string]report.Strength{evaluate.ReasonEndDuplicated: report.StrengthStrong}},
		{"end from a forked child", func(r *wrapper.Result) { r.Evidence.Ends, r.Evidence.ForkedEnds = 2, 1 }, map[string]report.Strength{evaluate.ReasonForkedSession: report.StrengthStrong}},
		{"exit status changed", func(r *wrapper.Result) { r.ExitCode = 0 }, map[string]report.Strength{evaluate.ReasonExitMismatch: report.StrengthStrong}},
		{"report written to", func(r *wrapper.Result) {
			r.Evidence.ReportSHA256 = strings.Repeat("0", 64)
			r.Evidence.ReportBytes += 10
		}, map[string]report.Strength{evaluate.ReasonReportMismatch: report.StrengthStrong}},
		{"case count", func(r *wrapper.Result) { r.Evidence.End.Cases++ }, map[string]report.Strength{evaluate.ReasonReportMismatch: report.StrengthStrong}},
		{"summary forged", func(r *wrapper.Result) {
			r.Output = append(r.Output, "===== 5 passed in 0.01s =====\n"...)
		}, map[string]report.Strength{evaluate.ReasonSummaryMismatch: report.StrengthStrong}},
		{"summary missing", func(r *wrapper.Result) { r.Output = []byte("nothing\n") }, map[string]report.Strength{evaluate.ReasonSummaryMissing: report.StrengthWeak}},
		{"summary cut with the output", func(r *wrapper.Result) { r.Output, r.OutputTruncated = []byte("x"), true }, map[string]report.Strength{}},
		{"plugin events", func(r *wrapper.Result) {
			r.Evidence.Events = []wrapper.EvidenceEvent{
				{Reason: "identity_mismatch", Strength: "strong", Count: 2, Examples: []string{"_pytest.python.Function.runtest at collection"}},
				{Reason: "frame_access", Strength: "weak", Count: 30, Examples: []string{"a", "b"}},
			}
		}, map[string]report.Strength{"identity_mismatch": report.StrengthStrong, "frame_access": report.StrengthWeak}},
		{"command job", func(r *wrapper.Result) { r.Runner = nil; r.Evidence = nil }, map[string]report.Strength{}},
		{"hidden directory writable", func(r *wrapper.Result) { unsealedHidden(r) }, map[string]report.Strength{evaluate.ReasonDirsUnsealed: report.StrengthWeak}},
		{"no directory states", func(r *wrapper.Result) { r.Isolation.Dirs, r.Isolation.DirsSealed = nil, false }, map[string]report.Strength{evaluate.ReasonDirsUnsealed: report.StrengthWeak}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gradeRun("test_b")
			tt.edit(r)
			got := map[string]report.Strength{}
			for _, e := range evaluate.Pytest(r).Evidence {
				got[e.Reason] = e.Strength
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

package evaluate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/report"
)

func TestEvidenceSetGroupsStrongestFirst(t *testing.T) {
	var s EvidenceSet
	for range 3 {
		s.add("frame_access", report.StrengthWeak, "sys._getframe")
	}
	s.add("fork", report.StrengthWeak, "")
	s.add("twin_contradiction", report.StrengthStrong, "tests/test_a.py::test_x")
	s.add("identity_mismatch", report.StrengthWeak, "pytest.raises")
	s.add("identity_mismatch", report.StrengthStrong, "Function.runtest")
	for i := range 10 {
		s.add("many", report.StrengthWeak, string(rune('a'+i)))
	}
	got := s.List()
	want := []report.Evidence{
		{Reason: "identity_mismatch", Strength: report.StrengthStrong, Count: 2, Examples: []string{"pytest.raises", "Function.runtest"}},
		{Reason: "twin_contradiction", Strength: report.StrengthStrong, Count: 1, Examples: []string{"tests/test_a.py::test_x"}},
		{Reason: "many", Strength: report.StrengthWeak, Count: 10, Examples: []string{"a", "b", "c", "d", "e"}},
		{Reason: "frame_access", Strength: report.StrengthWeak, Count: 3, Examples: []string{"sys._getframe"}},
		{Reason: "fork", Strength: report.StrengthWeak, Count: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if n := report.WeakSignals(got); n != 14 {
		t.Errorf("weak signals %d, want 14", n)
	}
}

func TestEscapeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tests/test_a.py::test_x[1-2]", "tests/test_a.py::test_x[1-2]"},
		{"naïve/日本.py", "naïve/日本.py"},
		{"evil\u202etxt.py", `evil\u202etxt.py`},
		{"a\nb\tc\x1b[31m", `a\nb\tc\x1b[31m`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"bad\xffbyte", `bad\ufffdbyte`},
	} {
		if got := report.EscapeText(tc.in); got != tc.want {
			t.Errorf("EscapeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJudge(t *testing.T) {
	strong := []report.Evidence{{Reason: "twin_contradiction", Strength: report.StrengthStrong, Count: 1, Examples: []string{"t::x"}}}
	weak := []report.Evidence{{Reason: "frame_access", Strength: report.StrengthWeak, Count: 2}}
	sighting := []report.CanarySighting{{HiddenFile: "tests/test_a.py", Where: "output"}}
	for _, tc := range []struct {
		name    string
		in      VerdictInputs
		verdict report.Verdict
		reasons []string
	}{
		{"pass", VerdictInputs{Total: 3, AllPassed: true}, report.VerdictPass, []string{"all 3 hidden tests passed"}},
		{"fail", VerdictInputs{Total: 3, Failed: 1}, report.VerdictFail, []string{"1 of 3 hidden tests did not pass"}},
		{"weak evidence keeps a pass", VerdictInputs{Total: 3, AllPassed: true, Evidence: weak}, report.VerdictPass,
			[]string{"all 3 hidden tests passed", "runtime signals: 2"}},
		{"strong evidence turns a pass into tampered", VerdictInputs{Total: 3, AllPassed: true, Evidence: append(weak, strong...)}, report.VerdictTampered,
			[]string{"strong evidence: twin_contradiction (1×): t::x", "runtime signals: 2"}},
		{"strong evidence outranks contamination and errors", VerdictInputs{Evidence: strong, Contaminated: sighting, Problems: []string{"p"}}, report.VerdictTampered,
			[]string{"strong evidence: twin_contradiction (1×): t::x"}},
		{"sentinels and evidence both said", VerdictInputs{Tampered: []string{"a sentinel was bent"}, Evidence: strong}, report.VerdictTampered,
			[]string{"a sentinel was bent", "strong evidence: twin_contradiction (1×): t::x"}},
		{"an invalid task outranks everything", VerdictInputs{Invalid: []string{"passes on base"}, Evidence: strong}, report.VerdictInvalidTask,
			[]string{"passes on base"}},
		{"contamination", VerdictInputs{Contaminated: sighting, AllPassed: true, Total: 1}, report.VerdictContaminated,
			[]string{"the canary of tests/test_a.py appears in output"}},
		{"error", VerdictInputs{Problems: []string{"no report"}, AllPassed: true, Total: 1}, report.VerdictError, []string{"no report"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, reasons := Judge(tc.in)
			if v != tc.verdict {
				t.Errorf("verdict %s, want %s", v, tc.verdict)
			}
			if diff := cmp.Diff(tc.reasons, reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

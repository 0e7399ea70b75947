package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroupTamperSignals(t *testing.T) {
	var ss []TamperSignal
	for _, p := range []string{"a/conftest.py", "b/conftest.py", "c/conftest.py"} {
		ss = append(ss, TamperSignal{Path: p, Reason: "conftest.py can hook the test run"})
	}
	ss = append(ss,
		TamperSignal{Path: "x.py", Reason: "source mentions ctypes (can call into the C library)"},
		TamperSignal{Path: "tests/test_x.py", Reason: ReasonHiddenName},
		TamperSignal{Path: strings.Repeat("d/", 100) + "\u202ey.py", Reason: "source mentions ctypes (can call into the C library)"},
	)
	want := []SignalGroup{
		{Reason: ReasonHiddenName, Count: 1, Examples: []string{"tests/test_x.py"}},
		{Reason: "source mentions ctypes (can call into the C library)", Count: 2, Examples: []string{"x.py", "…" + (strings.Repeat("d/", 100) + `\u202ey.py`)[210-119:]}},
		{Reason: "conftest.py can hook the test run", Count: 3, Examples: []string{"a/conftest.py", "b/conftest.py", "c/conftest.py"}},
	}
	if diff := cmp.Diff(want, GroupTamperSignals(ss)); diff != "" {
		t.Errorf("GroupTamperSignals (-want +got):\n%s", diff)
	}
}

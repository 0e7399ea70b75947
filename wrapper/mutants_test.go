package wrapper

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSelectTests(t *testing.T) {
	expected := []ExpectedTest{
		{File: "t/test_a.py", Name: "test_one"},
		{File: "t/test_a.py", Name: "test_one_more"},
		{File: "t/test_b.py", Class: "TestB", Name: "test_two"},
	}
	tests := []struct {
		name        string
		sel         []string
		reverse     bool
		wantKept    []ExpectedTest
		wantTargets []string
	}{
		{name: "neither: the hidden directory", wantKept: expected},
		{
			name: "select by exact function id, not by prefix", sel: []string{"t/test_a.py::test_one", "t/test_b.py::TestB::test_two"},
			wantKept:    []ExpectedTest{expected[0], expected[2]},
			wantTargets: []string{"/hidden/t/test_a.py::test_split_pass", "/hidden/t/test_a.py::test_split_fail", "/hidden/t/test_a.py::test_one", "/hidden/t/test_b.py::TestB::test_two"},
		},
		{
			name: "reverse", reverse: true, wantKept: expected,
			wantTargets: []string{"/hidden/t/test_a.py::test_split_pass", "/hidden/t/test_a.py::test_split_fail", "/hidden/t/test_b.py::TestB::test_two", "/hidden/t/test_a.py::test_one_more", "/hidden/t/test_a.py::test_one"},
		},
		{
			name: "a selection of nothing known runs the sentinels only", sel: []string{"t/test_c.py::test_x"},
			wantTargets: []string{"/hidden/t/test_a.py::test_split_pass", "/hidden/t/test_a.py::test_split_fail"},
		},
	}
	// The sentinels sit inside a hidden module and run by their ids.
	sentinels := []Sentinel{{ClassName: "t.test_a", Name: "test_split_pass", MustPass: true}, {ClassName: "t.test_a", Name: "test_split_fail"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, targets := selectTests(slices.Clone(expected), sentinels, tt.sel, tt.reverse)
			if diff := cmp.Diff(tt.wantKept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTargets, targets); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

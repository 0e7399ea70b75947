package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader"
)

func TestVersionCheckTwinExclude(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check *VersionCheck
		want  []string
	}{
		{"no check", nil, nil},
		{"nothing learned", &VersionCheck{}, nil},
		{"twins the reference passed", &VersionCheck{Twins: &grader.Twins{InvalidTwins: []string{"t.py::test_a"}}}, []string{"t.py::test_a"}},
		{"flaky tests", &VersionCheck{Base: grader.BaseCheck{Flaky: []string{"t.py::test_b"}}}, []string{"t.py::test_b"}},
		{"both, once each", &VersionCheck{Twins: &grader.Twins{InvalidTwins: []string{"t.py::test_a", "t.py::test_b"}}, Base: grader.BaseCheck{Flaky: []string{"t.py::test_b", "t.py::test_c"}}},
			[]string{"t.py::test_a", "t.py::test_b", "t.py::test_c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.check.TwinExclude()); diff != "" {
				t.Errorf("TwinExclude (-want +got):\n%s", diff)
			}
		})
	}
}

package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
)

func TestVersionCheckTwinExclude(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check *VersionCheck
		want  []string
	}{
		{"no check", nil, nil},
		{"nothing learned", &VersionCheck{}, nil},
		{"twins the reference passed", &VersionCheck{Twins: &report.Twins{InvalidTwins: []string{"t.py::test_a"}}}, []string{"t.py::test_a"}},
		{"flaky tests", &VersionCheck{Base: report.BaseCheck{Flaky: []string{"t.py::test_b"}}}, []string{"t.py::test_b"}},
		{"both, once each", &VersionCheck{Twins: &report.Twins{InvalidTwins: []string{"t.py::test_a", "t.py::test_b"}}, Base: report.BaseCheck{Flaky: []string{"t.py::test_b", "t.py::test_c"}}},
			[]string{"t.py::test_a", "t.py::test_b", "t.py::test_c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.check.TwinExclude()); diff != "" {
				t.Errorf("TwinExclude (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionCheckSkipsAndBroken(t *testing.T) {
	c := &VersionCheck{Tests: []string{"t.py::a", "t.py::b", "t.py::c"},
		Base:      report.BaseCheck{Skipped: []string{"t.py::a", "t.py::b"}},
		Reference: &report.ReferenceCheck{AllPass: true, Skipped: []string{"t.py::a"}}}
	if diff := cmp.Diff([]string{"t.py::a"}, c.SkipsHere()); diff != "" {
		t.Errorf("SkipsHere (-want +got):\n%s (a test the reference runs is no skip of the environment)", diff)
	}
	if !c.Valid() {
		t.Errorf("skips alone block the version: %q", c.Problems())
	}
	c.Base.Broken = []string{"fixture 'load_file' not found (asked for in t.py on the base and on the tree under test): put it in the hidden conftest.py"}
	if c.Valid() || !strings.Contains(c.Blocks(), "fixture 'load_file' not found") {
		t.Errorf("a broken hidden test: valid %v, blocks %q", c.Valid(), c.Blocks())
	}
	if p := strings.Join(c.Problems(), "; "); strings.Contains(p, "load_file") {
		t.Errorf("problems, posted on the issue, name the fixture: %q", p)
	}
}

package test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// TestInPackageTests grades tests that live inside the library's package
// (testdata/honest/inpackage: numerals/tests beside numerals/__init__.py,
// as simplejson's simplejson/tests) in-process and split. The honest pull
// request passes and the base fails, never tampered: the hidden test module
// imports its helpers as numerals.tests._helpers, a name the tree's
// numerals package also answers for, and the hidden files must be what it
// gets. The attack of testdata/inpackage-shadow ships the tree's own
// numerals/tests/_helpers.py and test_from_roman.py at the hidden files'
// paths: neither runs, and the unwritten from_roman fails every hidden test.
func TestInPackageTests(t *testing.T) {
	g := testenv.Grading(t)
	dir := filepath.Join("testdata", "honest", "inpackage")
	load := func(p string) *tree.Tree {
		tr, err := tree.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	base, hidden := load(filepath.Join(dir, "base")), load(filepath.Join(dir, "hidden"))
	cases := []struct {
		name string
		repo *tree.Tree
		want report.Verdict
		// failed are the hidden tests that must not pass.
		failed []string
	}{
		{"pr", overlay(t, base, filepath.Join(dir, "pr")), report.VerdictPass, nil},
		{"base", base, report.VerdictFail, nil},
		{"shadow", overlay(t, base, filepath.Join("testdata", "inpackage-shadow")), report.VerdictFail, []string{
			"numerals/tests/test_from_roman.py::TestFromRoman::test_known",
			"numerals/tests/test_from_roman.py::TestFromRoman::test_rejects_non_numerals",
			"numerals/tests/test_from_roman.py::TestFromRoman::test_roundtrip",
			"numerals/tests/test_from_roman.py::test_plain_function",
		}},
	}
	for _, split := range []bool{false, true} {
		for _, c := range cases {
			name := c.name
			if split {
				name += "-split"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: c.repo, Hidden: hidden, Base: base, Timeout: 3 * time.Minute, Split: split})
				if err != nil {
					t.Fatalf("grade: %v", err)
				}
				checkReportInvariants(t, rep, hidden)
				if rep.Verdict != c.want {
					t.Errorf("verdict %s, want %s: %q\nevidence %+v\n%s", rep.Verdict, c.want, rep.Reasons, rep.Evidence, rep.Output)
				}
				for _, id := range c.failed {
					if !slices.Contains(rep.Failed, id) {
						t.Errorf("%s is not among the failed %v: the tree's file ran in its place", id, rep.Failed)
					}
				}
				if split && (rep.Trust != report.TrustSealed && rep.Trust != report.TrustSplit) {
					t.Errorf("trust %s graded split, want sealed or split", rep.Trust)
				}
				if !split && rep.Trust != report.TrustIsolated {
					t.Errorf("trust %s, want isolated", rep.Trust)
				}
				t.Logf("%s: %s, trust %s: %q", name, rep.Verdict, rep.Trust, rep.Reasons)
			})
		}
	}
	t.Cleanup(func() { testenv.CheckSandboxes(t) })
}

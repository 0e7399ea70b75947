package test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

const splitFallbackDir = "testdata/splitfallback"

// loadFallbackTree loads one tree of testdata/splitfallback.
func loadFallbackTree(t *testing.T, name string) *tree.Tree {
	t.Helper()
	tr, err := tree.Load(filepath.Join(splitFallbackDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestSplitFallback grades the per-test fallback of split grading: a test
// the split cannot run is graded in-process, and which tests those are is
// decided on the base's run, never the tree under test's.
//
// The hidden tests (testdata/splitfallback/hidden) hand the code under
// test a function in three tests and a traceback in the fourth. The split
// refuses a traceback whatever the tree does, so that test is graded
// in-process on every tree of this base.
//
//   - attack: a tree that asks each function of the tests for its
//     __globals__ (a refusal in every test under the split), and answers by
//     reading the expected value from the calling test's frame through a
//     caught exception's traceback (attacks-split/frame-from-traceback),
//     which in-process grading without twins does not catch. Were the
//     fallback decided on the tree's own run, every test would be graded
//     in-process: the in-process grade of the same tree, with the twins
//     the fallback does not run excluded, passes. Decided on the base
//     (plain-base, which asks the functions for nothing), only the
//     traceback test runs in-process; the others stay split, fail, and
//     the report says the split refused the tree there.
//   - honest: a library whose helper reads the tests' function's
//     __globals__, as six's do, base and fix alike (globals-base,
//     globals-fix). The base's run is refused the same: those tests are
//     graded in-process and pass; the grade passes with trust isolated
//     and each such test says why.
//
// Cost: five sandboxes of a four-test suite (about 10 CPU-seconds).
func TestSplitFallback(t *testing.T) {
	hidden := loadFallbackTree(t, "hidden")
	attack := loadFallbackTree(t, "attack")
	ids := []string{"tests/test_ops.py::test_map_upper", "tests/test_ops.py::test_map_len", "tests/test_ops.py::test_count_with_key", "tests/test_ops.py::test_frames_of_traceback"}

	t.Run("attack-in-process", func(t *testing.T) {
		t.Parallel()
		// What a fallback decided on the tree's own run would grade: every
		// test in-process, no twins. No base: it adds nothing here.
		rep := grade(t, grader.Request{Repo: attack, Hidden: hidden, TwinExclude: ids})
		if rep.Verdict != report.VerdictPass {
			t.Errorf("the attack graded in-process without twins: %s (%q), %d/%d passed; it beats that path, which this test shows, and must pass there",
				rep.Verdict, rep.Reasons, rep.Counts.Passed, rep.Counts.Total)
		}
		t.Logf("in-process, twins excluded: %s, trust %s, %d/%d passed", rep.Verdict, rep.Trust, rep.Counts.Passed, rep.Counts.Total)
	})
	t.Run("attack-split", func(t *testing.T) {
		t.Parallel()
		rep := grade(t, grader.Request{Repo: attack, Hidden: hidden, Base: loadFallbackTree(t, "plain-base"), Split: true})
		if rep.Verdict == report.VerdictPass {
			t.Fatalf("the attack passed split with the fallback: trust %s, %q", rep.Trust, rep.Reasons)
		}
		s := rep.Sealing
		if s == nil {
			t.Fatal("a split grade has no sealing")
		}
		var in, here []string
		for _, f := range s.InProcess {
			in = append(in, f.ID)
		}
		for _, f := range s.RefusedHere {
			here = append(here, f.ID)
		}
		if !slices.Equal(in, []string{"tests/test_ops.py::test_frames_of_traceback"}) {
			t.Errorf("graded in-process: %q, want the traceback test alone (the base needed it)", in)
		}
		slices.Sort(here)
		want := slices.Clone(ids[:3])
		slices.Sort(want)
		if !slices.Equal(here, want) {
			t.Errorf("refused only on the tree under test: %q, want %q", here, want)
		}
		line := report.SealingLine(s)
		if !strings.Contains(line, "neither the base nor the reference needed") || !strings.Contains(line, "`__globals__` of a function of the tests") {
			t.Errorf("the sealing line does not say the split refused the tree there: %s", line)
		}
		t.Logf("split with the fallback: %s (%q), trust %s, %d/%d passed; %s", rep.Verdict, rep.Reasons, rep.Trust, rep.Counts.Passed, rep.Counts.Total, line)
	})
	t.Run("honest-globals", func(t *testing.T) {
		t.Parallel()
		rep := grade(t, grader.Request{Repo: loadFallbackTree(t, "globals-fix"), Hidden: hidden, Base: loadFallbackTree(t, "globals-base"), Split: true})
		if rep.Verdict != report.VerdictPass || rep.Trust != report.TrustIsolated {
			t.Fatalf("an honest fix whose helper reads __globals__: %s, trust %s (%q), failed %v; want pass, isolated", rep.Verdict, rep.Trust, rep.Reasons, rep.Failed)
		}
		s := rep.Sealing
		why := map[string]string{}
		for _, f := range s.InProcess {
			why[f.ID] = strings.Join(f.Why, "; ")
		}
		for id, want := range map[string]string{
			ids[0]: "on the base, the code under test asked for `__globals__` of a function of the tests",
			ids[1]: "on the base, the code under test asked for `__globals__` of a function of the tests",
			ids[3]: "on the base, the tests handed the code under test a traceback of the tests",
		} {
			if !strings.Contains(why[id], want) {
				t.Errorf("%s graded in-process because %q, want %q", id, why[id], want)
			}
		}
		if len(s.InProcess) != 3 || s.InProcessPassing != 3 || s.Sealed != 1 || s.Passing != 4 || len(s.RefusedHere) != 0 {
			t.Errorf("sealing %+v: want 4 passing, 1 sealed, 3 graded in-process and passing, nothing refused here alone", s)
		}
		line := report.SealingLine(s)
		if !strings.HasPrefix(line, "1 of 4 passing tests were decided outside the code under test; 3 ran in its process.") {
			t.Errorf("sealing line: %s", line)
		}
		t.Logf("honest: %s, trust %s; %s", rep.Verdict, rep.Trust, line)
	})
}

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

const strengthDir = "testdata/strength"

// sampleVersion returns the sample's base tree, its reference patch and the
// reference tree.
func sampleVersion(t *testing.T) (base *tree.Tree, patch []byte, ref *tree.Tree) {
	t.Helper()
	base, err := tree.Load(filepath.Join(sampleDir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	if patch, err = os.ReadFile(filepath.Join(sampleDir, "reference.patch")); err != nil {
		t.Fatal(err)
	}
	if ref, err = tree.ApplyPatch(base, patch); err != nil {
		t.Fatal(err)
	}
	return base, patch, ref
}

// baseCheck grades a version as the service's base check does: the
// reference as the tree under test, against the base, with the strength
// checks.
func baseCheck(t *testing.T, hidden *tree.Tree, s grader.TestStrength) *report.Report {
	t.Helper()
	base, patch, ref := sampleVersion(t)
	began := time.Now()
	rep := grade(t, grader.Request{Repo: ref, Hidden: hidden, Base: base, Reference: patch, TestStrength: &s})
	m := rep.ReferenceCheck.Mutation
	t.Logf("base check %.1fs wall; mutation %+v", time.Since(began).Seconds(), m)
	return rep
}

func hasSurvivor(m *report.Mutation, file, change, after string) bool {
	return slices.ContainsFunc(m.Survivors, func(s report.Survivor) bool {
		return s.File == file && s.Change == change && strings.Contains(s.After, after)
	})
}

// TestMutationWeakSuiteShowsSurvivors: a suite that checks only part of
// what the reference does lets changes to the rest survive, and the card's
// sentence says how many; the sample's own suite kills those changes.
func TestMutationWeakSuiteShowsSurvivors(t *testing.T) {
	weak := baseCheck(t, testenv.SampleHidden(t, filepath.Join(strengthDir, "weak-hidden")), grader.TestStrength{})
	m := weak.ReferenceCheck.Mutation
	if m == nil || m.Error != "" || m.Mutants == 0 {
		t.Fatalf("mutation %+v", m)
	}
	for _, s := range m.Survivors {
		t.Logf("survivor %s:%d %s: %q -> %q", s.File, s.Line, s.Change, strings.TrimSpace(s.Before), strings.TrimSpace(s.After))
	}
	// top_words' ordering is never checked: dropping the minus survives.
	if !hasSurvivor(m, "wordstats/stats.py", "- removed", "key=lambda item: (item[1], item[0])") {
		t.Errorf("the change to top_words' ordering did not survive the weak suite: %+v", m.Survivors)
	}
	if !strings.HasPrefix(m.Summary(), fmt.Sprintf("these tests miss %d of %d changes", len(m.Survivors), m.Mutants)) {
		t.Errorf("summary %q", m.Summary())
	}

	strong := baseCheck(t, testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden")), grader.TestStrength{})
	sm := strong.ReferenceCheck.Mutation
	if sm == nil || sm.Mutants == 0 {
		t.Fatalf("mutation %+v", sm)
	}
	for _, s := range sm.Survivors {
		t.Logf("sample survivor %s:%d %s: %q -> %q", s.File, s.Line, s.Change, strings.TrimSpace(s.Before), strings.TrimSpace(s.After))
	}
	if hasSurvivor(sm, "wordstats/stats.py", "- removed", "key=lambda item: (item[1], item[0])") {
		t.Errorf("the sample suite missed the change to top_words' ordering")
	}
	if len(sm.Survivors) >= len(m.Survivors) {
		t.Errorf("the sample suite misses %d changes, the weak one %d: want fewer", len(sm.Survivors), len(m.Survivors))
	}
}

// TestMutationBounds: a reference patch of 200 added lines allows far more
// than 40 mutants; at most 40 are made, and the run keeps to about its
// budget.
func TestMutationBounds(t *testing.T) {
	var src, patch strings.Builder
	for i := range 100 {
		fmt.Fprintf(&src, "def f%d(x):\n    return x + %d if x > %d else x - 1\n", i, i, i)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(src.String(), "\n"), "\n")
	fmt.Fprintf(&patch, "diff --git a/big.py b/big.py\nnew file mode 100644\n--- /dev/null\n+++ b/big.py\n@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		patch.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	base := treeOf(t, map[string]string{"README.md": "big\n"})
	ref, err := tree.ApplyPatch(base, []byte(patch.String()))
	if err != nil {
		t.Fatal(err)
	}
	hidden := treeOf(t, map[string]string{"test_big.py": "import big\n\n\ndef test_f0():\n    assert big.f0(1) == 1\n\n\ndef test_f99():\n    assert big.f99(100) == 199\n"})
	const budget = 30 * time.Second
	began := time.Now()
	rep := grade(t, grader.Request{Repo: ref, Hidden: hidden, Base: base, Reference: []byte(patch.String()), Timeout: 3 * time.Minute,
		TestStrength: &grader.TestStrength{MutationBudget: budget}})
	wall := time.Since(began)
	m := rep.ReferenceCheck.Mutation
	if m == nil || m.Error != "" {
		t.Fatalf("mutation %+v", m)
	}
	t.Logf("200 added lines: %d candidates, %d judged, %d killed, %d survivors, %d invalid, %d not run, %.1fs in the longest mutation sandbox, %.1fs wall",
		m.Candidates, m.Mutants, m.Killed, len(m.Survivors), m.Invalid, m.NotRun, m.Seconds, wall.Seconds())
	if m.Candidates <= grader.DefaultMaxMutants {
		t.Errorf("only %d candidates from 200 added lines", m.Candidates)
	}
	if n := m.Mutants + m.Invalid + m.NotRun; n > grader.DefaultMaxMutants || n == 0 {
		t.Errorf("%d mutants made, want 1..%d", n, grader.DefaultMaxMutants)
	}
	// Budget, plus one mutant's run past it, plus container start.
	if m.Seconds > (budget + 30*time.Second).Seconds() {
		t.Errorf("mutation took %.1fs with a %s budget", m.Seconds, budget)
	}
	// The survivors are spread over the file: mutants are sampled over the
	// whole patch, not its first lines.
	if len(m.Survivors) == 0 || m.Survivors[len(m.Survivors)-1].Line < 100 {
		t.Errorf("survivors %+v: want some past line 100", m.Survivors)
	}
}

// flakyVersion is a base tree and the flaky hidden-test set.
func flakyVersion(t *testing.T) (*tree.Tree, *tree.Tree) {
	return treeOf(t, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n"}),
		testenv.SampleHidden(t, filepath.Join(strengthDir, "flaky-hidden"))
}

// TestBaseCheckFindsFlakyTests: a test that depends on a file another test
// leaves in /tmp, and tests that depend on a random value, are marked flaky
// by the base check; a steady test is not.
func TestBaseCheckFindsFlakyTests(t *testing.T) {
	base, hidden := flakyVersion(t)
	rep := grade(t, grader.Request{Repo: base, Hidden: hidden, Base: base, TestStrength: &grader.TestStrength{}})
	flaky := rep.BaseCheck.Flaky
	t.Logf("flaky: %v", flaky)
	if !slices.Contains(flaky, "tests/test_order.py::test_expects_a_clean_tmp") {
		t.Errorf("the order-dependent test is not flaky: %v", flaky)
	}
	coins := 0
	for _, id := range flaky {
		switch {
		case strings.HasPrefix(id, "tests/test_random.py::test_coin["):
			coins++
		case id == "tests/test_order.py::test_expects_a_clean_tmp":
		default:
			t.Errorf("%s marked flaky", id)
		}
	}
	// Each of 40 coins differs between two runs with probability 1/2.
	if coins == 0 {
		t.Errorf("no random test marked flaky")
	}
}

// TestGradeReportsFlakyNotFailed: a test that fails in the grade's run and
// passes when run again alone is reported flaky; the verdict stays fail and
// the reasons say why.
func TestGradeReportsFlakyNotFailed(t *testing.T) {
	repo, hidden := flakyVersion(t)
	hidden = treeOf(t, map[string]string{
		"tests/test_order.py":  string(mustLookup(t, hidden, "tests/test_order.py")),
		"tests/test_steady.py": string(mustLookup(t, hidden, "tests/test_steady.py")),
	})
	rep := grade(t, grader.Request{Repo: repo, Hidden: hidden})
	got := map[string]report.Outcome{}
	for _, tr := range rep.Tests {
		got[tr.ID] = tr.Outcome
	}
	if o := got["tests/test_order.py::test_expects_a_clean_tmp"]; o != report.OutcomeFlaky {
		t.Errorf("order-dependent test came out %s, want flaky (tests %v)", o, rep.Tests)
	}
	if rep.Verdict != report.VerdictFail || rep.Counts.Flaky != 1 || rep.Counts.Passed != 2 {
		t.Errorf("verdict %s, counts %+v, reasons %q", rep.Verdict, rep.Counts, rep.Reasons)
	}
	if !slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, "flaky") }) {
		t.Errorf("reasons %q do not say flaky", rep.Reasons)
	}
}

func mustLookup(t *testing.T, tr *tree.Tree, path string) []byte {
	t.Helper()
	f, ok := tr.Lookup(path)
	if !ok {
		t.Fatalf("%s not in tree", path)
	}
	return f.Data
}

// TestMutantThatDoesNotImportIsNotCounted: deleting a statement the module
// needs at import makes every hidden test error in collection; such a
// mutant says nothing about the tests and is not counted.
func TestMutantThatDoesNotImportIsNotCounted(t *testing.T) {
	const patch = "diff --git a/m.py b/m.py\nnew file mode 100644\n--- /dev/null\n+++ b/m.py\n@@ -0,0 +1,2 @@\n+A = 2\n+B = A * 3\n"
	base := treeOf(t, map[string]string{"README.md": "m\n"})
	ref, err := tree.ApplyPatch(base, []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	hidden := treeOf(t, map[string]string{"test_m.py": "from m import B\n\n\ndef test_b():\n    assert B == 6\n"})
	rep := grade(t, grader.Request{Repo: ref, Hidden: hidden, Base: base, Reference: []byte(patch), TestStrength: &grader.TestStrength{}})
	m := rep.ReferenceCheck.Mutation
	// A = 2 and B = A * 3 deleted: the import fails. 2 -> 1, 2 -> 3, * -> /,
	// 3 -> 2, 3 -> 4: killed.
	if m == nil || m.Invalid != 2 || m.Mutants != 5 || m.Killed != 5 {
		t.Errorf("mutation %+v, want 2 invalid and 5 killed of 5", m)
	}
}

// TestBaseCheckCost measures what the strength checks add to the base
// check of the sample version (reference as the tree under test, base,
// reference patch): wall time and sandbox runs, plain and with
// TestStrength, alternated. It asserts only what must hold for the figures
// to mean anything; run it with -v to read them:
//
//	TESTFIRST_REQUIRE_DOCKER=1 go test -count=1 -run TestBaseCheckCost -v ./test/
func TestBaseCheckCost(t *testing.T) {
	g := testenv.Grading(t)
	base, patch, ref := sampleVersion(t)
	hidden := testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden"))
	const runs = 3
	var plain, strong []time.Duration
	var plainRuns, strongRuns int
	for range runs {
		for _, s := range []*grader.TestStrength{nil, {}} {
			before := testenv.CheckSandboxes(t)
			began := time.Now()
			rep, err := g.Grader.Grade(t.Context(), grader.Request{Repo: ref, Hidden: hidden, Base: base, Reference: patch, TestStrength: s, Timeout: 3 * time.Minute})
			wall := time.Since(began)
			if err != nil {
				t.Fatal(err)
			}
			n := testenv.CheckSandboxes(t) - before
			if rep.Verdict != report.VerdictPass {
				t.Fatalf("base check: %s %q", rep.Verdict, rep.Reasons)
			}
			if s == nil {
				plain, plainRuns = append(plain, wall), n
				continue
			}
			strong, strongRuns = append(strong, wall), n
			if m := rep.ReferenceCheck.Mutation; m == nil || m.Mutants == 0 || len(rep.BaseCheck.Flaky) != 0 {
				t.Fatalf("mutation %+v, flaky %v", m, rep.BaseCheck.Flaky)
			} else {
				t.Logf("mutation: %d mutants, %d killed, longest mutation sandbox %.1fs", m.Mutants, m.Killed, m.Seconds)
			}
		}
	}
	median := func(ds []time.Duration) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	t.Logf("base check of the sample, median of %d: plain %.2fs in %d sandbox runs; with TestStrength %.2fs in %d sandbox runs (+%.2fs)",
		runs, median(plain).Seconds(), plainRuns, median(strong).Seconds(), strongRuns, (median(strong) - median(plain)).Seconds())
}

// TestMutantsOfOneLineAreToldApart: same-size mutants of one line, run one
// after another in one sandbox, each run their own code, never the bytecode
// of the one before (a .pyc's mtime+size check cannot tell two same-size
// edits within a second apart). "return 1" -> "return 0" is killed by the
// test; "return 1" -> "return 2", the next mutant, survives.
func TestMutantsOfOneLineAreToldApart(t *testing.T) {
	const patch = "diff --git a/m.py b/m.py\nnew file mode 100644\n--- /dev/null\n+++ b/m.py\n@@ -0,0 +1,2 @@\n+def f():\n+    return 1\n"
	base := treeOf(t, map[string]string{"README.md": "m\n"})
	ref, err := tree.ApplyPatch(base, []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	hidden := treeOf(t, map[string]string{"test_m.py": "from m import f\n\n\ndef test_f():\n    assert f() != 0\n"})
	rep := grade(t, grader.Request{Repo: ref, Hidden: hidden, Base: base, Reference: []byte(patch), TestStrength: &grader.TestStrength{MutationSandboxes: 1}})
	m := rep.ReferenceCheck.Mutation
	var got []string
	for _, s := range m.Survivors {
		got = append(got, s.Change)
	}
	if m.Mutants != 3 || m.Killed != 1 || !slices.Equal(got, []string{"1 -> 2", "statement deleted"}) {
		t.Errorf("mutation %+v: want 3 mutants, 1 -> 0 killed, 1 -> 2 and the deleted return surviving", m)
	}
}

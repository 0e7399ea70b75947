package grader

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader/evaluate/evaluatetest"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

func TestAddedLines(t *testing.T) {
	patch, err := os.ReadFile("../test/testdata/sample/reference.patch")
	if err != nil {
		t.Fatal(err)
	}
	got, err := AddedLines(patch)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{
		"README.md":             {13},
		"wordstats/__init__.py": {4, 8},
		"wordstats/stats.py":    {3, 4, 10, 18, 19, 20, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AddedLines (-want +got):\n%s", diff)
	}
}

// mutantShard is a mutation sandbox's result: each mutant's run fails the
// named tests (none: a survivor).
func mutantShard(candidates int, mutants map[int][]string) *wrapper.Result {
	r := gradeRun()
	r.JUnit, r.ExitCode = nil, 0
	r.MutantCandidates = candidates
	for i := 0; i < len(mutants); i++ {
		failing := mutants[i]
		run := wrapper.MutantRun{Index: i, File: "calc.py", Line: 1, Change: "'ref' -> 'x'", Before: "VERSION = 'ref'", After: "VERSION = 'x'"}
		g := gradeRun(failing...)
		run.JUnit, run.ExitCode = g.JUnit, g.ExitCode
		r.Mutants = append(r.Mutants, run)
	}
	return r
}

func TestMutationCounts(t *testing.T) {
	shard := mutantShard(7, map[int][]string{0: {"test_b"}, 1: nil, 2: {"test_a", "test_b"}})
	// Mutant 3 does not import: pytest reports the module, not its tests.
	shard.Mutants = append(shard.Mutants,
		wrapper.MutantRun{Index: 3, File: "calc.py", Line: 1, JUnit: evaluatetest.JUnitReport(evaluatetest.ErrorCase("", "tests.test_x"), evaluatetest.PassedCase("tests.test_y", "test_c"),
			evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass), evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail)), ExitCode: 1},
		wrapper.MutantRun{Index: 4, Skipped: "the mutation budget ran out"},
		wrapper.MutantRun{Index: 5, TimedOut: true, Signal: "killed"},
		// A report with a bent sentinel is no evidence either way.
		wrapper.MutantRun{Index: 6, JUnit: tamperedRun().JUnit},
	)
	var calls []wrapper.Job
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b"), "ref": gradeRun()}),
		answer: func(c sandboxCall) (sandbox.Result, bool) {
			if c.Job.Mode != wrapper.ModeMutants {
				return sandbox.Result{}, false
			}
			calls = append(calls, c.Job)
			if c.Job.Mutants.Shard == 0 {
				return stdout(shard), true
			}
			return stdout(mutantShard(7, nil)), true
		}}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(gradeReference), TestStrength: &TestStrength{}}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.ReferenceCheck.Mutation
	if m == nil {
		t.Fatal("no mutation in the reference check")
	}
	m.Seconds = 0
	want := &report.Mutation{Mutants: 4, Killed: 3, Candidates: 7, Invalid: 1, NotRun: 2, Sandboxes: DefaultMutationSandboxes,
		Survivors: []report.Survivor{{File: "calc.py", Line: 1, Change: "'ref' -> 'x'", Before: "VERSION = 'ref'", After: "VERSION = 'x'"}}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("mutation (-want +got):\n%s", diff)
	}
	if got := m.Summary(); got != "these tests miss 1 of 4 changes to the reference" {
		t.Errorf("summary %q", got)
	}
	var text strings.Builder
	if err := report.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mutation         these tests miss 1 of 4 changes to the reference (3 not counted: 1 did not import, 2 not run)",
		"survivors        calc.py:1 'ref' -> 'x': VERSION = 'x'"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if len(calls) != DefaultMutationSandboxes {
		t.Fatalf("%d mutation sandboxes, want %d", len(calls), DefaultMutationSandboxes)
	}
	for _, j := range calls {
		mj := j.Mutants
		if mj.Max != DefaultMaxMutants || mj.Shards != DefaultMutationSandboxes || mj.BudgetMillis != DefaultMutationBudget.Milliseconds() {
			t.Errorf("mutants job %+v", mj)
		}
		if diff := cmp.Diff(map[string][]int{"calc.py": {1}}, mj.Added); diff != "" {
			t.Errorf("added lines (-want +got):\n%s", diff)
		}
	}
}

func TestMutationNotMeasuredWhenTheReferenceFails(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b"), "ref": gradeRun("test_b")}),
		answer: func(c sandboxCall) (sandbox.Result, bool) {
			if c.Job.Mode == wrapper.ModeMutants {
				return stdout(mutantShard(1, map[int][]string{0: nil})), true
			}
			return sandbox.Result{}, false
		}}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(gradeReference), TestStrength: &TestStrength{}}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.ReferenceCheck.Mutation
	if m == nil || m.Mutants != 0 || !strings.Contains(m.Error, "reference patch does not pass") {
		t.Errorf("mutation %+v, want not measured", m)
	}
}

// TestGradeOfTheReferenceRunsItOnce: the base check of a version grades the reference
// as the tree under test; its run is the reference run, not a second one.
func TestGradeOfTheReferenceRunsItOnce(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"base": gradeRun("test_a", "test_b"), "ref": gradeRun()})}
	base := gradeRepo(t, "base")
	ref, err := tree.ApplyPatch(base, []byte(gradeReference))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), Request{Repo: ref, Hidden: gradeHidden(t), Base: base, Reference: []byte(gradeReference)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(untwinned(sb.Calls())); n != 2 {
		t.Errorf("%d sandbox runs besides twins, want 2 (base, reference)", n)
	}
	if rep.ReferenceCheck == nil || !rep.ReferenceCheck.AllPass {
		t.Errorf("reference check %+v", rep.ReferenceCheck)
	}
}

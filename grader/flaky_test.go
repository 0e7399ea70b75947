package grader

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/grader/evaluate/evaluatetest"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/wrapper"
)

// selectedRun is the wrapper's result of a run of just the tests named by
// their function ids, in which the tests named failing fail.
func selectedRun(ids []string, failing ...string) *wrapper.Result {
	r := gradeRun(failing...)
	var kept []wrapper.ExpectedTest
	for _, e := range gradeExpected {
		if slices.Contains(ids, evaluate.TestID(e.File, e.Class, e.Name)) {
			kept = append(kept, e)
		}
	}
	var cases []string
	for _, e := range kept {
		if slices.Contains(failing, e.Name) {
			cases = append(cases, evaluatetest.FailedCase(evaluate.JUnitClass(e.File, ""), e.Name))
		} else {
			cases = append(cases, evaluatetest.PassedCase(evaluate.JUnitClass(e.File, ""), e.Name))
		}
	}
	cases = append(cases, evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass), evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail))
	r.Expected, r.JUnit = kept, evaluatetest.JUnitReport(cases...)
	return r
}

// rerunSandbox answers a pr run that selects tests with rerun(selected).
func rerunSandbox(runs map[string]*wrapper.Result, rerun func(ids []string) *wrapper.Result) *fakeSandbox {
	return &fakeSandbox{results: results(runs), answer: func(c sandboxCall) (sandbox.Result, bool) {
		if c.Kind == "pr" && len(c.Job.Select) > 0 {
			return stdout(rerun(c.Job.Select)), true
		}
		return sandbox.Result{}, false
	}}
}

func TestGradeRerunsFailingTests(t *testing.T) {
	tests := []struct {
		name    string
		rerun   func(ids []string) *wrapper.Result
		want    report.Verdict
		outcome report.Outcome
		reasons []string
	}{
		{
			name:    "passes alone: flaky, still not a pass",
			rerun:   func(ids []string) *wrapper.Result { return selectedRun(ids) },
			want:    report.VerdictFail,
			outcome: report.OutcomeFlaky,
			reasons: []string{"1 of 3 hidden tests did not pass", "1 hidden test(s) failed, then passed when run again alone: flaky"},
		},
		{
			name:    "fails again: failed",
			rerun:   func(ids []string) *wrapper.Result { return selectedRun(ids, "test_b") },
			want:    report.VerdictFail,
			outcome: report.OutcomeFailed,
			reasons: []string{"1 of 3 hidden tests did not pass"},
		},
		{
			name: "a bent rerun: tampered",
			rerun: func(ids []string) *wrapper.Result {
				r := selectedRun(ids)
				r.JUnit = []byte(strings.Replace(string(r.JUnit), evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail), evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail), 1))
				r.ExitCode = 0
				return r
			},
			want:    report.VerdictTampered,
			outcome: report.OutcomeFailed,
			reasons: []string{"rerun of the failing tests: a sentinel test that must fail came out passed"},
		},
		{
			name: "a rerun that cannot be judged changes nothing",
			rerun: func(ids []string) *wrapper.Result {
				r := selectedRun(ids)
				r.JUnit = nil
				return r
			},
			want:    report.VerdictFail,
			outcome: report.OutcomeFailed,
			reasons: []string{"1 of 3 hidden tests did not pass", "the rerun of the failing tests could not be judged"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := rerunSandbox(map[string]*wrapper.Result{"pr": gradeRun("test_b")}, tt.rerun)
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tt.want {
				t.Errorf("verdict %s, want %s (%q)", rep.Verdict, tt.want, rep.Reasons)
			}
			evaluatetest.CheckMessages(t, "reasons", rep.Reasons, tt.reasons)
			var got report.Outcome
			for _, r := range rep.Tests {
				if r.ID == "tests/test_x.py::test_b" {
					got = r.Outcome
				}
			}
			if got != tt.outcome {
				t.Errorf("test_b came out %s, want %s", got, tt.outcome)
			}
			if tt.outcome == report.OutcomeFlaky && (rep.Counts.Flaky != 1 || rep.Counts.Passed != 2) {
				t.Errorf("counts %+v, want 2 passed and 1 flaky", rep.Counts)
			}
			var selects [][]string
			for _, c := range untwinned(sb.Calls()) {
				selects = append(selects, c.Job.Select)
			}
			if diff := cmp.Diff([][]string{nil, {"tests/test_x.py::test_b"}}, selects); diff != "" {
				t.Errorf("runs' selections (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGradeDoesNotRerunPassesOrErrors(t *testing.T) {
	for name, r := range map[string]*wrapper.Result{
		"pass":  gradeRun(),
		"error": func() *wrapper.Result { r := gradeRun("test_b"); r.JUnitTruncated = true; return r }(),
	} {
		t.Run(name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": r})}
			if _, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)}); err != nil {
				t.Fatal(err)
			}
			if n := len(untwinned(sb.Calls())); n != 1 {
				t.Errorf("%d sandbox runs besides twins, want 1", n)
			}
		})
	}
}

func TestBaseCheckMarksFlakyTests(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{
		"pr": gradeRun(), "base": gradeRun("test_a", "test_b"), "ref": gradeRun(),
	}), answer: func(c sandboxCall) (sandbox.Result, bool) {
		switch {
		case c.Kind == "base" && c.Job.Reverse:
			return stdout(gradeRun("test_a")), true // test_b passes this time
		case c.Kind == "ref" && c.Job.Reverse:
			return stdout(gradeRun("test_c")), true // and test_c fails
		}
		return sandbox.Result{}, false
	}}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(gradeReference),
		TestStrength: &TestStrength{MaxMutants: -1}}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"tests/test_x.py::test_b", "tests/test_y.py::test_c"}, rep.BaseCheck.Flaky); diff != "" {
		t.Errorf("flaky (-want +got):\n%s", diff)
	}
	var kinds []string
	for _, c := range untwinned(sb.Calls()) {
		kinds = append(kinds, c.Kind+map[bool]string{true: " reversed"}[c.Job.Reverse])
	}
	slices.Sort(kinds)
	if diff := cmp.Diff([]string{"base", "base reversed", "pr", "ref", "ref reversed"}, kinds); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if rep.ReferenceCheck.Mutation != nil {
		t.Errorf("mutation measured with MaxMutants < 0: %+v", rep.ReferenceCheck.Mutation)
	}
}

func TestGradeWithoutTestStrengthRunsEachTreeOnce(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b"), "ref": gradeRun()})}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(gradeReference)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(untwinned(sb.Calls())); n != 3 {
		t.Errorf("%d sandbox runs besides twins, want 3", n)
	}
	if len(rep.BaseCheck.Flaky) != 0 || rep.ReferenceCheck.Mutation != nil {
		t.Errorf("flaky %v, mutation %+v without TestStrength", rep.BaseCheck.Flaky, rep.ReferenceCheck.Mutation)
	}
}

// untwinned leaves out the twin runs, which every pytest grade adds (see
// twin_test.go): these tests count the runs the strength checks add.
func untwinned(calls []sandboxCall) []sandboxCall {
	var out []sandboxCall
	for _, c := range calls {
		if !c.Job.Twins {
			out = append(out, c)
		}
	}
	return out
}

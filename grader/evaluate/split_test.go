package evaluate

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// TestFallback: the refusals of a split run are named by the grade's ids
// (a placeholder-named case by its raw id too), with where they happened;
// the in-process run's outcomes replace the split ones for the tests of
// the set alone; sealing counts them apart; a bent in-process run makes
// the grade tampered and replaces nothing.
func TestFallback(t *testing.T) {
	base := &Evaluation{Tests: []report.TestResult{{ID: "t.py::a", Outcome: report.OutcomeFailed}, {ID: "t.py::b[x]", Outcome: report.OutcomeFailed}, {ID: "t.py::c", Outcome: report.OutcomePassed}},
		rawIDs: map[string]string{"t.py::b[x]": "t.py::b[raw]"}}
	res := &wrapper.Result{Split: &wrapper.SplitReport{Refused: map[string][]string{
		"t.py::a": {"the code under test asked for `__globals__` of a function of the tests"}, "t.py::b[raw]": {"w"}, "t.py::gone": {"v"}}}}
	set := Refusals(base, res, "on the base, ")
	want := map[string][]string{"t.py::a": {"on the base, the code under test asked for `__globals__` of a function of the tests"}, "t.py::b[x]": {"on the base, w"}}
	if diff := cmp.Diff(want, set); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	if got := FunctionsOf([]string{"t.py::a", "t.py::b[x]", "t.py::b[y]"}); !slices.Equal(got, []string{"t.py::a", "t.py::b"}) {
		t.Errorf("functions %q", got)
	}

	pr := &Evaluation{Tests: []report.TestResult{{ID: "t.py::a", Outcome: report.OutcomeFailed}, {ID: "t.py::b[x]", Outcome: report.OutcomeFailed}, {ID: "t.py::c", Outcome: report.OutcomePassed}}}
	fb := &Evaluation{Tests: []report.TestResult{{ID: "t.py::a", Outcome: report.OutcomePassed}, {ID: "t.py::b[x]", Outcome: report.OutcomePassed}, {ID: "t.py::c", Outcome: report.OutcomeFailed}}}
	got := ApplyFallback(pr, fb, set)
	if len(got) != 2 || got[0].ID != "t.py::a" || got[1].ID != "t.py::b[x]" {
		t.Errorf("graded in-process: %+v", got)
	}
	if pr.Tests[0].Outcome != report.OutcomePassed || pr.Tests[1].Outcome != report.OutcomePassed || pr.Tests[2].Outcome != report.OutcomePassed {
		t.Errorf("outcomes %+v: a and b from the in-process run, c kept from the split", pr.Tests)
	}
	splitRes := &wrapper.Result{Split: &wrapper.SplitReport{Tests: map[string]map[string]int{"t.py::a": {}, "t.py::b[x]": {}, "t.py::c": {}}}}
	s := Sealing(pr, splitRes, map[string]bool{"t.py::a": true, "t.py::b[x]": true})
	if s.Passing != 3 || s.Sealed != 1 || s.InProcessPassing != 2 {
		t.Errorf("sealing %+v: want 3 passing, 1 sealed, 2 in-process", s)
	}

	pr = &Evaluation{Tests: []report.TestResult{{ID: "t.py::a", Outcome: report.OutcomeFailed}}}
	bent := &Evaluation{Tests: []report.TestResult{{ID: "t.py::a", Outcome: report.OutcomePassed}}, Tampered: []string{"a sentinel test that must fail came out passed: the runner was bent"}}
	if got := ApplyFallback(pr, bent, set); got != nil || pr.Tests[0].Outcome != report.OutcomeFailed || len(pr.Tampered) != 1 {
		t.Errorf("a bent in-process run: applied %+v, outcome %s, tampered %q", got, pr.Tests[0].Outcome, pr.Tampered)
	}
}

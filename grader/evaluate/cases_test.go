package evaluate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/wrapper"
)

func junitOf(cases ...string) []byte {
	var b strings.Builder
	b.WriteString("<testsuites><testsuite>")
	for _, c := range cases {
		cls, name, _ := strings.Cut(c, "|")
		b.WriteString(`<testcase classname="` + cls + `" name="` + name + `"/>`)
	}
	b.WriteString("</testsuite></testsuites>")
	return []byte(b.String())
}

// TestListedCasesMissing: a runner that reports only some of a test's
// listed cases (the passing ones, say) is caught.
func TestListedCasesMissing(t *testing.T) {
	expected := []wrapper.ExpectedTest{{File: "test_a.py", Name: "test_x", Cases: []string{"1", "2", "3"}}}
	res := &wrapper.Result{Expected: expected, JUnit: junitOf("test_a|test_x[1]", "test_a|test_x[3]")}
	ev := &Evaluation{}
	checkListedCases(ev, res)
	if len(ev.Problems) != 1 || !strings.Contains(ev.Problems[0], "1 listed parametrized case(s) of 1 hidden test(s) missing") {
		t.Errorf("problems %q, want one about the missing case", ev.Problems)
	}
	ev = &Evaluation{}
	res.JUnit = junitOf("test_a|test_x[1]", "test_a|test_x[2]", "test_a|test_x[3]")
	checkListedCases(ev, res)
	if len(ev.Problems) != 0 {
		t.Errorf("problems %q for a full report", ev.Problems)
	}
}

// TestListedCasesNumbered: a case reported under a number keeps its
// listing's number whatever order the runner reports the cases in.
func TestListedCasesNumbered(t *testing.T) {
	expected := []wrapper.ExpectedTest{{File: "test_a.py", Name: "test_x", Cases: []string{"ok", "\\xe9", "caf\\xe9"}}}
	for _, order := range [][]string{{"ok", "\\xe9", "caf\\xe9"}, {"caf\\xe9", "ok", "\\xe9"}} {
		var cases []string
		for _, c := range order {
			cases = append(cases, "test_a|test_x["+c+"]")
		}
		res := &wrapper.Result{Expected: expected, JUnit: junitOf(cases...)}
		ev := evaluatePytest(res)
		checkListedCases(ev, res)
		var ids []string
		for _, r := range ev.Tests {
			ids = append(ids, r.ID)
		}
		want := []string{"test_a.py::test_x[case-2]", "test_a.py::test_x[case-3]", "test_a.py::test_x[ok]"}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Errorf("order %q: ids (-want +got):\n%s", order, diff)
		}
	}
	names := CaseNames(expected)
	want := map[string]string{"test_a.py::test_x[case-2]": "test_a.py::test_x[\\xe9]", "test_a.py::test_x[case-3]": "test_a.py::test_x[caf\\xe9]"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("CaseNames (-want +got):\n%s", diff)
	}
}

// TestListedCasesStackedEmpty: the cases of an empty string stacked on
// another parametrization ("-fg", as pytest names them and the listing
// lists them) are held like any other: the honest report is clean, a
// report that drops them or renames them to "fg" is caught.
func TestListedCasesStackedEmpty(t *testing.T) {
	listed := []string{"-fg", "-bg", "-1-fg", "-1-bg", "value9-fg", "value9-bg"}
	expected := []wrapper.ExpectedTest{{File: "tests/test_style.py", Name: "test_styling_invalid_color", Cases: listed}}
	report := func(cases ...string) *wrapper.Result {
		var js []string
		for _, c := range cases {
			js = append(js, "tests.test_style|test_styling_invalid_color["+c+"]")
		}
		return &wrapper.Result{Expected: expected, JUnit: junitOf(js...)}
	}
	ev := &Evaluation{}
	checkListedCases(ev, report(listed...))
	if len(ev.Problems) != 0 {
		t.Errorf("problems %q for the honest report", ev.Problems)
	}
	for _, bent := range [][]string{
		{"-1-fg", "-1-bg", "value9-fg", "value9-bg"},
		{"fg", "bg", "-1-fg", "-1-bg", "value9-fg", "value9-bg"},
		{"-fg", "-1-fg", "-1-bg", "value9-fg", "value9-bg", "value9-bg"},
	} {
		ev := &Evaluation{}
		checkListedCases(ev, report(bent...))
		if len(ev.Problems) != 1 || !strings.Contains(ev.Problems[0], "missing from the runner's report") {
			t.Errorf("report %q: problems %q, want one about the missing cases", bent, ev.Problems)
		}
	}
}

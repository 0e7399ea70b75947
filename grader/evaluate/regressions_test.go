package evaluate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
)

// A JUnit report as pytest 7 writes it (junit_family=xunit1) for a suite
// with a package of tests, a class, a parametrized case whose value has a
// dot, a module that fails to collect and a teardown that errors after a
// pass.
const suiteJUnit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="2" failures="1" skipped="1" tests="7">
<testcase classname="tests.test_core" name="test_add" file="tests/test_core.py" line="3" time="0.001"/>
<testcase classname="tests.test_core.TestSlug" name="test_dots[a.b]" file="tests/test_core.py" line="9" time="0.001"/>
<testcase classname="tests.test_core.TestSlug" name="test_fail" file="tests/test_core.py" line="12" time="0.001"><failure message="assert 1 == 2">x</failure></testcase>
<testcase classname="tests.test_core.TestSlug" name="test_skip" file="tests/test_core.py" line="15" time="0.000"><skipped type="pytest.skip" message="no">x</skipped></testcase>
<testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">ImportError</error></testcase>
<testcase classname="test_top" name="test_top" file="test_top.py" line="1" time="0.001"/>
<testcase classname="test_top" name="test_teardown" file="test_top.py" line="4" time="0.001"/>
<testcase classname="test_top" name="test_teardown" file="test_top.py" line="4" time="0.001"><error message="failed on teardown">x</error></testcase>
</testsuite></testsuites>`

func TestSuiteOutcomesNamesNodeIDs(t *testing.T) {
	cases, err := ParseJUnit([]byte(suiteJUnit))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{"tests/test_core.py": true, "tests/test_broken.py": true, "test_top.py": true}
	got := SuiteOutcomes(cases, func(p string) bool { return files[p] })
	want := map[string]report.Outcome{
		"tests/test_core.py::test_add":                 report.OutcomePassed,
		"tests/test_core.py::TestSlug::test_dots[a.b]": report.OutcomePassed,
		"tests/test_core.py::TestSlug::test_fail":      report.OutcomeFailed,
		"tests/test_core.py::TestSlug::test_skip":      report.OutcomeSkipped,
		"tests/test_broken.py":                         report.OutcomeError,
		"test_top.py::test_top":                        report.OutcomePassed,
		"test_top.py::test_teardown":                   report.OutcomeError,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	// A module no file explains (a rootdir below the tree's root) keeps
	// its dotted name, the same on both runs.
	got = SuiteOutcomes(cases[:1], func(string) bool { return false })
	if _, ok := got["tests.test_core::test_add"]; !ok || len(got) != 1 {
		t.Errorf("without the tree's files: %v", got)
	}
}

func TestCompareSuite(t *testing.T) {
	P, F, E, S := report.OutcomePassed, report.OutcomeFailed, report.OutcomeError, report.OutcomeSkipped
	base := map[string]report.Outcome{
		"a.py::kept":       P,
		"a.py::broken":     P,
		"a.py::errors":     P,
		"a.py::gone":       P,
		"a.py::was_failed": F,
		"a.py::fixed":      E,
		"a.py::skipped":    S,
		"a.py::flaky":      P,
	}
	pr := map[string]report.Outcome{
		"a.py::kept":       P,
		"a.py::broken":     F,
		"a.py::errors":     E,
		"a.py::was_failed": F,
		"a.py::fixed":      P,
		"a.py::skipped":    F, // skipped on the base: not the pull request's
		"a.py::flaky":      F,
		"a.py::new":        F, // not a test of the base's run
	}
	c := CompareSuite(base, pr)
	want := SuiteChange{
		Regressed:     []string{"a.py::broken", "a.py::errors", "a.py::flaky", "a.py::gone"},
		FailingOnBase: []string{"a.py::fixed", "a.py::was_failed"},
		Fixed:         []string{"a.py::fixed"},
		Missing:       []string{"a.py::gone"},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Fatalf("change (-want +got):\n%s", diff)
	}
	flaky := SplitFlaky(&c, map[string]report.Outcome{"a.py::flaky": P, "a.py::broken": F, "a.py::gone": P})
	if diff := cmp.Diff([]string{"a.py::flaky"}, flaky); diff != "" {
		t.Errorf("flaky (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a.py::broken", "a.py::errors", "a.py::gone"}, c.Regressed); diff != "" {
		t.Errorf("regressed after the rerun (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a.py::broken", "tests/b.py"}, RerunArgs([]string{"a.py::broken", "tests.b::x", "tests/b.py"})); diff != "" {
		t.Errorf("rerun args (-want +got):\n%s", diff)
	}
}

// SplitChanged keeps the order of both lists and moves only what the
// predicate names.
func TestSplitChanged(t *testing.T) {
	c := SuiteChange{Regressed: []string{"a.py::x", "b.py::y", "a.py::z"}}
	changed := SplitChanged(&c, func(id string) bool { return strings.HasPrefix(id, "a.py") })
	if diff := cmp.Diff([]string{"a.py::x", "a.py::z"}, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b.py::y"}, c.Regressed); diff != "" {
		t.Errorf("still regressed (-want +got):\n%s", diff)
	}
}

package evaluate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// checkListedCases holds a pytest run to the parametrized cases the
// listing knew ahead from literal parametrize arguments: a hidden test
// with some cases reported and a listed case missing means the runner
// dropped it (a bent runner that reports only the cases that pass). It
// also numbers the cases whose ids are not reported as they are
// ("name[case-K]") by their place in the listing, so a case keeps its
// number across grades whatever order the runner reports it in; see
// CaseNames for what each number stands for.
//
// A test whose cases were all left unreported is the evaluation's
// concern (its module failed to import, or the test is missing): this
// adds nothing there.
func checkListedCases(ev *Evaluation, res *wrapper.Result) {
	if len(res.JUnit) == 0 {
		return
	}
	cases, err := ParseJUnit(res.JUnit)
	if err != nil {
		return
	}
	reported := map[string][]string{} // JUnit key -> reported names, in order
	for _, c := range cases {
		key := c.ClassName + "::" + baseName(c.Name)
		if !slices.Contains(reported[key], c.Name) {
			reported[key] = append(reported[key], c.Name)
		}
	}
	renamed := map[string]string{}
	missingTests, missingCases := 0, 0
	example := ""
	for _, e := range res.Expected {
		if len(e.Cases) == 0 {
			continue
		}
		names := reported[JUnitClass(e.File, e.Class)+"::"+e.Name]
		if len(names) == 0 {
			continue
		}
		id := TestID(e.File, e.Class, e.Name)
		missing := 0
		for _, c := range e.Cases {
			if !slices.Contains(names, e.Name+"["+c+"]") {
				missing++
			}
		}
		if missing > 0 {
			missingTests++
			missingCases += missing
			if example == "" {
				example = id
			}
		}
		// The Evaluation numbered the cases it could not report as they
		// are by their place in the report: renumber by the listing.
		for i, n := range names {
			if i >= maxCasesPerTest {
				break
			}
			from := TestID(e.File, e.Class, reportedName(e.Name, n, i))
			if k := slices.Index(e.Cases, strings.TrimSuffix(strings.TrimPrefix(n, e.Name+"["), "]")); k >= 0 && strings.HasSuffix(from, fmt.Sprintf("[case-%d]", i+1)) {
				renamed[from] = TestID(e.File, e.Class, fmt.Sprintf("%s[case-%d]", e.Name, k+1))
			}
		}
	}
	if len(renamed) > 0 {
		for i := range ev.Tests {
			if to, ok := renamed[ev.Tests[i].ID]; ok {
				ev.Tests[i].ID = to
			}
		}
		for _, rs := range ev.cases {
			for i := range rs {
				if to, ok := renamed[rs[i].ID]; ok {
					rs[i].ID = to
				}
			}
		}
		slices.SortFunc(ev.Tests, func(a, b report.TestResult) int { return strings.Compare(a.ID, b.ID) })
	}
	if missingTests > 0 {
		ev.problemf("%d listed parametrized case(s) of %d hidden test(s) missing from the runner's report, e.g. of %s", missingCases, missingTests, example)
	}
}

// CaseNames maps the ids of hidden test cases that are reported under a
// number ("tests/test_x.py::test_y[case-3]", their real parametrization
// being outside the characters an id may carry to the implementer) to
// their real ids, for the requester. The numbers are the cases' places in
// the listing of the hidden files, the same in every grade of them.
func CaseNames(expected []wrapper.ExpectedTest) map[string]string {
	out := map[string]string{}
	for _, e := range expected {
		for k, c := range e.Cases {
			real := e.Name + "[" + c + "]"
			if shown := reportedName(e.Name, real, k); shown != real {
				out[TestID(e.File, e.Class, shown)] = TestID(e.File, e.Class, real)
			}
		}
	}
	return out
}

package report

import "testing"

func TestSealingLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    *Sealing
		want string
	}{
		{"in-process", nil, ""},
		{"none passed", &Sealing{}, "No hidden test passed, so none was decided by the code under test."},
		{"one", &Sealing{Passing: 1, Sealed: 1}, "The passing test was decided outside the code under test."},
		{"all", &Sealing{Passing: 42, Sealed: 42}, "All 42 passing tests were decided outside the code under test."},
		{"some", &Sealing{Passing: 42, Sealed: 41, Decided: []DecidedTest{{ID: "tests/test_p.py::test_parse", By: []string{"__eq__ of ParseResults"}}}},
			"41 of 42 passing tests were decided outside the code under test; 1 had the code under test's own say: tests/test_p.py::test_parse (__eq__ of ParseResults)."},
		{"many", &Sealing{Passing: 5, Sealed: 1, Decided: []DecidedTest{{ID: "a", By: []string{"x"}}, {ID: "b", By: []string{"x"}}, {ID: "c", By: []string{"x", "y"}}, {ID: "d", By: []string{"x"}}}},
			"1 of 5 passing tests were decided outside the code under test; 4 had the code under test's own say: a (x); b (x); c (x, y); and 1 more."},
		{"fallback", &Sealing{Passing: 4, Sealed: 1, InProcessPassing: 3, InProcess: []FallbackTest{
			{ID: "t::a", Why: []string{"on the base, the code under test asked for `__globals__` of a function of the tests"}},
			{ID: "t::b", Why: []string{"on the base, x"}}, {ID: "t::c", Why: []string{"on the base, y"}}, {ID: "t::d", Why: []string{"on the base, z"}}}},
			"1 of 4 passing tests were decided outside the code under test; 3 ran in its process. 4 hidden test(s) were graded in-process, in the code under test's own process, " +
				"because the split could not run them on the base or reference tree (3 of them passed): t::a (on the base, the code under test asked for `__globals__` of a function of the tests); " +
				"t::b (on the base, x); t::c (on the base, y); and 1 more."},
		{"fallback and decided", &Sealing{Passing: 3, Sealed: 1, InProcessPassing: 1, InProcess: []FallbackTest{{ID: "t::a", Why: []string{"w"}}},
			Decided: []DecidedTest{{ID: "t::b", By: []string{"__eq__ of P"}}}},
			"1 of 3 passing tests were decided outside the code under test, 1 ran in its process; 1 had the code under test's own say: t::b (__eq__ of P). " +
				"1 hidden test(s) were graded in-process, in the code under test's own process, because the split could not run them on the base or reference tree (1 of them passed): t::a (w)."},
		{"refused here", &Sealing{Passing: 0, RefusedHere: []FallbackTest{{ID: "t::a", Why: []string{"the code under test asked for `__name__` of a function of the tests"}}}},
			"No hidden test passed, so none was decided by the code under test. The split refused the code under test something in 1 test(s) that neither the base nor the reference needed; " +
				"they kept their split outcome: t::a (the code under test asked for `__name__` of a function of the tests)."},
	} {
		if got := SealingLine(tt.s); got != tt.want {
			t.Errorf("%s: SealingLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

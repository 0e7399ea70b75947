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
	} {
		if got := SealingLine(tt.s); got != tt.want {
			t.Errorf("%s: SealingLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

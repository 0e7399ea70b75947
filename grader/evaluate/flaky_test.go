package evaluate

import "testing"

func TestFunctionID(t *testing.T) {
	for in, want := range map[string]string{
		"t.py::test_a":                     "t.py::test_a",
		"t.py::test_a[1-2]":                "t.py::test_a",
		"d/t.py::TestX::test_b[x]":         "d/t.py::TestX::test_b",
		"d/t.py::TestX::test_b":            "d/t.py::TestX::test_b",
		"t.py::test_c[case-3]":             "t.py::test_c",
		"t.py::test_cast[a::int]":          "t.py::test_cast",
		"d/t.py::TestX::test_d[a::b-c::d]": "d/t.py::TestX::test_d",
	} {
		if got := functionID(in); got != want {
			t.Errorf("functionID(%q) = %q, want %q", in, got, want)
		}
	}
}

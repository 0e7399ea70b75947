package wrapper

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCollectedTests(t *testing.T) {
	out := "test_a.py::test_x[1-2]\ntest_a.py::test_x[3-4]\ntest_a.py::test_plain\ntest_a.py::Areas::test_unit\n" +
		"sub/test_b.py::TestOuter::TestInner::test_y[a]\n/etc/test_c.py::test_z\nERROR sub/test_d.py\n" +
		"=========== 1 error in 0.1s ===========\n"
	ids, errs := parseCollected(out)
	if errs != 1 || len(ids) != 6 {
		t.Fatalf("parseCollected: %q, %d errors", ids, errs)
	}
	expected := []ExpectedTest{
		{File: "test_a.py", Name: "test_x", CasesUnknown: true},
		{File: "test_a.py", Name: "test_plain"},
	}
	got := CollectedTests(expected, ids)
	want := []ExpectedTest{
		{File: "test_a.py", Name: "test_x", Cases: []string{"1-2", "3-4"}},
		{File: "test_a.py", Class: "Areas", Name: "test_unit"},
		{File: "sub/test_b.py", Class: "TestOuter.TestInner", Name: "test_y", Cases: []string{"a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CollectedTests (-want +got):\n%s", diff)
	}
	twin := mergeCollected(slices.Clone(expected), got, false)
	wantTwin := []ExpectedTest{
		{File: "test_a.py", Name: "test_x", CasesUnknown: true},
		{File: "test_a.py", Name: "test_plain"},
		{File: "test_a.py", Class: "Areas", Name: "test_unit"},
		{File: "sub/test_b.py", Class: "TestOuter.TestInner", Name: "test_y", CasesUnknown: true},
	}
	if diff := cmp.Diff(wantTwin, twin); diff != "" {
		t.Errorf("mergeCollected for a twin run (-want +got):\n%s", diff)
	}
	merged := mergeCollected(expected, got, true)
	wantMerged := []ExpectedTest{
		{File: "test_a.py", Name: "test_x", Cases: []string{"1-2", "3-4"}},
		{File: "test_a.py", Name: "test_plain"},
		{File: "test_a.py", Class: "Areas", Name: "test_unit"},
		{File: "sub/test_b.py", Class: "TestOuter.TestInner", Name: "test_y", Cases: []string{"a"}},
	}
	if diff := cmp.Diff(wantMerged, merged); diff != "" {
		t.Errorf("mergeCollected (-want +got):\n%s", diff)
	}
}

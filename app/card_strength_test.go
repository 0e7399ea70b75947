package app

import (
	"html"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/store"
)

// TestCardLeadsWithMutation: a version whose base check measured the
// tests' strength leads with how many changes to the reference they miss,
// shows each survivor as a diff and lists the flaky tests, all above the
// criteria.
func TestCardLeadsWithMutation(t *testing.T) {
	f := newCardFixture(t, "")
	b := f.signIn(t, requester)
	v, err := f.store.Push(t.Context(), f.st, store.Draft{Files: hiddenFiles, Criteria: writerCriteria, Author: "writer-bot",
		Reference: []byte("diff --git a/widgets.py b/widgets.py\n--- a/widgets.py\n+++ b/widgets.py\n@@ -1 +1 @@\n-def total(xs): raise NotImplementedError\n+def total(xs): return sum(xs) if xs else 0\n")})
	if err != nil {
		t.Fatal(err)
	}
	check := defaultCheck
	base := *check.Base
	base.Flaky = []string{"tests/hidden/test_totals.py::test_empty"}
	check.Base = &base
	check.Reference = &grader.ReferenceCheck{AllPass: true, Failed: []string{}, Counts: grader.Counts{Passed: 3, Total: 3},
		Mutation: &grader.Mutation{Mutants: 5, Killed: 4, Invalid: 1, Survivors: []grader.Survivor{
			{File: "widgets.py", Line: 1, Change: "0 -> 1", Before: "def total(xs): return sum(xs) if xs else 0", After: "def total(xs): return sum(xs) if xs else 1"},
		}}}
	f.sync(t, v, &check, true)
	code, body, _ := b.get(t, cardPath)
	if code != 200 {
		t.Fatalf("card: %d", code)
	}
	body = html.UnescapeString(body)
	for _, want := range []string{
		"These tests miss 1 of 5 changes to the reference",
		"<code>widgets.py</code> line 1: 0 -> 1",
		"- def total(xs): return sum(xs) if xs else 0", "+ def total(xs): return sum(xs) if xs else 1",
		"1 more did not import or did not run in time",
		"1 flaky test", "tests/hidden/test_totals.py::test_empty",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	if m, c := strings.Index(body, "These tests miss"), strings.Index(body, "Acceptance criteria and the tests"); m < 0 || m > c {
		t.Error("the mutation summary does not lead the card")
	}
}

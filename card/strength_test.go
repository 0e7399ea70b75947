package card

import (
	"html"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
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
	check.Base.Flaky = []string{"tests/hidden/test_totals.py::test_empty"}
	check.Reference = &report.ReferenceCheck{AllPass: true, Failed: []string{}, Counts: report.Counts{Passed: 3, Total: 3},
		Mutation: &report.Mutation{Mutants: 5, Killed: 4, Invalid: 1, Survivors: []report.Survivor{
			{File: "widgets.py", Line: 1, Change: "0 -> 1", Before: "def total(xs): return sum(xs) if xs else 0", After: "def total(xs): return sum(xs) if xs else 1"},
		}}}
	check.Twins = &report.Twins{Twinned: 2, Of: 3, Untwinnable: 1, Untwinned: []report.TwinGap{{ID: "tests/hidden/test_totals.py::test_type", Why: "no literal to change"}}}
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
		"2 of 3 tests have twins; 1 cannot be twinned", "tests/hidden/test_totals.py::test_type</code>: no literal to change",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	if m, c := strings.Index(body, "These tests miss"), strings.Index(body, "Acceptance criteria and the tests"); m < 0 || m > c {
		t.Error("the mutation summary does not lead the card")
	}
	if !strings.Contains(body, `<section class="flag uncovered" id="mutation">`) || !strings.Contains(body, `<section class="flag uncovered" id="twins">`) {
		t.Error("survivors and untwinnable tests are not flagged as a problem")
	}

	// Good news is shown as good news: every change noticed, every test
	// twinned, in green rather than the warning's yellow.
	v2, err := f.store.Push(t.Context(), f.st, store.Draft{Files: hiddenFiles, Criteria: writerCriteria, Author: "writer-bot",
		Reference: []byte("diff --git a/widgets.py b/widgets.py\n--- a/widgets.py\n+++ b/widgets.py\n@@ -1 +1 @@\n-def total(xs): raise NotImplementedError\n+def total(xs): return sum(xs)\n")})
	if err != nil {
		t.Fatal(err)
	}
	good := defaultCheck
	good.Reference = &report.ReferenceCheck{AllPass: true, Failed: []string{}, Counts: report.Counts{Passed: 3, Total: 3}, Mutation: &report.Mutation{Mutants: 5, Killed: 5}}
	good.Twins = &report.Twins{Twinned: 3, Of: 3}
	f.sync(t, v2, &good, true)
	_, body, _ = b.get(t, cardPath)
	if !strings.Contains(body, `<section class="flag good" id="mutation">`) || !strings.Contains(body, `<section class="flag good" id="twins">`) {
		t.Errorf("every change noticed and every test twinned are not shown as good news:\n%s", body)
	}
}

// TestCardShowsSkips: tests that skip in the grader's environment (on the
// base and with the reference) are shown before approval, with the choice:
// approve anyway, or fix them; a test the reference runs is not among them.
func TestCardShowsSkips(t *testing.T) {
	f := newCardFixture(t, "")
	b := f.signIn(t, requester)
	v, err := f.store.Push(t.Context(), f.st, store.Draft{Files: hiddenFiles, Criteria: writerCriteria, Author: "writer-bot",
		Reference: []byte("diff --git a/widgets.py b/widgets.py\n--- a/widgets.py\n+++ b/widgets.py\n@@ -1 +1 @@\n-def total(xs): raise NotImplementedError\n+def total(xs): return sum(xs) if xs else 0\n")})
	if err != nil {
		t.Fatal(err)
	}
	check := defaultCheck
	check.Base.Skipped = []string{"tests/hidden/test_totals.py::test_empty", "tests/hidden/test_totals.py::test_type"}
	check.Reference = &report.ReferenceCheck{AllPass: true, Failed: []string{}, Skipped: []string{"tests/hidden/test_totals.py::test_empty"}, Counts: report.Counts{Passed: 2, Skipped: 1, Total: 3}}
	f.sync(t, v, &check, true)
	code, body, _ := b.get(t, cardPath)
	if code != 200 {
		t.Fatalf("card: %d", code)
	}
	body = html.UnescapeString(body)
	for _, want := range []string{"1 test skips in this environment: approve anyway, or fix them", "<code>tests/hidden/test_totals.py::test_empty</code>", "and with the reference patch"} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	i := strings.Index(body, `id="skips"`)
	if j := strings.Index(body[max(i, 0):], "</section>"); i < 0 || strings.Contains(body[i:i+j], "test_type") {
		t.Errorf("the skips section is missing or lists a test the reference runs")
	}
}

package grader

import (
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// maxRerun bounds the failing hidden test functions a grade runs again: a
// run where more fail is a failing implementation, not a flaky test, and
// rerunning it would only double its cost.
const maxRerun = 32

// functionID is the id of the test function a test result belongs to: its
// id without the parametrization ("f.py::test_x[1-2]" -> "f.py::test_x").
// A case's id may hold "::" itself ("f.py::test_cast[a::int]").
func functionID(id string) string {
	i := strings.Index(id, "::")
	if i < 0 {
		return id
	}
	if j := strings.IndexByte(id[i:], '['); j >= 0 {
		return id[:i+j]
	}
	return id
}

// failingFunctions lists, once each, the test functions of ev's tests that
// failed or errored, but those of modules that failed to import.
func failingFunctions(ev *evaluation) []string {
	var ids []string
	for _, t := range ev.tests {
		file, _, _ := strings.Cut(t.ID, "::")
		if slices.Contains(ev.importFailed, file) {
			// Its module did not import: named alone, pytest cannot
			// collect it, and the rerun would report nothing at all.
			continue
		}
		if t.Outcome == report.OutcomeFailed || t.Outcome == report.OutcomeError {
			if id := functionID(t.ID); !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// rerunOf says which failing tests of a run to run again, or nil when the
// run should not be rerun: it passed, it could not be judged or was bent
// (a rerun would change no verdict), or too many failed.
func rerunOf(r *run) []string {
	ids := failingFunctions(r.ev)
	if len(ids) == 0 || len(ids) > maxRerun || len(r.ev.problems) > 0 || len(r.ev.tampered) > 0 {
		return nil
	}
	return ids
}

// selectTests makes a run's job select only ids.
func selectTests(ids []string) func(*wrapper.Job) {
	return func(j *wrapper.Job) { j.Select = ids }
}

// reverseTests makes a run's job run the tests in reverse order.
func reverseTests(j *wrapper.Job) { j.Reverse = true }

// applyRerun marks as flaky the tests of first that did not pass there and
// passed in second, a run of just the failing ones, and returns how many.
// A bent rerun makes the grade tampered; a rerun that cannot be judged
// changes nothing and is noted.
func applyRerun(first, second *evaluation) int {
	if len(second.tampered) > 0 {
		for _, t := range second.tampered {
			first.tampered = append(first.tampered, "rerun of the failing tests: "+t)
		}
		return 0
	}
	if len(second.problems) > 0 {
		first.notes = append(first.notes, "the rerun of the failing tests could not be judged: "+strings.Join(second.problems, "; "))
		return 0
	}
	again := map[string]report.Outcome{}
	for _, t := range second.tests {
		again[t.ID] = t.Outcome
	}
	n := 0
	for i, t := range first.tests {
		if (t.Outcome == report.OutcomeFailed || t.Outcome == report.OutcomeError) && again[t.ID] == report.OutcomePassed {
			first.tests[i].Outcome = report.OutcomeFlaky
			n++
		}
	}
	return n
}

// flakyReason says in the reasons of a grade what its flaky tests mean for
// the verdict.
func flakyReason(n int) string {
	return fmt.Sprintf("%d hidden test(s) failed, then passed when run again alone: flaky, and counted as not passed (a pass on a second try is not a pass)", n)
}

// flakyBetween lists the tests whose outcome differs between two runs of
// the same tree; nothing when either run cannot be judged.
func flakyBetween(a, b *run) []string {
	if a == nil || b == nil {
		return nil
	}
	for _, ev := range []*evaluation{a.ev, b.ev} {
		if len(ev.problems) > 0 || len(ev.tampered) > 0 {
			return nil
		}
	}
	other := map[string]report.Outcome{}
	for _, t := range b.ev.tests {
		other[t.ID] = t.Outcome
	}
	var ids []string
	for _, t := range a.ev.tests {
		if o, ok := other[t.ID]; ok && o != t.Outcome {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

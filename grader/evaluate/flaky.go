package evaluate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
)

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

// FailingFunctions lists, once each, the test functions of ev's tests that
// failed or errored, but those of modules that failed to import.
func FailingFunctions(ev *Evaluation) []string {
	var ids []string
	for _, t := range ev.Tests {
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

// ApplyRerun marks as flaky the tests of first that did not pass there and
// passed in second, a run of just the failing ones, and returns how many.
// A bent rerun makes the grade tampered; a rerun that cannot be judged
// changes nothing and is noted.
func ApplyRerun(first, second *Evaluation) int {
	if len(second.Tampered) > 0 {
		for _, t := range second.Tampered {
			first.Tampered = append(first.Tampered, "rerun of the failing tests: "+t)
		}
		return 0
	}
	if len(second.Problems) > 0 {
		first.Notes = append(first.Notes, "the rerun of the failing tests could not be judged: "+strings.Join(second.Problems, "; "))
		return 0
	}
	again := map[string]report.Outcome{}
	for _, t := range second.Tests {
		again[t.ID] = t.Outcome
	}
	n := 0
	for i, t := range first.Tests {
		if (t.Outcome == report.OutcomeFailed || t.Outcome == report.OutcomeError) && again[t.ID] == report.OutcomePassed {
			first.Tests[i].Outcome = report.OutcomeFlaky
			n++
		}
	}
	return n
}

// FlakyReason says in the reasons of a grade what its flaky tests mean for
// the verdict.
func FlakyReason(n int) string {
	return fmt.Sprintf("%d hidden test(s) failed, then passed when run again alone: flaky, and counted as not passed (a pass on a second try is not a pass)", n)
}

// FlakyBetween lists the tests whose outcome differs between two runs of
// the same tree; nothing when either run cannot be judged.
func FlakyBetween(a, b *Evaluation) []string {
	if a == nil || b == nil {
		return nil
	}
	for _, ev := range []*Evaluation{a, b} {
		if len(ev.Problems) > 0 || len(ev.Tampered) > 0 {
			return nil
		}
	}
	other := map[string]report.Outcome{}
	for _, t := range b.Tests {
		other[t.ID] = t.Outcome
	}
	var ids []string
	for _, t := range a.Tests {
		if o, ok := other[t.ID]; ok && o != t.Outcome {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

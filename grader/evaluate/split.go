package evaluate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// splitNoAnswer begins the reason the trusted side of a split run gives
// when the tree did not answer a call in time (testfirst_split.py).
const splitNoAnswer = "the code under test did not answer within "

// splitEvidence judges a split run's own report (wrapper.SplitReport). The
// runner's in-process evidence does not apply: the code under test never
// ran in pytest's process. A protocol the tree broke fails the run
// closed.
func splitEvidence(res *wrapper.Result, ev *Evaluation, set *EvidenceSet) {
	if len(res.Runner) == 0 {
		return
	}
	dirsEvidence(res, set)
	switch b := res.Split.Broken; {
	case strings.HasPrefix(b, splitNoAnswer):
		// The tree hung in a call: the tests from then on failed closed,
		// and it is the code's fault, not the grade's. The trusted side
		// writes the reason and keeps the first one: the tree cannot
		// choose it.
		ev.Notes = append(ev.Notes, "timed out: split grading stopped: "+b)
	case b != "":
		ev.problemf("split grading stopped: %s", b)
	}
}

// Sealing says which of ev's passing tests a split run decided outside the
// code under test: those the trusted side's report names with no decision
// of the tree's. A passing test the report does not name is not sealed.
// It is nil for a run that was not split.
func Sealing(ev *Evaluation, res *wrapper.Result) *report.Sealing {
	if res.Split == nil {
		return nil
	}
	s := &report.Sealing{}
	for _, t := range ev.Tests {
		if t.Outcome != report.OutcomePassed {
			continue
		}
		s.Passing++
		id := t.ID
		if raw, ok := ev.rawIDs[id]; ok {
			id = raw
		}
		decisions, named := res.Split.Tests[id]
		switch {
		case !named:
			s.Decided = append(s.Decided, report.DecidedTest{ID: t.ID, By: []string{"the split report does not name it"}})
		case len(decisions) > 0:
			s.Decided = append(s.Decided, report.DecidedTest{ID: t.ID, By: describeDecisions(decisions)})
		default:
			s.Sealed++
		}
	}
	return s
}

// describeDecisions turns the trusted side's counts of what decided a test
// ("__eq__ of wordstats.Point, a class of the code under test") into lines
// with the count, sorted.
func describeDecisions(d map[string]int) []string {
	var out []string
	for k, n := range d {
		s := k
		if n > 1 {
			s += fmt.Sprintf(" (%d times)", n)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

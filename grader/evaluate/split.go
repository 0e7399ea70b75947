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
// of the tree's. A passing test the report does not name is not sealed;
// a passing test of inProcess (the per-test fallback graded it in the
// tree's process) is counted as such. It is nil for a run that was not
// split.
func Sealing(ev *Evaluation, res *wrapper.Result, inProcess map[string]bool) *report.Sealing {
	if res.Split == nil {
		return nil
	}
	s := &report.Sealing{}
	for _, t := range ev.Tests {
		if t.Outcome != report.OutcomePassed {
			continue
		}
		s.Passing++
		if inProcess[t.ID] {
			s.InProcessPassing++
			continue
		}
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

// Refusals are the tests a split run's trusted side could not run as they
// needed (wrapper.SplitReport.Refused), by the grade's test id, each
// reason begun with where ("on the base, "). Nothing for a run that was
// not split or that ended without its report.
func Refusals(ev *Evaluation, res *wrapper.Result, where string) map[string][]string {
	if res == nil || res.Split == nil || len(res.Split.Refused) == 0 {
		return nil
	}
	ids := map[string]string{}
	for _, t := range ev.Tests {
		raw := t.ID
		if r, ok := ev.rawIDs[t.ID]; ok {
			raw = r
		}
		ids[raw] = t.ID
	}
	out := map[string][]string{}
	for raw, whys := range res.Split.Refused {
		id, ok := ids[raw]
		if !ok {
			// A test the report does not hold (a fixture's setup the
			// tree failed): nothing to grade in-process.
			continue
		}
		for _, w := range whys {
			out[id] = append(out[id], where+w)
		}
	}
	return out
}

// FunctionsOf are the test functions of ids, without parametrization, as
// a run's job selects them (wrapper.Job.Select), in order.
func FunctionsOf(ids []string) []string {
	var out []string
	for _, id := range ids {
		if f := functionID(id); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// ApplyFallback takes into pr, a split run, the outcomes its in-process
// run fb gave the tests of set (the per-test fallback), and returns those
// tests with why each ran in-process. A bent in-process run makes pr
// tampered; one that cannot be judged gives pr its problems, and pr keeps
// its split outcomes.
func ApplyFallback(pr, fb *Evaluation, set map[string][]string) []report.FallbackTest {
	const what = "in-process run of the tests the split could not run: "
	for _, t := range fb.Tampered {
		pr.Tampered = append(pr.Tampered, what+t)
	}
	for _, p := range fb.Problems {
		pr.problemf("%s%s", what, p)
	}
	for _, n := range fb.Notes {
		pr.Notes = append(pr.Notes, what+n)
	}
	if len(fb.Tampered) > 0 || len(fb.Problems) > 0 {
		return nil
	}
	got := map[string]report.TestResult{}
	for _, t := range fb.Tests {
		got[t.ID] = t
	}
	var out []report.FallbackTest
	for i, t := range pr.Tests {
		why, in := set[t.ID]
		r, ran := got[t.ID]
		if !in || !ran {
			continue
		}
		pr.Tests[i] = r
		out = append(out, report.FallbackTest{ID: t.ID, Why: why})
	}
	return out
}

package grader

import (
	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/wrapper"
)

// maxRerun bounds the failing hidden test functions a grade runs again: a
// run where more fail is a failing implementation, not a flaky test, and
// rerunning it would only double its cost.
const maxRerun = 32

// rerunOf says which failing tests of a run to run again, or nil when the
// run should not be rerun: it passed, it could not be judged or was bent
// (a rerun would change no verdict), or too many failed.
func rerunOf(r *run) []string {
	ids := evaluate.FailingFunctions(r.ev)
	// A run killed at its deadline is not run again: its tests failed by
	// hanging, and a rerun would only hang as long once more.
	if len(ids) == 0 || r.res.TimedOut || len(ids) > maxRerun || len(r.ev.Problems) > 0 || len(r.ev.Tampered) > 0 {
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

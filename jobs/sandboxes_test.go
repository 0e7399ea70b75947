package jobs

import (
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/pipeline"
)

// TestLongestGradeFitsItsJob: a grade at the longest timeout a repository
// may set (its run, the rerun of its failing tests, its environment build)
// ends before its job's own timeout, at the default rescue time.
func TestLongestGradeFitsItsJob(t *testing.T) {
	longest := 2*pipeline.MaxRunTimeout + environment.DefaultTimeout + time.Minute
	if job := SandboxJobTimeout(0); longest >= job {
		t.Errorf("a grade may take %s, its job only %s: lower pipeline.MaxRunTimeout or raise DefaultJobRescueAfter", longest, job)
	}
}

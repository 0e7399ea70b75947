package jobs

import (
	"time"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/sandbox"
)

// DefaultJobRescueAfter is how long a job may run before another replica
// takes it for lost (its process died): longer than the longest grade.
const DefaultJobRescueAfter = 90 * time.Minute

// SandboxJobTimeout is how long a job that runs a sandbox (a grade, a base
// check, an agent run) may take under a job rescue time (0: the default),
// how long a job may run before another replica takes it for lost: a
// little less, so the job ends itself first. River rescues a job only once
// its own timeout has passed too, so this is also how soon a crashed
// replica's grade resumes. An agent's timeout must fit in it.
func SandboxJobTimeout(rescueAfter time.Duration) time.Duration {
	if rescueAfter <= 0 {
		rescueAfter = DefaultJobRescueAfter
	}
	return rescueAfter * 8 / 9
}

// sandboxLimits are the sandbox limits a repository's config asks for.
func sandboxLimits(cfg pipeline.RepoConfig) sandbox.Limits {
	return sandbox.LimitsOf(cfg.Memory, cfg.CPUs, cfg.Pids)
}

// sandboxWorkers is how many grades and base checks run at once on this
// replica: each takes a sandbox with its CPU and memory limits.
func sandboxWorkers(e db.Engine) int {
	if e == db.SQLite {
		return 1
	}
	return 2
}

package jobs

import (
	"log/slog"

	"github.com/testfirst-app/testfirst/db"
)

// NewGradeWorkerOn is a grade worker on database d and the sandbox engine
// s, counting in m, for the tests outside the package (which need the
// engine the test environment builds, and so cannot be inside it).
func NewGradeWorkerOn(d *db.DB, s Sandboxes, m *Metrics) *GradeWorker {
	return &GradeWorker{db: d, sandboxes: s, metrics: m, log: slog.Default()}
}

// JobLabel is the value of sandbox.LabelJob on the sandboxes of job.
var JobLabel = jobLabel

package jobs

import (
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
)

// Queues is how the service works its default queue (deliveries, syncs),
// and so how testfirst bench intake drains them: four at a time on PostgreSQL, one on SQLite, whose single
// connection River and the workers' own queries share (more than one job
// at a time starves it). Fetch timing is db.NewJobClient's.
func Queues(e db.Engine) map[string]river.QueueConfig {
	maxWorkers := 4
	if e == db.SQLite {
		maxWorkers = 1
	}
	return map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}}
}

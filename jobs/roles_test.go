package jobs

import (
	"maps"
	"slices"
	"testing"

	"github.com/riverqueue/river"
	"github.com/testfirst-app/testfirst/internal/testkit"
)

// TestRoleSetups: the app role works the default queue and never the
// sandbox's, the grader role only the sandbox's; both know every kind the
// pipeline enqueues (the client refuses to insert a kind it has no worker
// for, and River's rescuer, on whichever service leads, discards a stuck
// job of a kind it does not know), and both schedule the same periodic
// jobs, as either may lead.
func TestRoleSetups(t *testing.T) {
	d := testkit.DB(t)
	cfg := Config{DB: d}
	kinds := []river.JobArgs{DeliveryArgs{}, SyncArgs{}, RedeliverArgs{}, VersionCheckArgs{Version: 1}, GradeArgs{Grade: 1}}
	for _, tt := range []struct {
		role   string
		setup  Setup
		queues []string
	}{
		{"app", NewAppSetup(cfg, nil), []string{river.QueueDefault}},
		{"grader", NewGraderSetup(cfg, nil, nil, nil), []string{QueueSandbox}},
	} {
		got := slices.Sorted(maps.Keys(tt.setup.Queues))
		if !slices.Equal(got, tt.queues) {
			t.Errorf("%s works queues %v; want %v", tt.role, got, tt.queues)
		}
		if len(tt.setup.Periodic) != 2 {
			t.Errorf("%s schedules %d periodic jobs; want the redelivery sweep and the store sync", tt.role, len(tt.setup.Periodic))
		}
		c, err := d.NewJobClient(tt.setup.Workers, tt.setup.Queues)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range kinds {
			if _, err := c.Insert(t.Context(), args, &river.InsertOpts{Queue: "unworked"}); err != nil {
				t.Errorf("%s does not know job kind %s: %v", tt.role, args.Kind(), err)
			}
		}
	}
}

package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
)

// DefaultRedeliverInterval is how often the redelivery sweep runs unless the
// service says otherwise.
const DefaultRedeliverInterval = 10 * time.Minute

// redeliverMaxAttempts bounds River's retries of one sweep: the next
// periodic sweep does the same work anyway.
const redeliverMaxAttempts = 3

// RedeliverArgs is the job of one redelivery sweep. It has no arguments:
// every sweep looks at the whole recent delivery log.
type RedeliverArgs struct{}

// Kind implements river.JobArgs.
func (RedeliverArgs) Kind() string { return "redeliver" }

// deliveryLog is the slice of GitHub the redelivery sweep needs.
type deliveryLog interface {
	// RecentDeliveries lists the app's delivery attempts at or after since,
	// newest first; it fails with a *github.APIError.
	RecentDeliveries(ctx context.Context, since time.Time) ([]github.HookDelivery, error)
	// Redeliver asks GitHub to deliver an attempt again; it fails with a
	// *github.APIError.
	Redeliver(ctx context.Context, id int64) error
}

var _ deliveryLog = (*github.Clients)(nil)

// RedeliverWorker sweeps the app's webhook delivery log: GitHub never
// retries a failed delivery, so the sweep asks it to redeliver each failed
// delivery we have not recorded and that no later attempt delivered.
type RedeliverWorker struct {
	river.WorkerDefaults[RedeliverArgs]
	db     *db.DB
	github deliveryLog
	log    *slog.Logger
	now    func() time.Time
}

// NewRedeliverWorker returns the sweep over database d and GitHub gh,
// logging to log.
func NewRedeliverWorker(d *db.DB, gh deliveryLog, log *slog.Logger) *RedeliverWorker {
	return &RedeliverWorker{db: d, github: gh, log: log, now: time.Now}
}

// RedeliverPeriodicJob schedules a redelivery sweep every interval, and one
// as soon as the River leader starts. At most one sweep is inserted per
// interval, and a failed sweep is retried only a few times: the next one
// does the same work.
func RedeliverPeriodicJob(interval time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(interval), func() (river.JobArgs, *river.InsertOpts) {
		return RedeliverArgs{}, &river.InsertOpts{
			MaxAttempts: redeliverMaxAttempts,
			UniqueOpts:  river.UniqueOpts{ByPeriod: interval},
		}
	}, &river.PeriodicJobOpts{ID: "redeliver", RunOnStart: true})
}

// Work implements river.Worker. It looks back db.DeliveryRetention, the
// span over which our delivery records are kept and GitHub redelivers.
// Errors listing or redelivering stop the sweep; River retries the job, and
// the next sweep starts over.
func (w *RedeliverWorker) Work(ctx context.Context, job *river.Job[RedeliverArgs]) error {
	now := time.Now
	if w.now != nil {
		now = w.now
	}
	log := w.log
	if log == nil {
		log = slog.Default()
	}
	since := now().Add(-db.DeliveryRetention)
	list, err := w.github.RecentDeliveries(ctx, since)
	if err != nil {
		return fmt.Errorf("redelivery sweep: %w", err)
	}
	failed := failedDeliveries(list)
	guids := make([]string, len(failed))
	for i, d := range failed {
		guids[i] = d.GUID
	}
	recorded, err := w.db.RecordedDeliveries(ctx, guids)
	if err != nil {
		return fmt.Errorf("redelivery sweep: %w", err)
	}
	asked := 0
	for _, d := range failed {
		if recorded[d.GUID] {
			continue
		}
		if err := w.github.Redeliver(ctx, d.ID); err != nil {
			return fmt.Errorf("redelivery sweep: redeliver %s: %w", d.GUID, err)
		}
		asked++
		log.InfoContext(ctx, "asked GitHub to redeliver a failed delivery",
			"delivery", d.GUID, "installation", d.Installation, "event", d.Event, "action", d.Action,
			"attempt", d.ID, "status", d.Status, "delivered_at", d.DeliveredAt)
	}
	// Records (and payloads) older than anything GitHub can still
	// redeliver, with a day to spare, go.
	pruned, err := w.db.PruneDeliveries(ctx, now().Add(-db.DeliveryRetention-pruneMargin))
	if err != nil {
		return fmt.Errorf("redelivery sweep: %w", err)
	}
	log.InfoContext(ctx, "redelivery sweep done", "listed", len(list), "failed", len(failed),
		"recorded", len(failed)-asked, "redelivered", asked, "pruned", pruned)
	return nil
}

// pruneMargin keeps delivery records this long beyond db.DeliveryRetention.
const pruneMargin = 24 * time.Hour

// failedDeliveries picks, from attempts listed newest first, the newest
// attempt of each delivery (GUID) none of whose attempts succeeded.
func failedDeliveries(list []github.HookDelivery) []github.HookDelivery {
	delivered := make(map[string]bool)
	for _, d := range list {
		if d.Succeeded() {
			delivered[d.GUID] = true
		}
	}
	var out []github.HookDelivery
	seen := make(map[string]bool)
	for _, d := range list {
		if d.GUID == "" || delivered[d.GUID] || seen[d.GUID] {
			continue
		}
		seen[d.GUID] = true
		out = append(out, d)
	}
	return out
}

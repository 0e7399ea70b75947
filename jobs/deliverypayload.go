package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
)

// DeliveryPayload returns the body of a's delivery: inline in jobs
// enqueued before payloads moved out of the job args, else read from the
// deliveries table, where intake recorded it in the transaction that
// enqueued the job. When the delivery is no longer recorded (pruned after
// db.DeliveryRetention while the job kept retrying) the error cancels the
// job: no retry can bring the payload back.
func DeliveryPayload(ctx context.Context, d *db.DB, a DeliveryArgs) ([]byte, error) {
	if len(a.Payload) > 0 {
		return a.Payload, nil
	}
	p, err := d.DeliveryPayload(ctx, a.Delivery)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, db.ErrNotFound):
		return nil, river.JobCancel(fmt.Errorf("delivery %s: %w: its record was pruned or kept no payload; redeliver it from the app's advanced settings to handle it again", a.Delivery, err))
	default:
		return nil, fmt.Errorf("delivery %s: %w", a.Delivery, err)
	}
}

// payload is DeliveryPayload for the worker's job; it logs its failure,
// as Work does, and returns it.
func (w *DeliveryWorker) payload(ctx context.Context, a DeliveryArgs) ([]byte, error) {
	p, err := DeliveryPayload(ctx, w.db, a)
	if err != nil {
		w.log.ErrorContext(ctx, "delivery job failed", "delivery", a.Delivery, "installation", a.Installation,
			"event", a.Event, "action", a.Action, "err", err)
	}
	return p, err
}

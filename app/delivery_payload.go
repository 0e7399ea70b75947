package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
)

// payload returns the body of a's delivery: inline in jobs enqueued before
// payloads moved out of the job args, else read from the deliveries table,
// where intake recorded it in the transaction that enqueued the job. When
// the delivery is no longer recorded (pruned after db.DeliveryRetention
// while the job kept retrying) the job is cancelled: no retry can bring the
// payload back. It logs its failure, as Work does, and returns it.
func (w *DeliveryWorker) payload(ctx context.Context, a DeliveryArgs) ([]byte, error) {
	if len(a.Payload) > 0 {
		return a.Payload, nil
	}
	p, err := w.db.DeliveryPayload(ctx, a.Delivery)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, db.ErrNotFound):
		err = river.JobCancel(fmt.Errorf("delivery %s: %w: its record was pruned or kept no payload; redeliver it from the app's advanced settings to handle it again", a.Delivery, err))
	default:
		err = fmt.Errorf("delivery %s: %w", a.Delivery, err)
	}
	w.log.ErrorContext(ctx, "delivery job failed", "delivery", a.Delivery, "installation", a.Installation,
		"event", a.Event, "action", a.Action, "err", err)
	return nil, err
}

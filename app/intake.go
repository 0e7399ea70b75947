package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
)

// Intake records each webhook delivery once and, in the same transaction,
// enqueues the job that handles it. It implements handlers.Intake.
type Intake struct {
	db  *db.DB
	now func() time.Time
}

var _ handlers.Intake = (*Intake)(nil)

// NewIntake returns the intake on database d.
func NewIntake(d *db.DB) *Intake { return &Intake{db: d, now: time.Now} }

// jobActions lists, per event, the actions whose deliveries need a job.
// Deliveries of other actions are recorded (so a redelivery is recognised)
// and enqueue nothing.
var jobActions = map[string][]string{
	"installation":              {"created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"},
	"installation_repositories": {"added", "removed"},
}

// NeedsJob reports whether a delivery needs work beyond being recorded.
func NeedsJob(event, action string) bool {
	return slices.Contains(jobActions[event], action)
}

// Accept implements handlers.Intake.
func (in *Intake) Accept(ctx context.Context, d github.Delivery) (bool, error) {
	var duplicate bool
	err := in.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		duplicate, err = tx.RecordDelivery(ctx, db.Delivery{ID: d.ID, Event: d.Event, Action: d.Action, Installation: d.Installation, ReceivedAt: in.now()})
		if err != nil || duplicate || !NeedsJob(d.Event, d.Action) {
			return err
		}
		return tx.InsertJob(ctx, DeliveryArgs{Delivery: d.ID, Event: d.Event, Action: d.Action, Installation: d.Installation, Payload: d.Payload}, nil)
	})
	if err != nil {
		return false, fmt.Errorf("record delivery %s: %w", d.ID, err)
	}
	return duplicate, nil
}

package github

import (
	"context"
	"errors"
	"fmt"
	"time"

	gh "github.com/google/go-github/v66/github"
)

// deliveriesPerPage is the largest page GitHub serves of the app's webhook
// delivery log.
const deliveriesPerPage = 100

// HookDelivery is one attempt in the app's webhook delivery log. A
// redelivery is a new attempt with its own ID and the GUID of the original.
type HookDelivery struct {
	// ID names this attempt; Redeliver takes it.
	ID int64
	// GUID is the X-GitHub-Delivery id, shared by every attempt of one
	// delivery.
	GUID   string
	Event  string
	Action string // empty when the event has none
	// Installation is the installation the delivery was about, 0 when none.
	Installation int64
	// Status is GitHub's word on the attempt, e.g. "OK" or
	// "Invalid HTTP Response: 503".
	Status string
	// StatusCode is the HTTP status our endpoint answered; 0 when it did
	// not answer.
	StatusCode  int
	DeliveredAt time.Time
	Redelivery  bool
}

// Succeeded reports whether our endpoint answered the attempt with a 2xx.
func (d HookDelivery) Succeeded() bool { return d.StatusCode >= 200 && d.StatusCode < 300 }

// RecentDeliveries lists the app's webhook delivery attempts delivered at or
// after since, newest first (GET /app/hook/deliveries, following the cursor
// pagination until the attempts are older than since). It fails with an
// *APIError when a page cannot be fetched.
func (c *Clients) RecentDeliveries(ctx context.Context, since time.Time) ([]HookDelivery, error) {
	var out []HookDelivery
	opts := &gh.ListCursorOptions{PerPage: deliveriesPerPage}
	for page := 1; ; page++ {
		list, resp, err := c.app.Apps.ListHookDeliveries(ctx, opts)
		if err := classify(fmt.Sprintf("list webhook deliveries (page %d)", page), resp, err, c.now()); err != nil {
			return nil, err
		}
		older := false
		for _, d := range list {
			hd := convertDelivery(d)
			if hd.DeliveredAt.Before(since) {
				older = true
				continue
			}
			out = append(out, hd)
		}
		if older || resp.Cursor == "" || len(list) == 0 {
			return out, nil
		}
		opts.Cursor = resp.Cursor
	}
}

func convertDelivery(d *gh.HookDelivery) HookDelivery {
	return HookDelivery{
		ID:           d.GetID(),
		GUID:         d.GetGUID(),
		Event:        d.GetEvent(),
		Action:       d.GetAction(),
		Installation: d.GetInstallationID(),
		Status:       d.GetStatus(),
		StatusCode:   d.GetStatusCode(),
		DeliveredAt:  d.GetDeliveredAt().Time,
		Redelivery:   d.GetRedelivery(),
	}
}

// Redeliver asks GitHub to deliver attempt id again (POST
// /app/hook/deliveries/{id}/attempts); GitHub accepts and delivers later,
// with the original GUID. It fails with an *APIError wrapping ErrNotFound
// when GitHub no longer has the attempt, and with a permanent *APIError
// (422) when it is too old to redeliver.
func (c *Clients) Redeliver(ctx context.Context, id int64) error {
	_, resp, err := c.app.Apps.RedeliverHookDelivery(ctx, id)
	var accepted *gh.AcceptedError
	if errors.As(err, &accepted) {
		return nil
	}
	return classify(fmt.Sprintf("redeliver webhook delivery %d", id), resp, err, c.now())
}

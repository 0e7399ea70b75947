package jobs

import (
	"context"
	"fmt"
	"slices"

	"github.com/riverqueue/river"
)

// eventHandler handles the deliveries of one webhook event.
type eventHandler struct {
	event string
	// actions are the actions whose deliveries need a job. Deliveries of
	// other actions are recorded (so a redelivery is recognised) and
	// enqueue nothing.
	actions []string
	// subscribed is whether the app manifest must subscribe to the event;
	// installation events are sent to every app unasked.
	subscribed bool
	// fromGitHub says the handler acts on what GitHub shows now, read
	// before it changes anything, never on the payload's word: the same
	// body again does nothing the first did not, so the intake does not
	// take a body it has seen for a duplicate (label, unlabel, label
	// within a second send two identical bodies).
	fromGitHub bool
	handle     func(*DeliveryWorker, context.Context, DeliveryArgs) error
}

// eventHandlers is the one table of the webhook events testfirst acts on.
// From it come the events the app manifest subscribes to (Events), what
// the intake records with a job (NeedsJob) and the delivery job's
// dispatch (handlerFor).
var eventHandlers = []eventHandler{
	{event: "installation", actions: []string{"created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"},
		handle: (*DeliveryWorker).installation},
	{event: "installation_repositories", actions: []string{"added", "removed"}, handle: (*DeliveryWorker).installation},
	{event: "issues", actions: []string{"opened", "labeled", "unlabeled", "edited", "closed", "reopened"}, subscribed: true, fromGitHub: true,
		handle: (*DeliveryWorker).issue},
	{event: "issue_comment", actions: []string{"created", "edited"}, subscribed: true, handle: (*DeliveryWorker).issueComment},
	{event: "pull_request", actions: []string{"opened", "synchronize", "reopened", "edited", "ready_for_review", "closed"}, subscribed: true,
		handle: (*DeliveryWorker).pullRequest},
	// Reviews and review comments are read for hidden tests pasted into
	// them (jobs/pasted.go), as issue bodies, comments and descriptions are.
	{event: "pull_request_review", actions: []string{"submitted", "edited"}, subscribed: true, handle: (*DeliveryWorker).review},
	{event: "pull_request_review_comment", actions: []string{"created", "edited"}, subscribed: true, handle: (*DeliveryWorker).reviewComment},
	{event: "check_run", actions: []string{"rerequested", "requested_action"}, subscribed: true, handle: (*DeliveryWorker).checkRun},
	{event: "check_suite", actions: []string{"rerequested"}, subscribed: true, handle: (*DeliveryWorker).checkSuite},
}

// handlerFor returns the entry of eventHandlers of a delivery that needs a
// job.
func handlerFor(event, action string) (eventHandler, bool) {
	for _, h := range eventHandlers {
		if h.event == event && slices.Contains(h.actions, action) {
			return h, true
		}
	}
	return eventHandler{}, false
}

// ActsOnGitHub reports whether a delivery's job acts on what GitHub shows
// when it runs rather than on the delivery's payload (eventHandler's
// fromGitHub).
func ActsOnGitHub(event, action string) bool {
	h, _ := handlerFor(event, action)
	return h.fromGitHub
}

// NeedsJob reports whether a delivery needs work beyond being recorded.
func NeedsJob(event, action string) bool {
	_, ok := handlerFor(event, action)
	return ok
}

// Events are the webhook events the app manifest subscribes to, sorted:
// those of eventHandlers that GitHub does not send every app unasked.
func Events() []string {
	var out []string
	for _, h := range eventHandlers {
		if h.subscribed {
			out = append(out, h.event)
		}
	}
	slices.Sort(out)
	return out
}

// HandledEvents are the webhook events whose deliveries the intake reads:
// every event of eventHandlers, and ping, which GitHub sends when the app
// is registered.
func HandledEvents() []string {
	out := []string{"ping"}
	for _, h := range eventHandlers {
		out = append(out, h.event)
	}
	slices.Sort(out)
	return out
}

// Work implements river.Worker: it hands the delivery to its event's
// handler (see eventHandlers).
func (w *DeliveryWorker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	payload, err := w.payload(ctx, job.Args)
	if err != nil {
		return err
	}
	job.Args.Payload = payload
	h, ok := handlerFor(job.Args.Event, job.Args.Action)
	if !ok {
		return river.JobCancel(fmt.Errorf("delivery %s: no handler for %s.%s", job.Args.Delivery, job.Args.Event, job.Args.Action))
	}
	if err = h.handle(w, ctx, job.Args); err != nil {
		// The job's edge: logged once here, retried or stopped by River.
		w.log.ErrorContext(ctx, "delivery job failed", "delivery", job.Args.Delivery, "installation", job.Args.Installation,
			"event", job.Args.Event, "action", job.Args.Action, "attempt", job.Attempt, "err", err)
	}
	return err
}

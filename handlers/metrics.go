package handlers

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/testfirst-app/testfirst/github"
)

// Intake results, the values of the result label.
const (
	ResultAccepted     = "accepted"
	ResultDuplicate    = "duplicate"
	ResultIgnored      = "ignored"
	ResultBadSignature = "bad_signature"
	ResultTooLarge     = "too_large"
	ResultBusy         = "busy"
	ResultMalformed    = "malformed"
	ResultError        = "error"
)

// Metrics are the intake's Prometheus metrics.
type Metrics struct {
	Deliveries *prometheus.CounterVec
}

// NewMetrics registers the intake's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_webhook_deliveries_total",
			Help: "Webhook deliveries received, by event and result.",
		}, []string{"event", "result"}),
	}
	reg.MustRegister(m.Deliveries)
	return m
}

// eventLabel keeps the event label's values to a known set: the header is
// the sender's to choose, even unsigned.
func eventLabel(event string) string {
	if slices.Contains(github.HandledEvents, event) {
		return event
	}
	return "other"
}

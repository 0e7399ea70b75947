package handlers

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// The routes every testfirst server answers, besides the card's and the
// registration page's.
const (
	HealthPath  = "/healthz"
	ReadyPath   = "/readyz"
	MetricsPath = "/metrics"
	// WebhookPath is where GitHub delivers webhooks.
	WebhookPath = "/webhook"
)

// ServiceConfig is what the service's own routes need.
type ServiceConfig struct {
	// Ready reports whether the service can take work (its database).
	Ready func(context.Context) error
	// Degraded, when set, reports why the service takes deliveries but
	// cannot do all its work (it cannot grade); nil when it can.
	Degraded func() error
	// Registry gathers the service's metrics and receives the webhook's.
	Registry *prometheus.Registry
	// Secrets verify webhook deliveries; Intake records them.
	Secrets [][]byte
	Intake  Intake
	Log     *slog.Logger
}

// RegisterService adds health, readiness, metrics and the webhook intake
// to mux: the routes are spelled here once, for serve and the intake
// benchmark alike.
func RegisterService(mux *http.ServeMux, cfg ServiceConfig) {
	RegisterProbes(mux, cfg)
	mux.Handle(WebhookPath, NewWebhook(cfg.Secrets, cfg.Intake, NewMetrics(cfg.Registry), cfg.Log))
}

// RegisterProbes adds health, readiness and metrics to mux, and nothing
// else: all a service of the grader role answers. cfg's Secrets and
// Intake are not used.
func RegisterProbes(mux *http.ServeMux, cfg ServiceConfig) {
	mux.Handle("GET "+HealthPath, Health())
	mux.Handle("GET "+ReadyPath, Ready(cfg.Ready, cfg.Degraded))
	mux.Handle("GET "+MetricsPath, MetricsHandler(cfg.Registry))
}

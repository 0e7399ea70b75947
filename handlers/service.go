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
	// OperatorToken, when set, is what a request must carry (as
	// "Authorization: Bearer TOKEN") to read /metrics and why /readyz
	// answers as it does; without it /metrics answers no one.
	OperatorToken []byte
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
// Intake are not used. /healthz and /readyz's status answer anyone (the
// orchestrator's probes); why /readyz answers as it does, and /metrics,
// only a request carrying cfg.OperatorToken.
func RegisterProbes(mux *http.ServeMux, cfg ServiceConfig) {
	mux.Handle("GET "+HealthPath, Health())
	token := cfg.OperatorToken
	if token == nil {
		token = []byte{} // the reasons to no one
	}
	mux.Handle("GET "+ReadyPath, OperatorReady(token, cfg.Ready, cfg.Degraded))
	mux.Handle("GET "+MetricsPath, OperatorOnly(cfg.OperatorToken, MetricsHandler(cfg.Registry)))
}

package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health answers GET /healthz: the process is up.
func Health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
}

// Ready answers GET /readyz with 200 when ready reports nil (database
// reachable, migrations applied) and 503 with the reason otherwise. A
// service that is ready but degraded (degraded reports an error) answers
// 200 "degraded: why": it must keep taking deliveries to tell pull requests
// why they are not graded.
func Ready(ready func(context.Context) error, degraded func() error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if degraded != nil {
			if err := degraded(); err != nil {
				w.Write([]byte("degraded: " + err.Error() + "\n"))
				return
			}
		}
		w.Write([]byte("ready\n"))
	})
}

// Metrics serves GET /metrics from reg.
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

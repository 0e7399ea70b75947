package handlers

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
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
// why they are not graded. It says why to anyone: RegisterProbes serves it
// to the operator only (OperatorReady).
func Ready(ready func(context.Context) error, degraded func() error) http.Handler {
	return OperatorReady(nil, ready, degraded)
}

// OperatorReady answers GET /readyz as Ready does to a request carrying
// token (OperatorAuthorized), and with the status alone to anyone else:
// the code and "ready", "degraded" or "not ready". Why is the operator's
// to read: the reasons name files, addresses and settings. A nil token
// answers everyone with the reasons.
func OperatorReady(token []byte, ready func(context.Context) error, degraded func() error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		code, word, why := http.StatusOK, "ready", error(nil)
		if err := ready(ctx); err != nil {
			code, word, why = http.StatusServiceUnavailable, "not ready", err
		} else if degraded != nil {
			if err := degraded(); err != nil {
				word, why = "degraded", err
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		if why != nil && (token == nil || OperatorAuthorized(token, r)) {
			fmt.Fprintf(w, "%s: %s\n", word, why)
			return
		}
		fmt.Fprintf(w, "%s\n", word)
	})
}

// Metrics serves GET /metrics from reg.
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// OperatorAuthorized reports whether r carries "Authorization: Bearer
// token", compared in constant time. An empty token authorizes nothing.
func OperatorAuthorized(token []byte, r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && len(token) > 0 && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), token) == 1
}

// OperatorOnly serves h to requests that carry token (OperatorAuthorized):
// anyone else gets 401. Without a token, h answers no one (403), saying
// which setting turns it on.
func OperatorOnly(token []byte, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(token) == 0 {
			http.Error(w, "this route is the operator's and no operator token is set: set TESTFIRST_OPERATOR_TOKEN_FILE to a file holding one (e.g. openssl rand -hex 32), then send it as Authorization: Bearer TOKEN", http.StatusForbidden)
			return
		}
		if !OperatorAuthorized(token, r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="testfirst operator"`)
			http.Error(w, "send the operator token (TESTFIRST_OPERATOR_TOKEN_FILE) as Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

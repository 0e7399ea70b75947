package handlers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestProbesTellTheWorldNoInternals: /readyz answers anyone with its
// status alone (the code and one word, which the orchestrator's probe
// needs), and why only to a request that carries the operator token;
// /metrics answers only such a request.
func TestProbesTellTheWorldNoInternals(t *testing.T) {
	const token = "op-token-5b1e9c0d2a7f4e38"
	internal := errors.New(`open SQLite /srv/testfirst/var/testfirst.db: dial tcp 10.3.0.7:5432: connection refused`)
	for _, tc := range []struct {
		name              string
		ready, degraded   error
		code              int
		public, operators string
	}{
		{"ready", nil, nil, 200, "ready\n", "ready\n"},
		{"degraded", nil, internal, 200, "degraded\n", "degraded: " + internal.Error() + "\n"},
		{"not ready", internal, nil, 503, "not ready\n", "not ready: " + internal.Error() + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "testfirst_probe_test_total", Help: "a sample"}))
			mux := http.NewServeMux()
			RegisterProbes(mux, ServiceConfig{Ready: func(context.Context) error { return tc.ready },
				Degraded: func() error { return tc.degraded }, Registry: reg, OperatorToken: []byte(token)})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			get := func(path, auth string) (int, string, http.Header) {
				t.Helper()
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b), resp.Header
			}
			for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token} {
				if code, body, _ := get("/readyz", auth); code != tc.code || body != tc.public {
					t.Errorf("GET /readyz with %q = %d %q; want %d %q", auth, code, body, tc.code, tc.public)
				}
				code, body, h := get("/metrics", auth)
				if code != http.StatusUnauthorized || strings.Contains(body, "testfirst_") || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("GET /metrics with %q = %d %q; want 401, no sample", auth, code, body)
				}
			}
			if code, body, _ := get("/readyz", "Bearer "+token); code != tc.code || body != tc.operators {
				t.Errorf("GET /readyz with the token = %d %q; want %d %q", code, body, tc.code, tc.operators)
			}
			if code, body, _ := get("/metrics", "Bearer "+token); code != 200 || !strings.Contains(body, "testfirst_probe_test_total 0") {
				t.Errorf("GET /metrics with the token = %d %q; want the samples", code, body)
			}
			if code, body, _ := get("/healthz", ""); code != 200 || body != "ok\n" {
				t.Errorf("GET /healthz = %d %q", code, body)
			}
		})
	}

	// Without a token configured, /readyz says its status alone to
	// everyone and /metrics answers no one, saying how to turn it on.
	mux := http.NewServeMux()
	RegisterProbes(mux, ServiceConfig{Ready: func(context.Context) error { return internal }, Registry: prometheus.NewRegistry()})
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || rec.Body.String() != "not ready\n" {
		t.Errorf("GET /readyz without a token configured = %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "TESTFIRST_OPERATOR_TOKEN_FILE") {
		t.Errorf("GET /metrics without a token configured = %d %q; want 403 saying which setting turns it on", rec.Code, rec.Body)
	}
}

package test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestServeProbesTellTheWorldNoInternals drives the real service as
// someone on the network would: a service that cannot grade (no store
// keys) answers /readyz to anyone with its status alone, never why (the
// reason names the store's files and settings), and /metrics to no one
// without the operator token; with it, both as before.
func TestServeProbesTellTheWorldNoInternals(t *testing.T) {
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	s := startServe(t, gh, pipeSecret)
	waitFor(t, "grading to be decided off", 30*time.Second, func() bool { return strings.Contains(s.log(), "pull requests will not be graded") }, s.log)
	anonymous := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := anonymous("/readyz"); code != http.StatusOK || body != "degraded\n" {
		t.Errorf("anonymous GET /readyz = %d %q; want 200 \"degraded\" and no more", code, body)
	}
	if code, body := anonymous("/metrics"); code != http.StatusUnauthorized || strings.Contains(body, "testfirst_") || strings.Contains(body, "go_") {
		t.Errorf("anonymous GET /metrics = %d %q; want 401 and no sample", code, body)
	}
	if code, body := s.get(t, "/readyz"); code != http.StatusOK || !strings.HasPrefix(body, "degraded: pull requests are not graded: ") {
		t.Errorf("the operator's GET /readyz = %d %q; want it degraded, saying why", code, body)
	}
	if code, body := s.get(t, "/metrics"); code != http.StatusOK || !strings.Contains(body, "testfirst_webhook_deliveries_total") && !strings.Contains(body, "go_goroutines") {
		t.Errorf("the operator's GET /metrics = %d; want the samples:\n%s", code, body)
	}
}

package e2b_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/sandbox/e2b"
	"github.com/testfirst-app/testfirst/test/fakee2b"
)

const apiKey = "e2b_0123456789abcdef0123456789abcdef01234567"

// restClient returns a client of a fake without an engine (no sandbox can
// be created) whose waits are recorded, not slept.
func restClient(t *testing.T, key string) (*fakee2b.Server, *e2b.Client, *[]time.Duration) {
	t.Helper()
	f := fakee2b.New(nil, apiKey)
	t.Cleanup(f.Close)
	c := f.Client(key)
	var waits []time.Duration
	c.Wait = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return f, c, &waits
}

// TestClientRetries: a 429 is tried again after its Retry-After, a 5xx
// after a backoff, and both only a bounded number of times.
func TestClientRetries(t *testing.T) {
	f, c, waits := restClient(t, apiKey)
	f.FailNext("/v2/sandboxes", 1, 429, "3")
	f.FailNext("/v2/sandboxes", 1, 502, "")
	list, err := c.List(context.Background(), map[string]string{"app.testfirst.sandbox": "1"})
	if err != nil || len(list) != 0 {
		t.Fatalf("list after a 429 and a 502: %v %v", list, err)
	}
	if len(*waits) != 2 || (*waits)[0] != 3*time.Second || (*waits)[1] != time.Second {
		t.Errorf("waits %v, want 3s (Retry-After) then 1s (backoff)", *waits)
	}
	if n := len(f.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	q := f.Requests()[2].Query
	if q.Get("metadata") != "app.testfirst.sandbox=1" || q.Get("state") != "running" {
		t.Errorf("list query %v", q)
	}

	f.FailNext("/sandboxes/nope/timeout", 10, 503, "")
	err = c.SetTimeout(context.Background(), "nope", time.Minute)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "gave up after 4 tries") {
		t.Errorf("five hundreds without end: %v", err)
	}
	if n := len(f.Requests()); n != 3+4 {
		t.Errorf("%d requests, want 4 more", n-3)
	}
}

// TestClientErrors: answers a person must act on say what to do, and are
// not tried again.
func TestClientErrors(t *testing.T) {
	f, c, _ := restClient(t, "e2b_wrong")
	_, err := c.Create(context.Background(), e2b.NewSandbox{TemplateID: "testfirst-agent", Timeout: 60})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "e2b.api_key_file") {
		t.Errorf("a wrong key: %v", err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("a 401 was tried %d times", n)
	}

	_, c, _ = restClient(t, apiKey)
	_, err = c.Create(context.Background(), e2b.NewSandbox{TemplateID: "no-such-template", Timeout: 60})
	if err == nil || !strings.Contains(err.Error(), `no template "no-such-template"`) || !strings.Contains(err.Error(), "e2b.template") {
		t.Errorf("an unknown template: %v", err)
	}
	err = c.Kill(context.Background(), "igone")
	if !e2b.IsNotFound(err) || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("killing a sandbox that is gone: %v", err)
	}
	var ae *e2b.APIError
	if !errors.As(err, &ae) || ae.Status != 404 {
		t.Errorf("not an APIError: %T", err)
	}
	if _, err := (&e2b.Client{}).List(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no API key") {
		t.Errorf("no key: %v", err)
	}
}

package handlers

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/testfirst-app/testfirst/github"
)

// fixtures holds real webhook payloads as GitHub sends them.
var fixtures = filepath.Join("..", "..", "shared", "fixtures", "github-webhooks")

// recordingIntake is a hand-written Intake that records what it accepts
// and answers duplicate for ids it has seen.
type recordingIntake struct {
	mu       sync.Mutex
	accepted []github.Delivery
	seen     map[string]bool
	err      error
}

func (r *recordingIntake) Accept(ctx context.Context, d github.Delivery) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return false, r.err
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[d.ID] {
		return true, nil
	}
	r.seen[d.ID] = true
	r.accepted = append(r.accepted, d)
	return false, nil
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

type harness struct {
	h      *Webhook
	intake *recordingIntake
	reg    *prometheus.Registry
	logs   *bytes.Buffer
}

func newHarness(secrets ...string) *harness {
	var bs [][]byte
	for _, s := range secrets {
		bs = append(bs, []byte(s))
	}
	reg := prometheus.NewRegistry()
	logs := &bytes.Buffer{}
	in := &recordingIntake{}
	return &harness{
		h:      NewWebhook(bs, in, NewMetrics(reg), slog.New(slog.NewJSONHandler(logs, nil))),
		intake: in, reg: reg, logs: logs,
	}
}

func (h *harness) post(event, delivery string, body []byte, signature string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if event != "" {
		req.Header.Set("X-GitHub-Event", event)
	}
	if delivery != "" {
		req.Header.Set("X-GitHub-Delivery", delivery)
	}
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	return rec
}

func (h *harness) count(event, result string) float64 {
	return testutil.ToFloat64(h.h.metrics.Deliveries.WithLabelValues(event, result))
}

func fixture(t *testing.T, event, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, event, name))
	if err != nil {
		t.Fatalf("fixture: %v (the fixtures live in shared/fixtures beside the checkout)", err)
	}
	return data
}

// TestAcceptsEveryHandledFixture posts every real payload of every
// handled event, signed, and checks it reaches the intake with its action
// and installation.
func TestAcceptsEveryHandledFixture(t *testing.T) {
	h := newHarness("s3cret")
	n := 0
	for _, event := range github.HandledEvents {
		files, _ := filepath.Glob(filepath.Join(fixtures, event, "*.json"))
		for _, f := range files {
			name := event + "/" + filepath.Base(f)
			t.Run(name, func(t *testing.T) {
				body := fixture(t, event, filepath.Base(f))
				rec := h.post(event, name, body, sign("s3cret", body))
				if rec.Code != http.StatusAccepted {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				var env struct {
					Action       string `json:"action"`
					Installation *struct {
						ID int64 `json:"id"`
					} `json:"installation"`
				}
				json.Unmarshal(body, &env)
				got := h.intake.accepted[len(h.intake.accepted)-1]
				if got.ID != name || got.Event != event || got.Action != env.Action || !bytes.Equal(got.Payload, body) {
					t.Errorf("intake got %s %s %s", got.ID, got.Event, got.Action)
				}
				if env.Installation != nil && got.Installation != env.Installation.ID {
					t.Errorf("installation %d, want %d", got.Installation, env.Installation.ID)
				}
			})
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d fixtures found under %s", n, fixtures)
	}
	if got := h.count("issues", ResultAccepted); got == 0 {
		t.Error("no accepted issues deliveries counted")
	}
}

func TestIntakeAnswers(t *testing.T) {
	labeled := func(t *testing.T) []byte { return fixture(t, "issues", "labeled.payload.json") }
	tests := []struct {
		name    string
		secrets []string
		send    func(t *testing.T, h *harness) *httptest.ResponseRecorder
		status  int
		result  string
		event   string
		intake  int
	}{
		{"accepted", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "d1", labeled(t), sign("a", labeled(t)))
		}, 202, ResultAccepted, "issues", 1},
		{"redelivery", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			h.post("issues", "d1", labeled(t), sign("a", labeled(t)))
			return h.post("issues", "d1", labeled(t), sign("a", labeled(t)))
		}, 202, ResultDuplicate, "issues", 1},
		{"rotated secret", []string{"new", "old"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "d1", labeled(t), sign("old", labeled(t)))
		}, 202, ResultAccepted, "issues", 1},
		{"wrong signature", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "d1", labeled(t), sign("b", labeled(t)))
		}, 401, ResultBadSignature, "issues", 0},
		{"no signature", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "d1", labeled(t), "")
		}, 401, ResultBadSignature, "issues", 0},
		{"no secrets configured", nil, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "d1", labeled(t), sign("", labeled(t)))
		}, 401, ResultBadSignature, "issues", 0},
		{"unsigned unknown event", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("made_up", "d1", []byte(`{}`), "")
		}, 401, ResultBadSignature, "other", 0},
		{"unsigned without event header", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("", "d1", labeled(t), "")
		}, 401, ResultBadSignature, "other", 0},
		{"signed without event header", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("", "d1", labeled(t), sign("a", labeled(t)))
		}, 400, ResultMalformed, "other", 0},
		{"signed empty body", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "d1", nil, sign("a", nil))
		}, 400, ResultMalformed, "issues", 0},
		{"unhandled event", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			body := fixture(t, "github_app_authorization", "revoked.payload.json")
			return h.post("github_app_authorization", "d1", body, sign("a", body))
		}, 202, ResultIgnored, "other", 0},
		{"malformed json", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			body := []byte(`{"action": "labeled", "issue": `)
			return h.post("issues", "d1", body, sign("a", body))
		}, 400, ResultMalformed, "issues", 0},
		{"no delivery id", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			return h.post("issues", "", labeled(t), sign("a", labeled(t)))
		}, 400, ResultMalformed, "issues", 0},
		{"oversized", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			body := bytes.Repeat([]byte(" "), MaxWebhookBody+1)
			return h.post("issues", "d1", body, sign("a", body))
		}, 413, ResultTooLarge, "issues", 0},
		{"intake down", []string{"a"}, func(t *testing.T, h *harness) *httptest.ResponseRecorder {
			h.intake.err = errors.New("database is locked")
			return h.post("issues", "d1", labeled(t), sign("a", labeled(t)))
		}, 503, ResultError, "issues", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(tt.secrets...)
			rec := tt.send(t, h)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			if got := h.count(tt.event, tt.result); got < 1 {
				t.Errorf("testfirst_webhook_deliveries_total{event=%q,result=%q} = %v", tt.event, tt.result, got)
			}
			if len(h.intake.accepted) != tt.intake {
				t.Errorf("intake got %d deliveries, want %d", len(h.intake.accepted), tt.intake)
			}
			// One JSON log line per delivery, carrying the result.
			lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
			var last map[string]any
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
				t.Fatalf("log line %q: %v", lines[len(lines)-1], err)
			}
			if last["msg"] != "webhook "+tt.result || last["status"] != float64(tt.status) {
				t.Errorf("log line %v", last)
			}
		})
	}
}

func TestWebhookOnlyPost(t *testing.T) {
	h := newHarness("a")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/webhook", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	rec := httptest.NewRecorder()
	Health().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 {
		t.Errorf("healthz %d", rec.Code)
	}
	ready := errors.New("migration 3 not applied")
	rec = httptest.NewRecorder()
	Ready(func(context.Context) error { return ready }, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "migration 3 not applied") {
		t.Errorf("readyz %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	Ready(func(context.Context) error { return nil }, func() error { return nil }).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 200 || rec.Body.String() != "ready\n" {
		t.Errorf("readyz ready: %d %s", rec.Code, rec.Body)
	}
	// Ready but unable to grade: degraded, and why.
	rec = httptest.NewRecorder()
	Ready(func(context.Context) error { return nil }, func() error { return errors.New("no store keys") }).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 200 || rec.Body.String() != "degraded: no store keys\n" {
		t.Errorf("readyz degraded: %d %s", rec.Code, rec.Body)
	}
	h := newHarness("a")
	body := fixture(t, "ping", filepath.Base(firstFile(t, "ping")))
	h.post("ping", "p1", body, sign("a", body))
	rec = httptest.NewRecorder()
	MetricsHandler(h.reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(out), `testfirst_webhook_deliveries_total{event="ping",result="accepted"} 1`) {
		t.Errorf("metrics lack the delivery:\n%s", out)
	}
}

func firstFile(t *testing.T, event string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(fixtures, event, "*.json"))
	if len(files) == 0 {
		t.Fatalf("no %s fixture", event)
	}
	return files[0]
}

// FuzzWebhook: whatever arrives, the handler answers without panicking and
// nothing unsigned reaches the intake.
func FuzzWebhook(f *testing.F) {
	f.Add("issues", "d1", []byte(`{"action":"labeled"}`), "sha256=00")
	f.Add("ping", "", []byte(`{}`), "")
	f.Add("", "x", []byte{0xff, 0xfe}, "sha1=abc")
	f.Fuzz(func(t *testing.T, event, delivery string, body []byte, signature string) {
		h := newHarness("fuzz-secret")
		req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", delivery)
		req.Header.Set("X-Hub-Signature-256", signature)
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		if len(h.intake.accepted) > 0 && signature != sign("fuzz-secret", body) {
			t.Fatalf("an unsigned delivery reached the intake")
		}
		if rec.Code == 0 {
			t.Fatal("no answer")
		}
	})
}

// TestWebhookBoundsLargeUnverifiedBodies: bodies are read before their
// signature can be checked, so large ones are read a few at a time. Posts
// that hold the large-body reads (slow, 20 MiB each, signed with anything)
// leave the next large post refused at once with 503, while a delivery of
// the usual size is still read and recorded; without the bound every one
// of them is read into memory together.
func TestWebhookBoundsLargeUnverifiedBodies(t *testing.T) {
	h := newHarness("s3cret")
	srv := httptest.NewServer(h.h)
	defer srv.Close()
	const large, holders = 20 << 20, 4
	defer holdSlowPosts(srv.URL, holders, large, 1<<20)()
	time.Sleep(500 * time.Millisecond) // every holder's read is under way

	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(make([]byte, large)))
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
	begin := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || time.Since(begin) > 5*time.Second {
		t.Errorf("a large post while %d are read: %d after %s; want 503 at once", holders, resp.StatusCode, time.Since(begin))
	}

	body := fixture(t, "issues", "labeled.payload.json")
	if rec := h.post("issues", "d-small", body, sign("s3cret", body)); rec.Code != http.StatusAccepted {
		t.Errorf("a delivery of the usual size while large ones are read: %d", rec.Code)
	}
}

// TestWebhookBoundsSmallUnverifiedBodies: bodies under 1 MiB are read as
// they come, but not without end: 64 slow senders each declaring 1 MiB
// fill the budget, and the next post is refused at once with 503 rather
// than read (before, every one was read, so thousands of them held
// gigabytes). Once they are gone a delivery is taken again.
func TestWebhookBoundsSmallUnverifiedBodies(t *testing.T) {
	h := newHarness("s3cret")
	srv := httptest.NewServer(h.h)
	defer srv.Close()
	const size = largeBodyFrom
	holders := smallBodiesBudget / size
	release := holdSlowPosts(srv.URL, holders, size, 1<<10)
	defer release()
	time.Sleep(500 * time.Millisecond)

	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(make([]byte, size)))
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a post while %d slow ones hold %d MiB: %d; want 503 at once", holders, smallBodiesBudget>>20, resp.StatusCode)
	}

	release()
	body := fixture(t, "issues", "labeled.payload.json")
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		rec := h.post("issues", "d-after", body, sign("s3cret", body))
		if rec.Code == http.StatusAccepted {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("a delivery after the slow senders left: %d", rec.Code)
		}
	}
}

// holdSlowPosts starts n unsigned posts to url, each declaring size bytes
// and sending only the first sent of them, so that the handler holds each
// one's read; release ends them all (and may be called again).
func holdSlowPosts(url string, n int, size int64, sent int) (release func()) {
	held := make([]*io.PipeWriter, 0, n)
	for range n {
		pr, pw := io.Pipe()
		held = append(held, pw)
		req, _ := http.NewRequest(http.MethodPost, url, pr)
		req.ContentLength = size
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
		go func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		pw.Write(make([]byte, sent)) // the read has begun
	}
	return func() {
		for _, pw := range held {
			pw.CloseWithError(io.ErrUnexpectedEOF)
		}
		held = nil
	}
}

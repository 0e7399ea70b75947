package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/handlers"
)

// Webhook proxy: for local development without a public URL, the service
// reads deliveries from a smee-compatible channel (smee.io, or a
// self-hosted one) and hands each to its own webhook intake, where the
// signature is verified as for a delivery GitHub sent directly. The
// channel is server-sent events; each event's data is a JSON object of the
// delivery's headers (lowercase names) and its body.

// proxyRetry is how long the forwarder waits before it connects again
// after the channel closed or failed.
const proxyRetry = 2 * time.Second

// maxProxyEvent bounds one event's data: GitHub's payloads are at most
// 25 MB.
const maxProxyEvent = 26 << 20

// forwardedHeaders are the headers a delivery keeps on its way from the
// channel into the intake.
var forwardedHeaders = []string{"X-GitHub-Event", "X-GitHub-Delivery", "X-Hub-Signature-256", "X-Hub-Signature", "Content-Type", "User-Agent",
	"X-GitHub-Hook-ID", "X-GitHub-Hook-Installation-Target-ID", "X-GitHub-Hook-Installation-Target-Type"}

// forwardWebhooks reads the channel at url until ctx ends, connecting
// again after each failure, and hands every delivery to intake.
func forwardWebhooks(ctx context.Context, url string, intake http.Handler, log *slog.Logger) {
	log = log.With("webhook_proxy", url)
	log.InfoContext(ctx, "webhook proxy: reading deliveries from the channel")
	for ctx.Err() == nil {
		err := readChannel(ctx, url, intake, log)
		if ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "webhook proxy: channel closed; connecting again", "err", err, "retry", proxyRetry)
		select {
		case <-ctx.Done():
		case <-time.After(proxyRetry):
		}
	}
}

// readChannel reads one connection to the channel.
func readChannel(ctx context.Context, url string, intake http.Handler, log *slog.Logger) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("channel answered %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxProxyEvent)
	var event string
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 && (event == "" || event == "message") {
				forwardEvent(ctx, data.Bytes(), intake, log)
			}
			event = ""
			data.Reset()
		case strings.HasPrefix(line, ":"): // a comment, a keep-alive
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("channel ended the stream")
}

// forwardEvent hands one channel event to the intake as a POST to the
// webhook path. An event that is not a delivery (smee's "ready" message,
// for one) is skipped.
func forwardEvent(ctx context.Context, data []byte, intake http.Handler, log *slog.Logger) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		log.WarnContext(ctx, "webhook proxy: an event that is not a JSON object, skipped", "err", err)
		return
	}
	body, ok := fields["body"]
	if !ok || fields["x-github-event"] == nil {
		return
	}
	// The signature covers the bytes GitHub sent: the channel keeps them
	// as rawBody when it can, else as the body it relays.
	if raw, ok := fields["rawBody"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			body = json.RawMessage(s)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, handlers.WebhookPath, bytes.NewReader(body))
	if err != nil {
		return
	}
	for _, h := range forwardedHeaders {
		var v string
		if raw, ok := fields[strings.ToLower(h)]; ok && json.Unmarshal(raw, &v) == nil {
			req.Header.Set(h, v)
		}
	}
	rec := &statusRecorder{header: http.Header{}}
	intake.ServeHTTP(rec, req)
	log.InfoContext(ctx, "webhook proxy: delivery handed to the intake", "delivery", req.Header.Get("X-GitHub-Delivery"),
		"event", req.Header.Get("X-GitHub-Event"), "status", rec.status)
}

// statusRecorder is the response writer of a forwarded delivery: the
// intake's status is logged, its body dropped.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(b), nil
}
func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

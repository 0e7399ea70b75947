package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/testfirst-app/testfirst/github"
)

// MaxWebhookBody is the largest delivery accepted: GitHub caps payloads at
// 25 MiB.
const MaxWebhookBody = 25 << 20

// Intake records verified deliveries.
type Intake interface {
	// Accept records the delivery once, with the jobs it needs, in one
	// transaction. It reports duplicate when the delivery id was recorded
	// before (GitHub's redelivery keeps the id and the body), or the same
	// body under another id (a signed body sent again). An error means
	// nothing was recorded.
	Accept(ctx context.Context, d github.Delivery) (duplicate bool, err error)
}

// A body is read before its signature can be checked, so anyone who can
// reach the service makes it hold what they send. Bodies up to
// largeBodyFrom bytes (every delivery of the events the app subscribes to,
// in practice) are read as they come while the lengths they declare (at
// least smallBodyCost each, for the connection's own buffers) fit in
// smallBodiesBudget; larger ones, or ones of unknown length, maxLargeBodies
// at a time. The rest are refused at once with 503: GitHub then shows a
// failed delivery, and the redelivery sweep asks for it again. The
// server's ReadTimeout bounds how long a slow sender holds its share.
const (
	largeBodyFrom     = 1 << 20
	maxLargeBodies    = 2
	smallBodiesBudget = 64 << 20
	smallBodyCost     = 4 << 10
)

// Webhook is the POST /webhook handler.
type Webhook struct {
	secrets [][]byte
	intake  Intake
	metrics *Metrics
	log     *slog.Logger
	// large holds a token per large body being read.
	large chan struct{}
	// small is the sum of what the small bodies being read declare.
	mu    sync.Mutex
	small int64
}

// reserve takes n bytes of the small bodies' budget, if they fit.
func (h *Webhook) reserve(n int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.small+n > smallBodiesBudget {
		return false
	}
	h.small += n
	return true
}

func (h *Webhook) release(n int64) {
	h.mu.Lock()
	h.small -= n
	h.mu.Unlock()
}

// NewWebhook returns the webhook handler. Every secret verifies a delivery
// (rotation); with none, every delivery is refused.
func NewWebhook(secrets [][]byte, intake Intake, metrics *Metrics, log *slog.Logger) *Webhook {
	return &Webhook{secrets: secrets, intake: intake, metrics: metrics, log: log, large: make(chan struct{}, maxLargeBodies)}
}

func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	id := r.Header.Get("X-GitHub-Delivery")
	event := r.Header.Get("X-GitHub-Event")
	log := h.log.With("delivery", id, "event", eventLabel(event))
	answer := func(status int, result, msg string, attrs ...any) {
		h.metrics.Deliveries.WithLabelValues(eventLabel(event), result).Inc()
		log.LogAttrs(r.Context(), level(status), "webhook "+result, slogAttrs(append(attrs, "status", status))...)
		http.Error(w, msg, status)
	}

	if r.ContentLength > MaxWebhookBody {
		answer(http.StatusRequestEntityTooLarge, ResultTooLarge, "payload larger than 25 MiB")
		return
	}
	if r.ContentLength < 0 || r.ContentLength > largeBodyFrom {
		select {
		case h.large <- struct{}{}:
			defer func() { <-h.large }()
		default:
			answer(http.StatusServiceUnavailable, ResultBusy, "too many large deliveries are being read; try again")
			return
		}
	} else {
		cost := max(r.ContentLength, smallBodyCost)
		if !h.reserve(cost) {
			answer(http.StatusServiceUnavailable, ResultBusy, "too many deliveries are being read; try again")
			return
		}
		defer h.release(cost)
	}
	body, tooLarge, err := github.ReadBody(http.MaxBytesReader(w, r.Body, MaxWebhookBody+1), MaxWebhookBody, r.ContentLength)
	var maxErr *http.MaxBytesError
	switch {
	case tooLarge || errors.As(err, &maxErr):
		answer(http.StatusRequestEntityTooLarge, ResultTooLarge, "payload larger than 25 MiB")
		return
	case err != nil:
		answer(http.StatusBadRequest, ResultMalformed, "cannot read body", "err", err)
		return
	}
	d, err := github.VerifyDelivery(r.Header, body, h.secrets)
	switch {
	case errors.Is(err, github.ErrBadSignature):
		answer(http.StatusUnauthorized, ResultBadSignature, "signature does not match")
		return
	case err != nil:
		answer(http.StatusBadRequest, ResultMalformed, "malformed delivery", "err", err)
		return
	case !d.Handled:
		answer(http.StatusAccepted, ResultIgnored, "event not handled")
		return
	}
	log = log.With("installation", d.Installation, "action", d.Action)
	duplicate, err := h.intake.Accept(r.Context(), d)
	switch {
	case err != nil:
		// Nothing was recorded: GitHub shows a failed delivery, and the
		// redelivery sweeper asks for it again.
		answer(http.StatusServiceUnavailable, ResultError, "could not record the delivery", "err", err)
	case duplicate:
		answer(http.StatusAccepted, ResultDuplicate, "already recorded")
	default:
		answer(http.StatusAccepted, ResultAccepted, "accepted")
	}
}

func level(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func slogAttrs(kv []any) []slog.Attr {
	var out []slog.Attr
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			out = append(out, slog.Any(k, kv[i+1]))
		}
	}
	return out
}

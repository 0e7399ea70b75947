package github

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// Retry defaults: a blip of GitHub (a 502, a refused connection, a
// secondary rate limit with a short Retry-After) is absorbed inside the
// call, so a job does not rerun a whole grade for it. Anything longer is
// the job queue's to retry, after GitHub's advice.
const (
	// DefaultRetryAttempts is how many times one call is tried in all.
	DefaultRetryAttempts = 4
	// DefaultRetryBackoff is the first wait after a server error or a
	// refused connection; it doubles with each attempt (with jitter).
	DefaultRetryBackoff = 500 * time.Millisecond
	// DefaultMaxRetryWait is the longest Retry-After waited inside a call;
	// a longer one is returned to the caller (a job snoozes for it).
	DefaultMaxRetryWait = 10 * time.Second
	// secondaryDefaultWait is GitHub's advice for a secondary rate limit
	// that names no Retry-After: wait at least a minute.
	secondaryDefaultWait = time.Minute
)

// RetryPolicy says how a call that GitHub refused for a passing reason is
// tried again. The zero value takes the defaults above.
type RetryPolicy struct {
	// Attempts is how many times one call is tried in all.
	Attempts int
	// Backoff is the first wait after a server error; it doubles.
	Backoff time.Duration
	// MaxWait is the longest Retry-After waited inside a call.
	MaxWait time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultRetryAttempts
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultRetryBackoff
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultMaxRetryWait
	}
	return p
}

// Reasons a call was tried again, as the metrics label them.
const (
	retryServerError   = "server_error"
	retryUnreachable   = "unreachable"
	retrySecondaryRate = "secondary_rate_limit"
	retryTokenExpired  = "token_expired"
)

// retryTransport tries a request again when GitHub answered a server error,
// could not be reached, asked to wait (a secondary rate limit: 403 with
// GitHub's message, or 429) or refused an installation token it had
// issued (401: the token is dropped and a new one minted, once).
//
// Server errors and transport failures are retried only for requests that
// may be repeated: reads, updates (PATCH, PUT, DELETE) and check-run
// creation (the job finds its run again by external id). A
// rate-limited or unauthorised request was refused before it was
// processed, so any method is tried again.
type retryTransport struct {
	next    http.RoundTripper // when auth is nil
	auth    *installationAuth // an installation's token, replaceable
	policy  RetryPolicy
	metrics *Metrics
}

func newRetryTransport(next http.RoundTripper, auth *installationAuth, p RetryPolicy, m *Metrics) *retryTransport {
	return &retryTransport{next: next, auth: auth, policy: p.withDefaults(), metrics: m}
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	refreshed := false
	backoff := t.policy.Backoff
	for attempt := 1; ; attempt++ {
		rt := t.next
		var tr *ghinstallation.Transport
		if t.auth != nil {
			tr = t.auth.current()
			rt = tr
		}
		r, err := rewind(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := rt.RoundTrip(r)
		last := attempt >= t.policy.Attempts
		var (
			reason string
			wait   time.Duration
		)
		switch {
		case err != nil:
			if last || !repeatable(req) || ctx.Err() != nil {
				return nil, err
			}
			reason, wait = retryUnreachable, jitter(backoff)
		case resp.StatusCode == http.StatusUnauthorized && t.auth != nil && !refreshed:
			// GitHub no longer takes the token it issued (revoked, or
			// expired before the time it said): mint a new one, once.
			refreshed = true
			reason = retryTokenExpired
			t.auth.replace(tr)
		case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
			if last || !repeatable(req) {
				return resp, nil
			}
			reason, wait = retryServerError, jitter(backoff)
		case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
			d, secondary := secondaryLimit(resp)
			if !secondary {
				return resp, nil
			}
			t.metrics.rateLimited()
			if last || d > t.policy.MaxWait {
				return resp, nil // the caller waits, as GitHub asked
			}
			reason, wait = retrySecondaryRate, d
		default:
			return resp, nil
		}
		if resp != nil {
			drain(resp)
		}
		t.metrics.retried(reason, wait)
		if wait > 0 {
			if err := sleepContext(ctx, wait); err != nil {
				return nil, err
			}
		}
		if reason == retryServerError || reason == retryUnreachable {
			backoff *= 2
		}
	}
}

// rewind returns the request for an attempt: the request itself the first
// time, then a copy with its body read again.
func rewind(req *http.Request, attempt int) (*http.Request, error) {
	if attempt == 1 || req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("retry GitHub request: its body cannot be read again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

// repeatable reports whether a request may be sent again after a server
// error or a broken connection.
func repeatable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPost:
		return strings.HasSuffix(req.URL.Path, "/check-runs")
	}
	return false
}

// secondaryLimit reports whether resp is a secondary rate limit, and how
// long GitHub asked to wait: Retry-After, else a minute. A 403 is one only
// when GitHub's message says so; a primary limit (X-RateLimit-Remaining 0)
// is not, and is left to the caller, which waits for its reset.
func secondaryLimit(resp *http.Response) (time.Duration, bool) {
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		return 0, false
	}
	after, hasAfter := retryAfterHeader(resp)
	if resp.StatusCode == http.StatusForbidden {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || !bytes.Contains(bytes.ToLower(body), []byte("secondary rate limit")) {
			return 0, false
		}
	}
	if !hasAfter {
		return secondaryDefaultWait, true
	}
	return after, true
}

// retryAfterHeader reads Retry-After in seconds.
func retryAfterHeader(resp *http.Response) (time.Duration, bool) {
	s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}

// drain reads and closes a response that is answered by another attempt,
// so its connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// jitter spreads d by up to a fifth either way, so that replicas that
// failed together do not retry together.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// installationAuth holds an installation's token transport; replace drops
// the token so the next request mints a new one.
type installationAuth struct {
	mu   sync.Mutex
	cur  *ghinstallation.Transport
	make func() *ghinstallation.Transport
}

func (a *installationAuth) current() *ghinstallation.Transport {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur
}

// replace drops failed's token, unless another request did already.
func (a *installationAuth) replace(failed *ghinstallation.Transport) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == failed {
		a.cur = a.make()
	}
}

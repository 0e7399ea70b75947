package github

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"time"

	gh "github.com/google/go-github/v66/github"
)

// ErrNotFound is wrapped by errors for things GitHub says do not exist (or
// that the installation cannot see). It is also fs.ErrNotExist, so code
// that reads files through a narrow interface can tell a missing file from
// a failed call without importing this package.
var ErrNotFound error = notFound{}

// notFound is ErrNotFound's type.
type notFound struct{}

func (notFound) Error() string { return "not found on GitHub" }

// Is makes ErrNotFound match fs.ErrNotExist.
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// APIError is a failed GitHub call.
type APIError struct {
	// Op says what was being done, e.g. "create check run on octo/widgets".
	Op string
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Retryable is true for rate limits, server errors and transport
	// failures: the same call may succeed later.
	Retryable bool
	// RetryAfter is how long GitHub asked to wait, when it said.
	RetryAfter time.Duration
	Err        error
}

func (e *APIError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: GitHub answered %d: %v", e.Op, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *APIError) Unwrap() error { return e.Err }

// classify turns a go-github result into nil or an *APIError.
func classify(op string, resp *gh.Response, err error, now time.Time) error {
	if err == nil {
		return nil
	}
	e := &APIError{Op: op, Err: err}
	if resp != nil && resp.Response != nil {
		e.Status = resp.StatusCode
	}
	var rate *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	switch {
	case errors.As(err, &rate):
		e.Retryable = true
		e.RetryAfter = max(rate.Rate.Reset.Time.Sub(now), time.Second)
	case errors.As(err, &abuse):
		e.Retryable = true
		// GitHub's advice without a Retry-After: wait at least a minute.
		e.RetryAfter = secondaryDefaultWait
		if d := abuse.GetRetryAfter(); d > 0 {
			e.RetryAfter = d
		}
	case e.Status == http.StatusTooManyRequests:
		e.Retryable = true
		e.RetryAfter = retryAfter(resp.Response, now)
	case e.Status >= 500 || e.Status == 0:
		e.Retryable = true
		if e.Status != 0 {
			e.RetryAfter = retryAfter(resp.Response, now)
		}
	case e.Status == http.StatusForbidden && resp.Header.Get("x-ratelimit-remaining") == "0":
		e.Retryable = true
		e.RetryAfter = retryAfter(resp.Response, now)
	case e.Status == http.StatusNotFound:
		e.Err = fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return e
}

// retryAfter reads retry-after (seconds) or, when the rate limit is spent,
// x-ratelimit-reset (Unix time). GitHub sends the reset on every answer;
// while calls remain it says nothing about when to try again.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp == nil {
		return 0
	}
	if d, ok := retryAfterHeader(resp); ok {
		return d
	}
	if resp.Header.Get("x-ratelimit-remaining") != "0" {
		return 0
	}
	if reset, err := strconv.ParseInt(resp.Header.Get("x-ratelimit-reset"), 10, 64); err == nil {
		if d := time.Unix(reset, 0).Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// IsRetryable reports whether err is a GitHub failure worth retrying, and
// how long GitHub asked to wait (0: no advice).
func IsRetryable(err error) (bool, time.Duration) {
	var e *APIError
	if errors.As(err, &e) {
		return e.Retryable, e.RetryAfter
	}
	return false, 0
}

package github

import (
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"testing"
	"time"

	gh "github.com/google/go-github/v66/github"
)

func response(status int, header map[string]string) *gh.Response {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	return &gh.Response{Response: &http.Response{StatusCode: status, Header: h}}
}

func TestClassify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	base := errors.New("boom")
	tests := []struct {
		name      string
		resp      *gh.Response
		err       error
		retryable bool
		after     time.Duration
		notFound  bool
	}{
		{"bad gateway", response(502, nil), base, true, 0, false},
		{"unavailable with retry-after", response(503, map[string]string{"retry-after": "7"}), base, true, 7 * time.Second, false},
		{"no response", nil, base, true, 0, false},
		{"429 retry-after", response(429, map[string]string{"retry-after": "30"}), base, true, 30 * time.Second, false},
		{"403 rate limit reset", response(403, map[string]string{"x-ratelimit-remaining": "0", "x-ratelimit-reset": strconv.FormatInt(now.Add(90*time.Second).Unix(), 10)}), base, true, 90 * time.Second, false},
		{"rate limit error", response(403, nil), &gh.RateLimitError{Rate: gh.Rate{Reset: gh.Timestamp{Time: now.Add(time.Minute)}}}, true, time.Minute, false},
		{"secondary rate limit", response(403, nil), &gh.AbuseRateLimitError{RetryAfter: ptr(20 * time.Second)}, true, 20 * time.Second, false},
		{"plain forbidden", response(403, map[string]string{"x-ratelimit-remaining": "4999"}), base, false, 0, false},
		{"not found", response(404, nil), base, false, 0, true},
		{"validation failed", response(422, nil), base, false, 0, false},
		{"unauthorized", response(401, nil), base, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify("do a thing", tt.resp, tt.err, now)
			retryable, after := IsRetryable(err)
			if retryable != tt.retryable || after != tt.after {
				t.Errorf("IsRetryable = %v, %v; want %v, %v", retryable, after, tt.retryable, tt.after)
			}
			if got := errors.Is(err, ErrNotFound); got != tt.notFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v", got)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notFound {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v", got)
			}
			if !errors.Is(err, tt.err) && !tt.notFound {
				t.Errorf("the cause is lost: %v", err)
			}
		})
	}
	if classify("x", response(200, nil), nil, now) != nil {
		t.Error("success classified as an error")
	}
}

func ptr[T any](v T) *T { return &v }

package jobs

import (
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/github"
)

func TestRetryOrCancel(t *testing.T) {
	var cancel *river.JobCancelError
	var snooze *river.JobSnoozeError
	if err := retryOrCancel(nil); err != nil {
		t.Errorf("retryOrCancel(nil) = %v; want nil, or a successful call cancels its job", err)
	}
	if err := retryOrCancel(&github.APIError{Op: "x", Status: 404}); !errors.As(err, &cancel) {
		t.Errorf("a permanent failure: %v; want the job cancelled", err)
	}
	if err := retryOrCancel(&github.APIError{Op: "x", Status: 502, Retryable: true}); err == nil || errors.As(err, &cancel) || errors.As(err, &snooze) {
		t.Errorf("a passing failure: %v; want it returned for River to retry", err)
	}
	if err := retryOrCancel(&github.APIError{Op: "x", Status: 403, Retryable: true, RetryAfter: time.Minute}); !errors.As(err, &snooze) {
		t.Errorf("a rate limit: %v; want the job snoozed", err)
	}
}

package jobs

import (
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/github"
)

// retryOrCancel lets River retry a GitHub failure that may pass (after
// GitHub's advice, when it gave one) and stops retrying a permanent one.
// A nil err stays nil.
func retryOrCancel(err error) error {
	if err == nil {
		return nil
	}
	retryable, after := github.IsRetryable(err)
	switch {
	case retryable && after > 0:
		return river.JobSnooze(after)
	case retryable:
		return err
	default:
		return river.JobCancel(err)
	}
}

package grader

import (
	"context"

	"github.com/testfirst-app/testfirst/grader/environment"
)

// EnvironmentSource prepares the dependency environment of a grade
// (grader/environment implements it).
type EnvironmentSource interface {
	// Prepare returns the grader image to grade in. A build that
	// failed is a Prepared with Failure set, not an error; an error is bad
	// input or the engine's.
	Prepare(ctx context.Context, req environment.Request) (environment.Prepared, error)
}

var _ EnvironmentSource = (*environment.Environments)(nil)

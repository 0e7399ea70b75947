package grader

import (
	"context"

	"github.com/testfirst-app/testfirst/report"
)

// EnvironmentSource prepares the dependency environment of a grade
// (grader/environment implements it).
type EnvironmentSource interface {
	// Prepare returns the grader image to grade req in. A build that
	// failed is a Prepared with Failure set, not an error; an error is bad
	// input or the engine's.
	Prepare(ctx context.Context, req Request) (Prepared, error)
}

// Prepared is the environment a grade runs in.
type Prepared struct {
	// Image and ImageID are the grader image built on the environment.
	Image, ImageID string
	// Environment is what the report says of it.
	Environment *report.Environment
	// ProxySocket is the read-only egress proxy's socket, for a mirror
	// grade.
	ProxySocket string
	// Failure, when set, says why the environment could not be built:
	// the grade is an error and runs nothing. FailureOutput, for the
	// requester only, is the build's output.
	Failure       string
	FailureOutput string
}

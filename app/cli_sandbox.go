package app

import (
	"context"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
)

// SandboxEngine is the sandbox engine (Docker) as an operator manages it.
type SandboxEngine struct{ docker *sandbox.Docker }

// OpenSandboxEngine connects to the engine the environment names
// (DOCKER_HOST). Its error says how to reach the engine.
func OpenSandboxEngine(ctx context.Context) (*SandboxEngine, error) {
	d, err := sandbox.NewDocker(ctx)
	if err != nil {
		return nil, err
	}
	return &SandboxEngine{docker: d}, nil
}

// Sweep removes sandbox containers left behind by a crashed process, never
// those of a run still in progress, and returns how many it removed (also
// when it fails part way).
func (e *SandboxEngine) Sweep(ctx context.Context) (int, error) {
	return e.docker.Sweep(ctx, time.Now())
}

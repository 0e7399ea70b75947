package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/testfirst-app/testfirst/tree"
)

// Runner runs one agent in a sandbox of its own.
type Runner interface {
	// Run runs the harness named by req on req's task and base tree and
	// returns what it handed back. An agent that fails, times out or hands
	// back nothing is a Result (ExitCode, TimedOut); the error is for a run
	// that could not happen: an unknown harness, a bad request, an engine
	// or proxy failure, a result that cannot be read.
	Run(ctx context.Context, req Request) (Result, error)
}

// Request is one agent run.
type Request struct {
	// Task is what the agent is told.
	Task Task
	// Harness is the name of a harness of the Config.
	Harness string
	// Base is the tree of Task.BaseSHA, fetched outside the sandbox.
	Base *tree.Tree
}

// Change is one file an implementer changed in /workspace against the
// base (.git excluded).
type Change struct {
	// Path is slash-separated and relative to the workspace.
	Path string
	// Content is the file's new content; nil when Deleted.
	Content []byte
	// Executable is true for a file with an executable bit set.
	Executable bool
	// Symlink is true for a symbolic link; Content is then its target.
	Symlink bool
	// Deleted is true when the base's file is gone.
	Deleted bool
}

// EgressRecord is one request the agent sent to the egress proxy.
type EgressRecord struct {
	// Host is the host:port the request was for; for the model API, the
	// real API's.
	Host string
	// Method is the HTTP method, CONNECT for a tunnel.
	Method string
	// Path is the request's path and query; empty for CONNECT.
	Path string
	// Status is what the proxy answered.
	Status int
	// BytesIn counts the bytes the agent sent (the request body, or for a
	// tunnel what went up); BytesOut the bytes it got back.
	BytesIn, BytesOut int64
	// Allowed is false for a request the proxy refused.
	Allowed bool
	// Refused says why, when not Allowed.
	Refused string
	// Body is the start of the request body (bounded), kept for the
	// canary scan; empty for a tunnel, whose content is encrypted.
	Body []byte
}

// Result is what one agent run handed back.
type Result struct {
	// Tests are the writer's /out/tests/ files, paths relative to it.
	Tests []tree.File
	// Criteria is /out/criteria.json: criterion → test ids. Nil when the
	// agent wrote none.
	Criteria map[string][]string
	// ReferencePatch is /out/reference.patch; nil when absent.
	ReferencePatch []byte
	// Summary is /out/RESULT.md; nil when absent.
	Summary []byte
	// Changes are the implementer's edits of /workspace against the base,
	// sorted by path; Patch is the same as a unified diff (git's a/ b/
	// prefixes), .git excluded. Both are empty for a writer.
	Changes []Change
	Patch   []byte
	// Stdout and Stderr are what the agent printed, bounded.
	Stdout, Stderr []byte
	// Egress lists every request the agent sent through the proxy.
	Egress []EgressRecord
	// EgressReachesGitHub is true when the harness's own egress list names
	// a GitHub host. The proxy refuses those hosts anyway; every grade of
	// the ticket must warn "agent egress could reach GitHub: results may
	// not be valid".
	EgressReachesGitHub bool
	// Problems say what of the results could not be taken, each as a
	// sentence: a criteria.json that is not the expected JSON, results
	// past their bounds, entries that are neither files nor links.
	Problems []string
	// BaseCommit is the id of the workspace's one commit.
	BaseCommit string
	// ExitCode is the agent's exit status; -1 when it was killed.
	ExitCode int
	// TimedOut is true when the agent was killed at Limits.Timeout.
	TimedOut bool
	// Duration is how long the sandbox ran.
	Duration time.Duration
}

// ProviderRunner runs each harness on the runner of its sandbox provider
// (Harness.Sandbox): Docker's unless the harness says e2b.
type ProviderRunner struct {
	cfg    Config
	docker Runner
	e2b    Runner
}

var _ Runner = (*ProviderRunner)(nil)

// NewProviderRunner returns the runner of cfg's harnesses on docker and
// e2b. e2b may be nil when no harness runs there; docker when every
// harness does.
func NewProviderRunner(cfg Config, docker, e2b Runner) (*ProviderRunner, error) {
	for name, h := range cfg.Harnesses {
		switch {
		case h.OnE2B() && e2b == nil:
			return nil, fmt.Errorf("harnesses.%s.sandbox is e2b: configure e2b (api_key_file, template, egress_url, egress_listen; docs/e2b.md)", name)
		case !h.OnE2B() && docker == nil:
			return nil, fmt.Errorf("harnesses.%s runs on Docker, which this service does not have", name)
		}
	}
	return &ProviderRunner{cfg: cfg, docker: docker, e2b: e2b}, nil
}

// Run runs req on its harness's provider.
func (p *ProviderRunner) Run(ctx context.Context, req Request) (Result, error) {
	h, err := p.cfg.Harness(req.Harness)
	if err != nil {
		return Result{}, err
	}
	if h.OnE2B() {
		return p.e2b.Run(ctx, req)
	}
	return p.docker.Run(ctx, req)
}

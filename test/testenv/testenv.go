// Package testenv gives tests the real parts they run against: a Docker
// engine and the grader image, with the wrapper built from this checkout.
//
// Without an engine a test is skipped, unless TESTFIRST_REQUIRE_DOCKER is
// set (make test sets it), in which case it fails: CI never passes by
// skipping.
package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/sandbox/docker"
)

var (
	once    sync.Once
	grading *app.Grading
	openErr error
	wrapper string
)

// RepoRoot is the root of this checkout.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Wrapper returns the path of a static wrapper binary: $TESTFIRST_WRAPPER,
// or one built from this checkout once per test process.
func Wrapper(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TESTFIRST_WRAPPER"); p != "" {
		return p
	}
	dir, err := os.MkdirTemp("", "testfirst-wrapper-")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, app.WrapperName)
	cmd := exec.Command("go", "build", "-trimpath", "-o", p, "./cmd/testfirst-wrapper")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build wrapper: %v\n%s", err, out)
	}
	return p
}

// SandboxRuntime is the OCI runtime the tests' grades run under:
// TESTFIRST_SANDBOX_RUNTIME (runsc: gVisor), or the engine's default when
// it is empty. make test runs the corpus under both.
func SandboxRuntime() string { return os.Getenv("TESTFIRST_SANDBOX_RUNTIME") }

// Grading returns a grader connected to the local Docker engine, building
// the grader image on first use, whose sandboxes run under
// SandboxRuntime.
func Grading(t testing.TB) *app.Grading {
	t.Helper()
	once.Do(func() {
		wrapper = Wrapper(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err != nil {
			openErr = err
			return
		}
		recorder = &inspectingEngine{Client: cli}
		engine, err := docker.NewWithClient(ctx, recorder)
		if err != nil {
			openErr = err
			return
		}
		recorder.runtime = SandboxRuntime()
		grading, openErr = app.OpenGrading(ctx, app.GradingConfig{Wrapper: wrapper, Progress: os.Stderr, Docker: engine, Runtime: recorder.runtime})
	})
	if openErr != nil {
		Unavailable(t, openErr)
	}
	return grading
}

// Docker returns a connection to the local Docker engine.
func Docker(t testing.TB) *docker.Engine {
	t.Helper()
	d, err := docker.New(context.Background())
	if err != nil {
		Unavailable(t, err)
	}
	return d
}

// Unavailable skips t, or fails it when the engine is required.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("TESTFIRST_REQUIRE_DOCKER") != "" {
		t.Fatalf("Docker is required (TESTFIRST_REQUIRE_DOCKER is set): %v", err)
	}
	t.Skipf("no Docker engine: %v", err)
}

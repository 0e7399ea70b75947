package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/sandbox/egress"
)

// WrapperName is the file name of the sandbox wrapper binary.
const WrapperName = "testfirst-wrapper"

// GradingConfig says how to reach the sandbox engine and which image to
// grade in.
type GradingConfig struct {
	// Wrapper is the path of the wrapper binary; found by FindWrapper when
	// empty.
	Wrapper string
	// BaseImage replaces the grader's Debian base image (python3 and pytest
	// must be in it).
	BaseImage string
	// Progress receives image build progress.
	Progress io.Writer
	// Docker is the engine connection to use; one is opened from the
	// environment (DOCKER_HOST) when nil.
	Docker *docker.Engine
	// Environments grades every request in the dependency environment its
	// base tree declares, built from PackageIndex (environment.DefaultIndex
	// when empty) through the egress proxies this process serves; it
	// cannot be combined with BaseImage.
	Environments bool
	PackageIndex string
	// EgressLog receives every request of the egress proxies; slog's
	// default logger when nil.
	EgressLog func(egress.Entry)
	// EgressDir is where the proxies' sockets are made; the system's
	// temporary directory when empty.
	EgressDir string
	// EgressPeerUIDs are the uids that may connect to the proxies'
	// sockets (egress.WithPeerUIDs); egress.DefaultPeerUIDs when empty.
	EgressPeerUIDs []int
	// EgressInternal are the internal addresses and prefixes the proxies
	// may reach when the index's name resolves to them
	// (egress.WithInternal); none when empty.
	EgressInternal []string
	// Runtime is the engine's OCI runtime every grade's sandboxes run
	// under (runsc: gVisor); the engine's default when empty. Dependency
	// environments are built under the default runtime.
	Runtime string
}

// Grading is a connected grader and the engine behind it.
type Grading struct {
	Grader  *grader.Grader
	Docker  *docker.Engine
	Image   string
	ImageID string
	// Runtime is the name of the OCI runtime the grades run under, the
	// engine's default resolved.
	Runtime string
	// Environments builds the dependency environments, when GradingConfig
	// asked for them.
	Environments *environment.Environments
	proxies      []*egress.Server
	// wrapper is the wrapper binary the grader runs, which agents run too.
	wrapper []byte
}

// Close stops the egress proxies, if any.
func (g *Grading) Close() error {
	var errs []error
	for _, p := range g.proxies {
		errs = append(errs, p.Close())
	}
	g.proxies = nil
	return errors.Join(errs...)
}

// OpenGrading connects to the Docker engine, builds the grader image if it
// is missing, and returns a ready grader.
func OpenGrading(ctx context.Context, cfg GradingConfig) (*Grading, error) {
	wrapperPath, err := FindWrapper(cfg.Wrapper)
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(wrapperPath)
	if err != nil {
		return nil, fmt.Errorf("read wrapper binary: %w", err)
	}
	engine := cfg.Docker
	if engine == nil {
		if engine, err = docker.New(ctx); err != nil {
			return nil, err
		}
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	runtime, err := engine.Runtime(ctx, cfg.Runtime)
	if err != nil {
		return nil, err
	}
	ref, id, err := environment.EnsureImage(ctx, engine, cfg.BaseImage, bin, cfg.Progress)
	if err != nil {
		return nil, fmt.Errorf("grader image: %w", err)
	}
	g := &Grading{Docker: engine, Image: ref, ImageID: id, Runtime: runtime, wrapper: bin}
	// The default runtime is the engine's choice: named in the report,
	// never forced on the container.
	opts := []grader.Option{grader.WithRuntime(cfg.Runtime), grader.WithDefaultRuntime(runtime)}
	if !cfg.Environments {
		g.Grader = grader.New(engine, ref, id, opts...)
		return g, nil
	}
	if cfg.BaseImage != "" {
		return nil, errors.New("a base image of one's own and dependency environments do not go together: drop the image, or the environments")
	}
	if err := g.openEnvironments(cfg, bin); err != nil {
		g.Close()
		return nil, err
	}
	g.Grader = grader.New(engine, ref, id, append(opts, grader.WithEnvironments(g.Environments))...)
	return g, nil
}

// openEnvironments starts the two egress proxies to the package index (one
// for builds, one read-only for network: mirror) and the environments that
// build through them.
func (g *Grading) openEnvironments(cfg GradingConfig, wrapperBinary []byte) error {
	index, build, mirror, err := environmentProxies(cfg)
	if err != nil {
		return err
	}
	// A replica that crashed left its proxies' socket directories.
	if _, err := egress.SweepStale(cfg.EgressDir); err != nil {
		return err
	}
	for _, p := range []*egress.Proxy{build, mirror} {
		s, err := p.Listen(cfg.EgressDir)
		if err != nil {
			return err
		}
		g.proxies = append(g.proxies, s)
	}
	g.Environments, err = environment.New(g.Docker, wrapperBinary, index, g.proxies[0].Socket,
		environment.WithMirror(g.proxies[1].Socket), environment.WithProgress(cfg.Progress),
		environment.WithUpstreamFailures(build.Failures))
	return err
}

// environmentProxies are the package index cfg names (the default one when
// empty) and the two egress proxies to it: one for builds, one read-only
// for network: mirror; the settings' peer uids and internal addresses
// apply to both.
func environmentProxies(cfg GradingConfig) (index string, build, mirror *egress.Proxy, err error) {
	index = cfg.PackageIndex
	if index == "" {
		index = environment.DefaultIndex
	}
	allowed, err := egress.AllowedFor(index)
	if err != nil {
		return "", nil, nil, err
	}
	opts := egressOptions(cfg.EgressPeerUIDs, cfg.EgressInternal)
	if cfg.EgressLog != nil {
		opts = append(opts, egress.WithLog(cfg.EgressLog))
	}
	// Only builds get the index's credentials: pip is given the index
	// without them, and a grade's read-only mirror reaches only what needs
	// none.
	if build, err = egress.New(allowed, append(opts, egress.WithIndexCredentials(index))...); err != nil {
		return "", nil, nil, err
	}
	if mirror, err = egress.New(allowed, append(opts, egress.ReadOnly())...); err != nil {
		return "", nil, nil, err
	}
	return index, build, mirror, nil
}

// The engine adapter is what environments are built with.
var _ environment.Engine = (*docker.Engine)(nil)

// The engine adapter is what the grader runs its sandboxes on.
var _ grader.Sandbox = (*docker.Engine)(nil)

// The engine adapter is what the service keeps clean of leftovers.
var _ jobs.Sandboxes = (*docker.Engine)(nil)

// FindWrapper locates the wrapper binary: explicit, else $TESTFIRST_WRAPPER,
// else beside the running executable, else on PATH.
func FindWrapper(explicit string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv("TESTFIRST_WRAPPER")
	}
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("wrapper binary: %w", err)
		}
		return explicit, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), WrapperName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(WrapperName); err == nil {
		return p, nil
	}
	return "", errors.New(WrapperName + " not found beside testfirst or on PATH: run make build, or pass --wrapper PATH")
}

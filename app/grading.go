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
	"github.com/testfirst-app/testfirst/sandbox/docker"
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
}

// Grading is a connected grader and the engine behind it.
type Grading struct {
	Grader  *grader.Grader
	Docker  *docker.Engine
	Image   string
	ImageID string
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
	ref, id, err := grader.EnsureImage(ctx, engine, cfg.BaseImage, bin, cfg.Progress)
	if err != nil {
		return nil, fmt.Errorf("grader image: %w", err)
	}
	return &Grading{Grader: grader.New(engine, ref, id), Docker: engine, Image: ref, ImageID: id}, nil
}

// The engine adapter is what the grader runs its sandboxes on.
var _ grader.Sandbox = (*docker.Engine)(nil)

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

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/sandbox/docker"
)

func imageCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "build" {
		return exitUsage, usageError{"usage: testfirst image build [--image BASE] [--wrapper PATH]"}
	}
	fs := newFlags("image build", stderr)
	base := fs.String("image", "", "base image with python3 and pytest (default: built from Debian packages)")
	wrapper := fs.String("wrapper", "", "path of the testfirst-wrapper binary")
	if err := parse(fs, args[1:]); err != nil {
		return exitUsage, err
	}
	g, err := app.OpenGrading(ctx, app.GradingConfig{Wrapper: *wrapper, BaseImage: *base, Progress: stderr})
	if err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "%s %s\n", g.Image, g.ImageID)
	return exitPass, nil
}

func sandboxCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "sweep" {
		return exitUsage, usageError{"usage: testfirst sandbox sweep"}
	}
	if err := parse(newFlags("sandbox sweep", stderr), args[1:]); err != nil {
		return exitUsage, err
	}
	engine, err := docker.New(ctx)
	if err != nil {
		return exitUsage, err
	}
	n, err := engine.Sweep(ctx, time.Now())
	fmt.Fprintf(stdout, "removed %d leftover sandbox container(s)\n", n)
	if err != nil {
		return exitUsage, err
	}
	return exitPass, nil
}

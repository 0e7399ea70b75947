package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/errdefs"
	"github.com/testfirst-app/testfirst/sandbox"
)

// Sweep removes sandbox containers left behind by a crashed process or a
// failed engine: those whose deadline label lies more than a minute in the
// past, and those never started past their start-by label (the engine went
// down between Run's create and start, so neither Run's removal nor the
// engine's auto-remove will come). Containers of runs in progress are never
// touched. Both labels are this process's clock, not the engine's. It
// returns how many it removed; one the engine removed meanwhile is not
// counted.
func (d *Engine) Sweep(ctx context.Context, now time.Time) (int, error) {
	list, err := d.list(ctx, filters.Arg("label", sandbox.LabelSandbox))
	if err != nil {
		return 0, err
	}
	var stale []container.Summary
	for _, c := range list {
		if neverStarted(c, now) || sandbox.PastDeadline(c.Labels, now) {
			stale = append(stale, c)
		}
	}
	return d.removeAll(ctx, stale, "leftover")
}

// neverStarted reports whether c is still created and not started past
// its start-by label.
func neverStarted(c container.Summary, now time.Time) bool {
	startBy, err := strconv.ParseInt(c.Labels[labelStartBy], 10, 64)
	return err == nil && c.State == container.StateCreated && now.Unix() > startBy
}

// RemoveLabelled kills and removes every sandbox container labelled
// key=value, running or not, such as the sandboxes a dead process left
// running for a job another process now runs again. It returns how many it
// removed.
func (d *Engine) RemoveLabelled(ctx context.Context, key, value string) (int, error) {
	list, err := d.list(ctx, filters.Arg("label", sandbox.LabelSandbox), filters.Arg("label", key+"="+value))
	if err != nil {
		return 0, err
	}
	return d.removeAll(ctx, list, key+"="+value)
}

// Running counts the sandbox containers running on the engine, whichever
// process started them.
func (d *Engine) Running(ctx context.Context) (int, error) {
	list, err := d.list(ctx, filters.Arg("label", sandbox.LabelSandbox), filters.Arg("status", "running"))
	return len(list), err
}

func (d *Engine) list(ctx context.Context, args ...filters.KeyValuePair) ([]container.Summary, error) {
	list, err := d.eng.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(args...)})
	if err != nil {
		return nil, fmt.Errorf("list sandbox containers: %w", err)
	}
	return list, nil
}

// removeAll force-removes list, counting those it removed; one already
// gone or being removed by the engine is neither counted nor an error.
func (d *Engine) removeAll(ctx context.Context, list []container.Summary, what string) (int, error) {
	var n int
	var errs []error
	for _, c := range list {
		err := d.eng.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		switch {
		case err == nil:
			n++
		case errdefs.IsNotFound(err), errdefs.IsConflict(err):
		default:
			errs = append(errs, fmt.Errorf("remove %s container %s: %w", what, c.ID, err))
		}
	}
	return n, errors.Join(errs...)
}

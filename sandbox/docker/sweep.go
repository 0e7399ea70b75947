package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/testfirst-app/testfirst/sandbox"
)

// sweepGrace is how long past its deadline a sandbox may still be in use
// (being killed, its output drained) before Sweep removes it.
const sweepGrace = time.Minute

// Sweep removes sandbox containers left behind by a crashed process: those
// whose deadline label lies more than a minute in the past. Containers of
// runs still in progress are never touched. It returns how many it removed.
func (d *Engine) Sweep(ctx context.Context, now time.Time) (int, error) {
	list, err := d.eng.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSandbox))})
	if err != nil {
		return 0, fmt.Errorf("list sandbox containers: %w", err)
	}
	var n int
	var errs []error
	for _, c := range list {
		deadline, err := strconv.ParseInt(c.Labels[sandbox.LabelDeadline], 10, 64)
		if err != nil || now.Sub(time.Unix(deadline, 0)) < sweepGrace {
			continue
		}
		if err := d.eng.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove leftover container %s: %w", c.ID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/errdefs"
	"github.com/testfirst-app/testfirst/sandbox"
)

// Build runs b's spec in a fresh container with a writable root
// filesystem, its files copied in first, and commits the container as b.Ref
// with the labels b.Keep gives when it accepts the result; the container is removed whatever
// happens. It returns the image's id when it committed one. Like Run, it
// returns an error only when the engine failed.
func (d *Engine) Build(ctx context.Context, b sandbox.Build) (res sandbox.Result, imageID string, err error) {
	spec := b.Spec
	if spec.Timeout <= 0 {
		return res, "", errors.New("sandbox: a build needs a timeout")
	}
	began := time.Now()
	deadline := began.Add(spec.Timeout)
	cfg, host := buildConfig(spec, began, deadline)
	cfg.Image = d.runImage(spec.Image)
	created, err := d.eng.ContainerCreate(ctx, cfg, host, nil, nil, "testfirst-build-"+randomID())
	if err != nil {
		return res, "", fmt.Errorf("create build container from %s (%s): %w", spec.Image, cfg.Image, err)
	}
	id := created.ID
	end := d.watchEnd(ctx, id, began, host.AutoRemove)
	defer func() { err = errors.Join(err, d.remove(ctx, id, end)) }()
	if len(b.Files) > 0 {
		buf, err := packFiles(b.Files)
		if err != nil {
			return res, "", fmt.Errorf("build %s: pack files: %w", b.Ref, err)
		}
		if err := d.eng.CopyToContainer(ctx, id, "/", buf, container.CopyToContainerOptions{}); err != nil {
			return res, "", fmt.Errorf("build %s: copy files: %w", b.Ref, err)
		}
	}
	if res, err = d.runCreated(ctx, id, spec, began, deadline, end); err != nil {
		return res, "", err
	}
	var labels map[string]string
	keep := false
	if b.Keep != nil {
		labels, keep = b.Keep(res)
	}
	if !keep {
		return res, "", nil
	}
	committed, err := d.eng.ContainerCommit(ctx, id, container.CommitOptions{
		Reference: b.Ref,
		Changes:   []string{"CMD []", "USER 0:0", "WORKDIR /"},
		Config:    &container.Config{Labels: labels},
	})
	if err != nil {
		return res, "", fmt.Errorf("build %s: commit: %w", b.Ref, err)
	}
	// The id the commit made, not what the tag names a moment later.
	d.pins.pin(b.Ref, committed.ID)
	return res, committed.ID, nil
}

// FindImage returns the id and labels of the image ref names; found is
// false, with no error, when the engine does not have it.
func (d *Engine) FindImage(ctx context.Context, ref string) (id string, labels map[string]string, found bool, err error) {
	info, err := d.inspect(ctx, ref)
	if errdefs.IsNotFound(err) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	if info.Config != nil {
		labels = info.Config.Labels
	}
	return info.ID, labels, true, nil
}

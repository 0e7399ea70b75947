package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/errdefs"
	"github.com/testfirst-app/testfirst/sandbox"
)

// EnsureDebianImage returns the id of the recipe's image, building it when
// the engine does not have it. mmdebstrap's progress goes to progress.
func (d *Engine) EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error) {
	ref := r.Ref()
	if id, err := d.imageID(ctx, ref); err == nil || !errdefs.IsNotFound(err) {
		return id, err
	}
	// Another process of this machine (a second replica, a test beside
	// this one) may be building the same image: wait for it and use its
	// image rather than build it twice at once.
	unlock, err := lockBuild(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("build image %s: %w", ref, err)
	}
	defer unlock()
	if id, err := d.imageID(ctx, ref); err == nil || !errdefs.IsNotFound(err) {
		return id, err
	}
	bin, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return "", fmt.Errorf("build image %s: the engine at %s does not have it, and mmdebstrap, which builds it from Debian's packages, is not installed here: "+
			"install it (apt-get install mmdebstrap), or build the image against that engine from a machine that has it "+
			"(testfirst image build, e.g. on the engine's host: a container deployment does this before it starts)", ref, d.eng.DaemonHost())
	}
	fmt.Fprintf(progress, "building image %s with mmdebstrap (about a minute)...\n", ref)
	cmd := exec.CommandContext(ctx, bin, r.MmdebstrapArgs()...)
	cmd.Stderr = progress
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("build image %s: start mmdebstrap: %w", ref, err)
	}
	ierr := d.importImage(ctx, stdout, ref)
	if ierr != nil {
		cmd.Process.Kill()
	}
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("build image %s: mmdebstrap: %w", ref, errors.Join(err, ierr))
	}
	if ierr != nil {
		return "", fmt.Errorf("build image %s: %w", ref, ierr)
	}
	fmt.Fprintf(progress, "built image %s\n", ref)
	return d.imageID(ctx, ref)
}

func (d *Engine) importImage(ctx context.Context, r io.Reader, ref string) error {
	rc, err := d.eng.ImageImport(ctx, image.ImportSource{Source: r, SourceName: "-"}, ref, image.ImportOptions{})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer rc.Close()
	return readProgress(rc)
}

// readProgress drains an engine progress stream and returns the error it
// reports, if any.
func readProgress(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read engine progress: %w", err)
		}
		if msg.Error != "" {
			return errors.New(msg.Error)
		}
	}
}

// layerBuildTime is how long building a layer may take before Sweep may
// remove its container.
const layerBuildTime = 10 * time.Minute

// EnsureLayer returns the reference and id of the layer's image, committing
// it when the engine does not have it.
func (d *Engine) EnsureLayer(ctx context.Context, l sandbox.Layer) (ref, id string, err error) {
	baseID, err := d.imageID(ctx, l.Base)
	if err != nil {
		return "", "", fmt.Errorf("base image %s: %w", l.Base, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "base\x00%s\x00entrypoint\x00%q\x00", baseID, l.Entrypoint)
	for _, f := range l.Files {
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(h, "%s\x00%o\x00%x\x00", f.Path, f.Mode, sum)
	}
	ref = l.Name + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	if id, err := d.imageID(ctx, ref); err == nil || !errdefs.IsNotFound(err) {
		return ref, id, err
	}

	created, err := d.eng.ContainerCreate(ctx, &container.Config{Image: baseID, Entrypoint: []string{"/bin/true"}, NetworkDisabled: true,
		// Never started, so no start-by label; the deadline keeps Sweep
		// off the container while the layer is built.
		Labels: map[string]string{sandbox.LabelSandbox: "layer", sandbox.LabelDeadline: strconv.FormatInt(time.Now().Add(layerBuildTime).Unix(), 10)}}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "testfirst-layer-"+randomID())
	if err != nil {
		return "", "", fmt.Errorf("build image %s: create container: %w", ref, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		if rerr := d.eng.ContainerRemove(rctx, created.ID, container.RemoveOptions{Force: true}); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove container %s: %w", created.ID, rerr))
		}
	}()
	buf, err := packFiles(l.Files)
	if err != nil {
		return "", "", fmt.Errorf("build image %s: pack files: %w", ref, err)
	}
	if err := d.eng.CopyToContainer(ctx, created.ID, "/", buf, container.CopyToContainerOptions{}); err != nil {
		return "", "", fmt.Errorf("build image %s: copy files: %w", ref, err)
	}
	ep, _ := json.Marshal(l.Entrypoint)
	committed, err := d.eng.ContainerCommit(ctx, created.ID, container.CommitOptions{
		Reference: ref,
		Changes:   []string{"ENTRYPOINT " + string(ep), `CMD []`, "USER 0:0", "WORKDIR /"},
	})
	if err != nil {
		return "", "", fmt.Errorf("build image %s: commit: %w", ref, err)
	}
	// The id the commit made, not what the tag names a moment later.
	d.pins.pin(ref, committed.ID)
	return ref, committed.ID, nil
}

// packFiles packs files, and the directories that hold them, into a tar
// stream for CopyToContainer.
func packFiles(files []sandbox.LayerFile) (*bytes.Buffer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		rel := strings.TrimPrefix(f.Path, "/")
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/") + "/"
			if !dirs[dir] {
				dirs[dir] = true
				if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
					return nil, err
				}
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: f.Mode, Size: int64(len(f.Data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	return &buf, tw.Close()
}

// imageID is the id of the image ref names: the one ref was pinned to
// when first resolved (pins).
func (d *Engine) imageID(ctx context.Context, ref string) (string, error) {
	info, err := d.inspect(ctx, ref)
	if err != nil {
		return "", err
	}
	return info.ID, nil
}

// ImageID returns the id (sha256:…) of the image ref names.
func (d *Engine) ImageID(ctx context.Context, ref string) (string, error) {
	id, err := d.imageID(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return id, nil
}

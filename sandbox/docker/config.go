package docker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-units"
	"github.com/testfirst-app/testfirst/sandbox"
)

// labelStartBy holds the Unix time by which the process that created a
// sandbox container has started it: one still created and never started
// past it was left by an engine that stopped between the two calls, and
// neither that process's removal nor the engine's auto-remove will come
// (Sweep removes it). Containers made to stay unstarted, a layer's, do not
// carry it.
const labelStartBy = "app.testfirst.start-by"

// startGrace is how long after its creation a run's container is started
// at the latest: Run and Build start it a moment after creating it (a
// build first copies its files in).
const startGrace = time.Minute

// containerConfig turns a Spec into the engine's container configuration
// for a run that began (is being created) then and ends by deadline.
// Every sandbox container is made here; config_test.go holds the invariants.
func containerConfig(spec sandbox.Spec, began, deadline time.Time) (*container.Config, *container.HostConfig) {
	labels := map[string]string{}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	labels[sandbox.LabelSandbox] = "1"
	labels[sandbox.LabelDeadline] = strconv.FormatInt(deadline.Unix(), 10)
	labels[labelStartBy] = strconv.FormatInt(began.Add(startGrace).Unix(), 10)

	cfg := &container.Config{
		Image:           spec.Image,
		Entrypoint:      spec.Entrypoint,
		Cmd:             []string{},
		User:            "0:0",
		WorkingDir:      "/",
		Hostname:        "sandbox",
		Env:             []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		AttachStdin:     true,
		AttachStdout:    true,
		AttachStderr:    true,
		OpenStdin:       true,
		StdinOnce:       true,
		Tty:             false,
		NetworkDisabled: true,
		Labels:          labels,
	}

	var capAdd []string
	repoOwner := ""
	if spec.UIDSplit {
		capAdd = []string{"SETUID", "SETGID"}
		repoOwner = fmt.Sprintf(",uid=%d,gid=%d", spec.TestUID, spec.TestUID)
	}
	pids := spec.Limits.Pids
	host := &container.HostConfig{
		NetworkMode:    "none",
		Runtime:        spec.Runtime,
		Privileged:     false,
		CapDrop:        []string{"ALL"},
		CapAdd:         capAdd,
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		IpcMode:        "private",
		AutoRemove:     true, // gone once it ends, even when its process is (Run reads the end first)
		LogConfig:      container.LogConfig{Type: "none"},
		Tmpfs: map[string]string{
			sandbox.TmpMount:    fmt.Sprintf("rw,nosuid,nodev,size=%d,mode=1777", spec.Limits.TmpSize),
			sandbox.HiddenMount: fmt.Sprintf("rw,nosuid,nodev,noexec,size=%d,mode=0755", spec.Limits.HiddenSize),
			sandbox.RepoMount:   fmt.Sprintf("rw,nosuid,nodev,exec,size=%d,mode=0755%s", spec.Limits.RepoSize, repoOwner),
		},
		Resources: container.Resources{
			Memory:     spec.Limits.Memory,
			MemorySwap: spec.Limits.Memory,
			NanoCPUs:   spec.Limits.NanoCPUs,
			PidsLimit:  &pids,
			Ulimits: []*units.Ulimit{
				{Name: "core", Soft: 0, Hard: 0},
				{Name: "nofile", Soft: 1024, Hard: 1024},
			},
		},
	}
	for _, d := range spec.Dirs {
		opts := fmt.Sprintf("rw,nosuid,nodev,exec,size=%d,mode=%04o", d.Size, d.Mode&0o7777)
		if d.NoExec {
			opts = strings.Replace(opts, ",exec,", ",noexec,", 1)
		}
		if d.Owner != 0 {
			opts += fmt.Sprintf(",uid=%d,gid=%d", d.Owner, d.Owner)
		}
		host.Tmpfs[d.Path] = opts
	}
	if spec.ProxySocket != "" {
		host.Mounts = []mount.Mount{{Type: mount.TypeBind, Source: spec.ProxySocket, Target: sandbox.ProxyMount, ReadOnly: false,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}}}
	}
	return cfg, host
}

// buildConfig is containerConfig for a Build: the same sandbox, with a
// writable root filesystem, as what the run writes there becomes the image,
// and no auto-remove, as the image is committed after the run ends.
func buildConfig(spec sandbox.Spec, began, deadline time.Time) (*container.Config, *container.HostConfig) {
	cfg, host := containerConfig(spec, began, deadline)
	host.ReadonlyRootfs = false
	host.AutoRemove = false
	return cfg, host
}

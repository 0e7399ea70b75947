package testenv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
)

// inspectingEngine passes every call to the real engine and, for each
// sandbox container created, reads back the configuration the engine
// applied and checks the sealing invariants on it.
type inspectingEngine struct {
	docker.Client
	// runtime is the OCI runtime every sandbox must run under; the
	// engine's default when empty.
	runtime    string
	mu         sync.Mutex
	created    int
	violations []string
}

func (e *inspectingEngine) ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, netCfg *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error) {
	resp, err := e.Client.ContainerCreate(ctx, cfg, host, netCfg, platform, name)
	if err != nil || cfg.Labels[sandbox.LabelSandbox] != "1" {
		return resp, err
	}
	info, ierr := e.Client.ContainerInspect(ctx, resp.ID)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.created++
	if ierr != nil {
		e.violations = append(e.violations, fmt.Sprintf("inspect %s: %v", resp.ID, ierr))
		return resp, err
	}
	for _, v := range SealViolations(info.Config, info.HostConfig) {
		e.violations = append(e.violations, name+": "+v)
	}
	if e.runtime != "" && info.HostConfig.Runtime != e.runtime && host.ReadonlyRootfs {
		e.violations = append(e.violations, fmt.Sprintf("%s: runtime %q, want %q", name, info.HostConfig.Runtime, e.runtime))
	}
	return resp, err
}

// SealViolations lists every way a container's configuration breaks the
// sandbox's invariants: no network, no privileges, every capability dropped
// but SETUID/SETGID, no-new-privileges, default seccomp, read-only root,
// limits set with swap equal to memory, no mounts, no engine socket, an
// environment with nothing but PATH, and removed by the engine once it ends.
func SealViolations(cfg *container.Config, host *container.HostConfig) []string {
	var v []string
	bad := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	if host.NetworkMode != "none" {
		bad("network mode %q, want none", host.NetworkMode)
	}
	if !cfg.NetworkDisabled {
		bad("networking not disabled")
	}
	if host.Privileged {
		bad("privileged")
	}
	if !slices.Equal(host.CapDrop, []string{"ALL"}) && !slices.Equal(host.CapDrop, []string{"CAP_ALL"}) {
		bad("cap drop %v, want [ALL]", host.CapDrop)
	}
	for _, c := range host.CapAdd {
		if c = strings.TrimPrefix(c, "CAP_"); c != "SETUID" && c != "SETGID" {
			bad("capability %s added", c)
		}
	}
	if !slices.Contains(host.SecurityOpt, "no-new-privileges") && !slices.Contains(host.SecurityOpt, "no-new-privileges:true") {
		bad("no-new-privileges missing from %v", host.SecurityOpt)
	}
	for _, o := range host.SecurityOpt {
		if strings.Contains(o, "unconfined") {
			bad("security option %q", o)
		}
	}
	if !host.ReadonlyRootfs {
		bad("root filesystem writable")
	}
	if host.PidsLimit == nil || *host.PidsLimit <= 0 {
		bad("no pids limit")
	}
	if host.Memory <= 0 || host.MemorySwap != host.Memory {
		bad("memory %d, swap %d: want a limit with swap equal to it", host.Memory, host.MemorySwap)
	}
	if host.NanoCPUs <= 0 {
		bad("no CPU limit")
	}
	if len(host.Binds) > 0 || len(host.Mounts) > 0 || len(host.VolumesFrom) > 0 {
		bad("host mounts %v %v %v", host.Binds, host.Mounts, host.VolumesFrom)
	}
	if len(host.Devices) > 0 {
		bad("devices %v", host.Devices)
	}
	if host.PidMode != "" && host.PidMode != "private" {
		bad("pid mode %q", host.PidMode)
	}
	if host.IpcMode.IsHost() || host.UTSMode.IsHost() || host.UsernsMode.IsHost() {
		bad("shares a host namespace")
	}
	for _, env := range cfg.Env {
		if !strings.HasPrefix(env, "PATH=") {
			bad("environment variable %q", env)
		}
	}
	for p := range host.Tmpfs {
		if p != sandbox.RepoMount && p != sandbox.HiddenMount && p != sandbox.TmpMount && !slices.Contains(agentDirs, p) {
			bad("unexpected tmpfs %s", p)
		}
	}
	if !host.AutoRemove {
		bad("auto-remove not set: a container whose process died would stay behind")
	}
	return v
}

// agentDirs are the further tmpfs mounts of an agent's sandbox.
var agentDirs = []string{"/workspace", "/task", "/agent", "/out"}

var recorder *inspectingEngine

// CheckSandboxes fails t if any sandbox container created so far broke an
// invariant, and reports how many were checked.
func CheckSandboxes(t testing.TB) int {
	t.Helper()
	if recorder == nil {
		t.Fatal("CheckSandboxes before Grading")
	}
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	for _, v := range recorder.violations {
		t.Errorf("sandbox not sealed: %s", v)
	}
	return recorder.created
}

// Info passes the engine's description through, so the grader can check
// the runtime it is asked for.
func (e *inspectingEngine) Info(ctx context.Context) (system.Info, error) {
	ic, ok := e.Client.(interface {
		Info(context.Context) (system.Info, error)
	})
	if !ok {
		return system.Info{}, fmt.Errorf("the engine client cannot describe the engine")
	}
	return ic.Info(ctx)
}

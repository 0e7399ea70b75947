package agent_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// inspecting passes every call to the engine and keeps, for each sandbox
// container created, the configuration the engine applied.
type inspecting struct {
	*client.Client
	mu      sync.Mutex
	applied []container.InspectResponse
}

func (e *inspecting) ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, n *network.NetworkingConfig, p *ocispec.Platform, name string) (container.CreateResponse, error) {
	resp, err := e.Client.ContainerCreate(ctx, cfg, host, n, p, name)
	if err != nil || cfg.Labels[sandbox.LabelSandbox] != "1" {
		return resp, err
	}
	info, ierr := e.Client.ContainerInspect(ctx, resp.ID)
	if ierr != nil {
		return resp, ierr
	}
	e.mu.Lock()
	e.applied = append(e.applied, info)
	e.mu.Unlock()
	return resp, nil
}

// TestSandboxSealedAndLimited: an agent's container, as the engine applied
// it, is sealed like a grade's (network none, capabilities, read-only root,
// no environment but PATH) with the proxy's socket its one mount, has the
// agents' limits, and is gone after the run; an agent past its timeout is
// killed and reported so.
func TestSandboxSealedAndLimited(t *testing.T) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		testenv.Unavailable(t, err)
	}
	rec := &inspecting{Client: cli}
	eng, err := docker.NewWithClient(context.Background(), rec)
	if err != nil {
		testenv.Unavailable(t, err)
	}
	wrapperBinary, err := os.ReadFile(testenv.Wrapper(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.Parse([]byte(`
harnesses:
  sleeper: {preset: command, command: ["/bin/sleep", "300"]}
agents: {timeout: 2s, memory: 768MiB, cpus: 0.5, pids: 200}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.NewSandboxRunner(eng, egressproxy.New("", nil), cfg, wrapperBinary)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	res, err := r.Run(context.Background(), agent.Request{Task: agent.Task{Role: agent.RoleImplementer, Repo: "o/r", Issue: 1, Round: 1}, Harness: "sleeper", Base: baseTree(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run %s, test %s", res.Duration.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	if !res.TimedOut || res.ExitCode != -1 || res.Duration > time.Minute {
		t.Errorf("an agent past its timeout: timed out %v, exit %d, after %s", res.TimedOut, res.ExitCode, res.Duration)
	}
	if len(res.Changes) != 0 {
		t.Errorf("changes of an agent that did nothing: %+v", res.Changes)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.applied) != 1 {
		t.Fatalf("%d sandbox containers created, want 1", len(rec.applied))
	}
	info := rec.applied[0]
	host := *info.HostConfig
	if len(host.Mounts) != 1 || host.Mounts[0].Type != mount.TypeBind || host.Mounts[0].Target != sandbox.ProxyMount || !strings.HasSuffix(host.Mounts[0].Source, "/egress.sock") {
		t.Errorf("mounts %+v: want the proxy's socket only", host.Mounts)
	}
	host.Mounts = nil
	for _, v := range testenv.SealViolations(info.Config, &host) {
		t.Error(v)
	}
	if host.Memory != 768<<20 || host.NanoCPUs != 5e8 || host.PidsLimit == nil || *host.PidsLimit != 200 {
		t.Errorf("limits: memory %d, CPUs %d, pids %v", host.Memory, host.NanoCPUs, host.PidsLimit)
	}
	for _, d := range []string{"/workspace", "/out", "/task", "/agent"} {
		if opts, ok := host.Tmpfs[d]; !ok || !strings.Contains(opts, "nosuid") || !strings.Contains(opts, "size=") {
			t.Errorf("tmpfs %s: %q", d, opts)
		}
	}
	if !slices.Contains(host.CapAdd, "SETUID") && !slices.Contains(host.CapAdd, "CAP_SETUID") {
		t.Errorf("capabilities %v: the wrapper needs SETUID to drop to the agent's uid", host.CapAdd)
	}
	if _, err := cli.ContainerInspect(context.Background(), info.ID); !errdefs.IsNotFound(err) {
		t.Errorf("container %s after the run: %v, want removed", info.ID, err)
	}
}

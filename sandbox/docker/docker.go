package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/testfirst-app/testfirst/sandbox"
)

// Client is the slice of the Docker Engine API the sandbox uses;
// *client.Client implements it. Each method fails with the engine's error
// (errdefs classifies it: not found, conflict, unavailable, ...).
type Client interface {
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerAttach(ctx context.Context, id string, options container.AttachOptions) (types.HijackedResponse, error)
	ContainerStart(ctx context.Context, id string, options container.StartOptions) error
	ContainerWait(ctx context.Context, id string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	Events(ctx context.Context, options events.ListOptions) (<-chan events.Message, <-chan error)
	ContainerKill(ctx context.Context, id, signal string) error
	ContainerRemove(ctx context.Context, id string, options container.RemoveOptions) error
	ContainerInspect(ctx context.Context, id string) (container.InspectResponse, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerCommit(ctx context.Context, id string, options container.CommitOptions) (container.CommitResponse, error)
	CopyToContainer(ctx context.Context, id, dstPath string, content io.Reader, options container.CopyToContainerOptions) error
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
	Ping(ctx context.Context) (types.Ping, error)
	DaemonHost() string
}

var _ Client = (*client.Client)(nil)

// removeTimeout bounds the clean-up of a container after its run, which
// happens even when the caller's context is already cancelled.
const removeTimeout = 30 * time.Second

// streamGrace is how long the output stream may trail the container's exit.
const streamGrace = 10 * time.Second

// eventGrace is how long the container's die event may trail the wait's
// answer: only an engine whose event stream failed makes a run wait it out.
// Two seconds were too few on a machine with a load average near 20: an
// out-of-memory kill went unreported (TestRunReportsOOM, in make test).
const eventGrace = 10 * time.Second

// oomTrail is how long a run killed by SIGKILL waits for an out-of-memory
// event after the container's die event. containerd 1.6 (Debian 12's)
// publishes the event from its own goroutine, and it came after the die in
// make test (TestRunReportsOOM: exit 137, "Killed", no out-of-memory kill
// reported); 5 s were too few once more on CI. Only a SIGKILL that is not
// our deadline's waits, and such an end is rare and already a failure.
// containerd 1.6 can also lose the event altogether (containerd#8893,
// fixed in 2.2 by sending it before the exit): a run then reports exit 137
// without OOMKilled, which is what the engine told.
const oomTrail = 15 * time.Second

// sigkillExit is a container's exit status when its main process, or the
// shell that ran the killed one, reports death by SIGKILL.
const sigkillExit = 128 + 9

// Engine runs sandboxes on a Docker Engine.
type Engine struct {
	eng Client
	// pins holds the image id each tag named when first resolved: runs
	// and builds use it, not whatever the tag names later.
	pins pins
}

// New connects to the engine named by the environment (DOCKER_HOST,
// default unix:///var/run/docker.sock) and checks that it answers. The error
// says how to fix an engine that does not.
func New(ctx context.Context) (*Engine, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return NewWithClient(ctx, cli)
}

// NewWithClient returns an Engine that talks through eng, once eng answers
// a ping.
func NewWithClient(ctx context.Context, eng Client) (*Engine, error) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := eng.Ping(pctx); err != nil {
		return nil, &EngineError{Host: eng.DaemonHost(), Err: err}
	}
	return &Engine{eng: eng}, nil
}

// EngineError says the Docker engine could not be reached.
type EngineError struct {
	Host string
	Err  error
}

func (e *EngineError) Error() string {
	if errors.Is(e.Err, fs.ErrPermission) {
		return fmt.Sprintf("Docker engine not reachable at %s: uid %d may not open its socket: add the user to the socket's group "+
			"(in a container: docker run --group-add GID, GID from stat -c %%g on the socket) or set DOCKER_HOST (%v)", e.Host, os.Getuid(), e.Err)
	}
	return fmt.Sprintf("Docker engine not reachable at %s: start dockerd or set DOCKER_HOST; in a container, mount the engine's socket "+
		"(-v /var/run/docker.sock:/var/run/docker.sock) (%v)", e.Host, e.Err)
}

func (e *EngineError) Unwrap() error { return e.Err }

// Run runs spec in a fresh container, which the engine removes itself
// once it ends (auto-remove), so no container outlives its run even when
// this process dies; otherwise it is removed here, whatever happens. It
// returns an error only when the engine failed; a program that failed, was
// killed at the deadline or ran out of memory is a Result.
func (d *Engine) Run(ctx context.Context, spec sandbox.Spec) (res sandbox.Result, err error) {
	if spec.Timeout <= 0 {
		return res, errors.New("sandbox: a run needs a timeout")
	}
	if err := checkDirs(spec.Dirs); err != nil {
		return res, err
	}
	began := time.Now()
	deadline := began.Add(spec.Timeout)
	cfg, host := containerConfig(spec, began, deadline)
	cfg.Image = d.runImage(spec.Image)
	created, err := d.eng.ContainerCreate(ctx, cfg, host, nil, nil, "testfirst-"+randomID())
	if err != nil && cfg.Image != spec.Image && errdefs.IsNotFound(err) {
		// Never the tag's image in its place: what it names now was not
		// resolved by this engine.
		return res, fmt.Errorf("create container from %s: %w (restart the service to resolve its images again)", spec.Image, errImageGone{ref: spec.Image, id: cfg.Image})
	}
	if err != nil {
		return res, fmt.Errorf("create container from %s (%s): %w", spec.Image, cfg.Image, err)
	}
	id := created.ID
	end := d.watchEnd(ctx, id, began, host.AutoRemove)
	defer func() { err = errors.Join(err, d.remove(ctx, id, end)) }()
	return d.runCreated(ctx, id, spec, began, deadline, end)
}

// ending is what the engine tells of one container's end: its exit status
// through the wait API and an out-of-memory kill through its events. Both
// are asked for before the container starts, so neither is lost however
// soon the engine removes it.
type ending struct {
	// autoRemoved says the engine removes the container once it ends:
	// then wait answers once it is gone.
	autoRemoved bool
	wait        <-chan container.WaitResponse
	waitErr     <-chan error
	// waited is set once wait answered.
	waited bool
	oom    atomic.Bool
	// died closes at the container's die event, or when the event stream
	// ends (an engine whose stream failed reports no out-of-memory kill).
	died chan struct{}
	// oomSeen closes at the out-of-memory event, which may trail the die
	// event: containerd 1.6 (Debian 12's) sends it when it gets to it.
	oomSeen chan struct{}
	stop    context.CancelFunc
}

// eventsSince is how far back the event stream of a new container starts:
// the engine subscribes only after answering, and what it buffered in
// between is replayed from there. An hour covers a remote engine's clock
// skew; the filter names one container made just now.
const eventsSince = time.Hour

// watchEnd starts waiting for container id to end (to be removed, when
// autoRemoved) and reading its events, with a context that outlives ctx
// until remove stops it.
func (d *Engine) watchEnd(ctx context.Context, id string, began time.Time, autoRemoved bool) *ending {
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	e := &ending{autoRemoved: autoRemoved, died: make(chan struct{}), oomSeen: make(chan struct{}), stop: stop}
	msgs, errs := d.eng.Events(wctx, events.ListOptions{
		Since: strconv.FormatInt(began.Add(-eventsSince).Unix(), 10),
		Filters: filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)), filters.Arg("container", id),
			filters.Arg("event", string(events.ActionOOM)), filters.Arg("event", string(events.ActionDie))),
	})
	go func() {
		died := false
		markDied := func() {
			if !died {
				died = true
				close(e.died)
			}
		}
		defer markDied()
		for {
			select {
			case m := <-msgs:
				switch m.Action {
				case events.ActionOOM:
					if !e.oom.Swap(true) {
						close(e.oomSeen)
					}
				case events.ActionDie:
					// The stream is read on until the run is done with:
					// an out-of-memory event may come after the die.
					markDied()
				}
			case <-errs:
				return // the stream ended: what it told is kept
			case <-wctx.Done():
				return
			}
		}
	}()
	cond := container.WaitConditionNextExit
	if autoRemoved {
		cond = container.WaitConditionRemoved
	}
	e.wait, e.waitErr = d.eng.ContainerWait(wctx, id, cond)
	return e
}

// remove removes container id unless the engine said it already did, and
// stops watching it. A container the engine removed meanwhile, or is
// removing itself, is no error.
func (d *Engine) remove(ctx context.Context, id string, e *ending) error {
	defer e.stop()
	if e.waited && e.autoRemoved {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	err := d.eng.ContainerRemove(rctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	switch {
	case err == nil, errdefs.IsNotFound(err):
		return nil
	case errdefs.IsConflict(err) && e.autoRemoved && !e.waited:
		// The engine's own removal is under way: its end is the wait's
		// answer.
		select {
		case <-e.wait:
			return nil
		case werr := <-e.waitErr:
			return fmt.Errorf("remove container %s: %w (waiting for the engine's removal: %v)", id, err, werr)
		case <-rctx.Done():
			return fmt.Errorf("remove container %s: %w (the engine's removal did not end in %s)", id, err, removeTimeout)
		}
	}
	return fmt.Errorf("remove container %s: %w", id, err)
}

// runCreated starts the created container id, feeds it spec's input,
// reads its output and waits for its end, killing it at deadline.
func (d *Engine) runCreated(ctx context.Context, id string, spec sandbox.Spec, began, deadline time.Time, end *ending) (res sandbox.Result, err error) {
	res.Container = id
	att, err := d.eng.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return res, fmt.Errorf("attach to container %s: %w", id, err)
	}
	defer att.Close()
	if err := d.eng.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return res, fmt.Errorf("start container %s: %w", id, err)
	}

	inputDone := make(chan struct{})
	go func() {
		defer close(inputDone)
		if spec.Input != nil {
			// A sandbox that stops reading is not an engine failure; what it
			// did with its input shows in its output.
			io.Copy(att.Conn, spec.Input)
		}
		att.CloseWrite()
	}()
	stdout := sandbox.NewLimitedBuffer(spec.StdoutLimit)
	stderr := sandbox.NewLimitedBuffer(spec.StderrLimit)
	outputDone := make(chan struct{})
	go func() {
		defer close(outputDone)
		stdcopy.StdCopy(stdout, stderr, att.Reader)
	}()

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	kill := func() error {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		return d.eng.ContainerKill(kctx, id, "KILL")
	}
	select {
	case w := <-end.wait:
		if w.Error != nil && w.Error.Message != "" {
			return res, fmt.Errorf("wait for container %s: %s", id, w.Error.Message)
		}
		end.waited = true
		res.ExitCode = int(w.StatusCode)
	case err := <-end.waitErr:
		kill()
		return res, fmt.Errorf("wait for container %s: %w", id, err)
	case <-timer.C:
		res.TimedOut = true
		if err := kill(); err != nil && !errdefs.IsNotFound(err) && !errdefs.IsConflict(err) {
			return res, fmt.Errorf("kill container %s at its deadline: %w", id, err)
		}
		res.ExitCode = -1
	case <-ctx.Done():
		kill()
		return res, ctx.Err()
	}
	// The engine ends the attach stream once the container has stopped and
	// its output is flushed. Should it not, the connection is cut.
	select {
	case <-outputDone:
	case <-time.After(streamGrace):
	}
	att.Close()
	<-outputDone
	<-inputDone
	res.Stdout, res.StdoutTruncated = stdout.Seal()
	res.Stderr, _ = stderr.Seal()
	res.Duration = time.Since(began)
	// The die event follows an out-of-memory kill's event; it may trail
	// the wait's answer a little.
	select {
	case <-end.died:
	case <-time.After(eventGrace):
	}
	// A process the kernel killed for memory leaves the container with
	// 137 (SIGKILL), and the engine's out-of-memory event may trail the
	// die event: such an end waits a little for it. A deadline's kill is
	// ours and says so already.
	if res.ExitCode == sigkillExit && !res.TimedOut && !end.oom.Load() {
		select {
		case <-end.oomSeen:
		case <-time.After(oomTrail):
		}
	}
	res.OOMKilled = end.oom.Load()
	return res, nil
}

// checkDirs refuses a further tmpfs mount anywhere but a fresh top-level
// directory: it must not hide the image's system directories or the
// sandbox's own mounts.
func checkDirs(dirs []sandbox.Dir) error {
	seen := map[string]bool{}
	for _, d := range dirs {
		name, ok := strings.CutPrefix(d.Path, "/")
		if !ok || name == "" || strings.Contains(name, "/") || name == "." || name == ".." || seen[d.Path] || d.Size <= 0 ||
			slices.Contains(reservedDirs, d.Path) {
			return fmt.Errorf("sandbox: tmpfs %q: want a new top-level directory with a size, not one of %v", d.Path, reservedDirs)
		}
		seen[d.Path] = true
	}
	return nil
}

// reservedDirs are the top-level directories a Dir may not be mounted on.
var reservedDirs = []string{sandbox.RepoMount, sandbox.HiddenMount, sandbox.TmpMount, "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64",
	"/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var"}

func randomID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// infoClient is the part of the engine's client that describes the engine.
type infoClient interface {
	Info(ctx context.Context) (system.Info, error)
}

// Runtime checks that the engine knows the OCI runtime name and returns
// it, or, for an empty name, the engine's default runtime's name: what a
// sandbox run with Spec.Runtime name runs under.
func (e *Engine) Runtime(ctx context.Context, name string) (string, error) {
	ic, ok := e.eng.(infoClient)
	if !ok {
		if name == "" {
			return "", nil
		}
		return "", fmt.Errorf("sandbox runtime %q: this engine client cannot list its runtimes", name)
	}
	info, err := ic.Info(ctx)
	if err != nil {
		return "", fmt.Errorf("engine info: %w", err)
	}
	if name == "" {
		return info.DefaultRuntime, nil
	}
	if _, ok := info.Runtimes[name]; !ok {
		known := make([]string, 0, len(info.Runtimes))
		for k := range info.Runtimes {
			known = append(known, k)
		}
		sort.Strings(known)
		return "", fmt.Errorf("sandbox runtime %q is not registered with the Docker engine at %s (it has %s): for gVisor install runsc and add it to the runtimes of /etc/docker/daemon.json (scripts/ensure-deps.sh does both), or choose one of those",
			name, e.eng.DaemonHost(), strings.Join(known, ", "))
	}
	return name, nil
}

package e2b

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Metadata keys of every sandbox this package creates, beside the run's
// labels (sandbox.LabelJob, the agent's role and harness).
const (
	// MetaSandbox marks a testfirst sandbox; Sweep lists by it.
	MetaSandbox = sandbox.LabelSandbox
	// MetaDeadline is the Unix time of the run's deadline.
	MetaDeadline = sandbox.LabelDeadline
)

// killGrace is how long past a run's deadline E2B's own timeout kills the
// sandbox, should this process be gone by then.
const killGrace = time.Minute

// killTimeout bounds the kill at a run's end, which happens even when the
// caller's context is done.
const killTimeout = 30 * time.Second

// inputPath is where a run's input is uploaded, opened by the setup
// script and removed before the entrypoint (the wrapper, root) starts and
// long before the agent does.
const inputPath = "/run/testfirst/input.tar"

// user is who the entrypoint runs as: the wrapper needs root to drop to
// the agent's uid.
const user = "root"

// Engine runs agent sandboxes on E2B. It implements agent.Engine.
type Engine struct {
	c        *Client
	template string
	gw       *Gateway

	mu     sync.Mutex
	layers map[string]sandbox.Layer
}

// NewEngine returns an engine creating its sandboxes from template, whose
// egress goes through gw (nil: a run that asks for the proxy fails).
func NewEngine(c *Client, template string, gw *Gateway) (*Engine, error) {
	if template == "" {
		return nil, errors.New("e2b.template: name the E2B template agents run in (see docs/e2b.md)")
	}
	return &Engine{c: c, template: template, gw: gw, layers: map[string]sandbox.Layer{}}, nil
}

// EnsureDebianImage returns the template: on E2B the operator builds the
// agents' image as a template (docs/e2b.md); r is what it must hold.
func (e *Engine) EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error) {
	return e.template, nil
}

// EnsureLayer returns an id that stands for l: l's files are uploaded into
// every sandbox of a run with that id, on top of the template l.Base.
func (e *Engine) EnsureLayer(ctx context.Context, l sandbox.Layer) (ref, id string, err error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00", l.Base, l.Entrypoint)
	for _, f := range l.Files {
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", f.Path, f.Mode, len(f.Data))
		h.Write(f.Data)
	}
	id = "e2b-layer:" + hex.EncodeToString(h.Sum(nil))[:24]
	e.mu.Lock()
	e.layers[id] = l
	e.mu.Unlock()
	return id, id, nil
}

// Run runs spec in a fresh sandbox and kills it, whatever happens. Like
// the Docker engine's, it fails only when E2B does; a program that failed
// or was killed at its deadline is a Result. What E2B cannot do of spec
// (tmpfs mounts with their sizes, the pids and memory limits, which are
// the template's) is not done: docs/security.md says so.
func (e *Engine) Run(ctx context.Context, spec sandbox.Spec) (res sandbox.Result, err error) {
	if spec.Timeout <= 0 {
		return res, errors.New("sandbox: a run needs a timeout")
	}
	template, files := spec.Image, []sandbox.LayerFile(nil)
	entry := spec.Entrypoint
	e.mu.Lock()
	if l, ok := e.layers[spec.Image]; ok {
		template, files = l.Base, l.Files
		if len(entry) == 0 {
			entry = l.Entrypoint
		}
	}
	e.mu.Unlock()
	if len(entry) == 0 {
		return res, errors.New("sandbox: no entrypoint")
	}
	var input []byte
	if spec.Input != nil {
		if input, err = io.ReadAll(spec.Input); err != nil {
			return res, fmt.Errorf("sandbox input: %w", err)
		}
	}
	envs := map[string]string{}
	var network *Network
	allowInternet := false
	if spec.ProxySocket != "" {
		if e.gw == nil {
			return res, errors.New("an E2B sandbox's egress needs the gateway: set e2b.egress_url")
		}
		token, release := e.gw.Register(spec.ProxySocket)
		defer release()
		envs[wrapper.EnvEgressURL], envs[wrapper.EnvEgressToken] = e.gw.URL(), token
		network = &Network{AllowOut: []string{e.gw.Host()}, DenyOut: []string{"0.0.0.0/0"}}
		allowInternet = true // the rules say where: the gateway only
	}

	began := time.Now()
	deadline := began.Add(spec.Timeout)
	meta := map[string]string{}
	for k, v := range spec.Labels {
		meta[k] = v
	}
	meta[MetaSandbox] = "1"
	meta[MetaDeadline] = strconv.FormatInt(deadline.Unix(), 10)
	n := NewSandbox{TemplateID: template, Timeout: seconds(spec.Timeout + killGrace), Secure: true, Metadata: meta, Network: network}
	if !allowInternet {
		n.AllowInternetAccess = new(bool)
	}
	sb, err := e.c.Create(ctx, n)
	if err != nil {
		return res, err
	}
	res.Container = sb.SandboxID
	defer func() {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
		defer cancel()
		if kerr := e.c.Kill(kctx, sb.SandboxID); kerr != nil && !IsNotFound(kerr) {
			err = errors.Join(err, kerr)
		}
	}()
	d := e.c.Envd(sb)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for _, f := range files {
		if err := d.WriteFile(rctx, f.Path, user, f.Data); err != nil {
			return res, e.runErr(ctx, rctx, &res, err)
		}
	}
	if err := d.WriteFile(rctx, inputPath, user, input); err != nil {
		return res, e.runErr(ctx, rctx, &res, err)
	}
	stdout := sandbox.NewLimitedBuffer(spec.StdoutLimit)
	stderr := sandbox.NewLimitedBuffer(spec.StderrLimit)
	end, err := d.Start(rctx, Process{Cmd: "/bin/sh", Args: []string{"-c", setupScript(spec, files, entry)}, Envs: envs, Cwd: "/"}, user, stdout, stderr)
	res.Stdout, res.StdoutTruncated = stdout.Seal()
	res.Stderr, _ = stderr.Seal()
	res.Duration = time.Since(began)
	if err != nil {
		return res, e.runErr(ctx, rctx, &res, err)
	}
	res.ExitCode = int(end.ExitCode)
	if !end.Exited {
		res.ExitCode = -1
	}
	return res, nil
}

// runErr turns a failure while the sandbox ran into the run's answer: the
// deadline's end is a Result (TimedOut), the caller's the caller's error.
func (e *Engine) runErr(ctx, rctx context.Context, res *sandbox.Result, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case rctx.Err() != nil:
		res.TimedOut, res.ExitCode = true, -1
		return nil
	case errors.Is(err, ErrNoEnd):
		return fmt.Errorf("E2B sandbox %s: %w", res.Container, err)
	}
	return err
}

// setupScript makes the directories the entrypoint expects (on Docker
// they are tmpfs mounts), gives the layer's files their modes, and runs
// the entrypoint on the input, which it first removes.
func setupScript(spec sandbox.Spec, files []sandbox.LayerFile, entry []string) string {
	var b strings.Builder
	// The umask of Docker's containers, which the agent inherits: the
	// files it hands back have the modes they have there.
	b.WriteString("set -e\numask 022\n")
	for _, f := range files {
		fmt.Fprintf(&b, "chmod %o %s\n", f.Mode&0o7777, shq(f.Path))
	}
	dirs := []sandbox.Dir{{Path: sandbox.RepoMount, Mode: 0o755}, {Path: sandbox.HiddenMount, Mode: 0o755}, {Path: sandbox.TmpMount, Mode: 0o1777}}
	for _, d := range append(dirs, spec.Dirs...) {
		fmt.Fprintf(&b, "mkdir -p %s\nchmod %o %s\nchown %d:%d %s\n", shq(d.Path), d.Mode, shq(d.Path), d.Owner, d.Owner, shq(d.Path))
	}
	quoted := make([]string, len(entry))
	for i, a := range entry {
		quoted[i] = shq(a)
	}
	fmt.Fprintf(&b, "exec 3<%s\nrm -f %s\nexec %s <&3 3<&-\n", shq(inputPath), shq(inputPath), strings.Join(quoted, " "))
	return b.String()
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Sweep kills the sandboxes of this package whose deadline is more than
// sandbox.LeftoverGrace past at now: those a dead process left. It
// returns how many it killed; one E2B ended meanwhile is not counted.
func (e *Engine) Sweep(ctx context.Context, now time.Time) (int, error) {
	list, err := e.c.List(ctx, map[string]string{MetaSandbox: "1"})
	if err != nil {
		return 0, err
	}
	var stale []Listed
	for _, s := range list {
		if sandbox.PastDeadline(s.Metadata, now) {
			stale = append(stale, s)
		}
	}
	return e.killAll(ctx, stale)
}

// RemoveLabelled kills every sandbox of this package whose metadata has
// key=value, running or not.
func (e *Engine) RemoveLabelled(ctx context.Context, key, value string) (int, error) {
	list, err := e.c.List(ctx, map[string]string{MetaSandbox: "1", key: value})
	if err != nil {
		return 0, err
	}
	return e.killAll(ctx, list)
}

func (e *Engine) killAll(ctx context.Context, list []Listed) (int, error) {
	var n int
	var errs []error
	for _, s := range list {
		switch err := e.c.Kill(ctx, s.SandboxID); {
		case err == nil:
			n++
		case IsNotFound(err):
		default:
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// Running counts the sandboxes of this package running on E2B, whichever
// process created them.
func (e *Engine) Running(ctx context.Context) (int, error) {
	list, err := e.c.List(ctx, map[string]string{MetaSandbox: "1"})
	return len(list), err
}

package agent

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Engine is what running agents needs of the sandbox engine;
// sandbox/docker's Engine implements it. Each method fails only when the
// engine does.
type Engine interface {
	// Run runs one sandbox and removes its container, whatever happens.
	Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)
	// EnsureDebianImage returns the id of the recipe's image, building it
	// when missing.
	EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error)
	// EnsureLayer returns the layer's image, committing it when missing.
	EnsureLayer(ctx context.Context, l sandbox.Layer) (ref, id string, err error)
}

// Preset is how the harnesses of one preset run.
type Preset struct {
	// Image returns the base image the preset's program is installed in
	// (git and python3 at least); the runner adds the wrapper to it.
	Image func(ctx context.Context) (string, error)
	// Command returns the program and its arguments for harness h on task
	// t, run in /workspace.
	Command func(h Harness, t Task) []string
	// Env is added to the agent's environment.
	Env []string
}

// SandboxRunner runs agents in sandboxes of an Engine, each with an egress
// proxy of its own. It implements Runner.
type SandboxRunner struct {
	eng      Engine
	proxy    EgressProxy
	cfg      Config
	wrapper  []byte
	index    []string
	presets  map[string]Preset
	progress io.Writer

	mu     sync.Mutex
	images map[string]string // preset → image id
}

var _ Runner = (*SandboxRunner)(nil)

// Option changes a SandboxRunner.
type Option func(*SandboxRunner)

// WithIndexHosts names the package index's hosts ("host:port") the agents
// may reach; DefaultIndexHosts otherwise.
func WithIndexHosts(hosts []string) Option {
	return func(r *SandboxRunner) { r.index = slices.Clone(hosts) }
}

// WithPreset makes preset name runnable (the command preset is built in).
func WithPreset(name string, p Preset) Option {
	return func(r *SandboxRunner) { r.presets[name] = p }
}

// WithProgress sends image build progress to w.
func WithProgress(w io.Writer) Option { return func(r *SandboxRunner) { r.progress = w } }

// NewSandboxRunner returns a runner of cfg's harnesses on eng, each run's
// egress served by proxy, with the static wrapper binary as each
// sandbox's PID 1. cfg must be valid.
func NewSandboxRunner(eng Engine, proxy EgressProxy, cfg Config, wrapperBinary []byte, opts ...Option) (*SandboxRunner, error) {
	if err := wrapper.CheckStatic(wrapperBinary); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &SandboxRunner{eng: eng, proxy: proxy, cfg: cfg, wrapper: wrapperBinary, index: DefaultIndexHosts,
		presets: map[string]Preset{}, progress: io.Discard, images: map[string]string{}}
	r.presets[PresetCommand] = Preset{
		Image: func(ctx context.Context) (string, error) {
			return eng.EnsureDebianImage(ctx, CommandRecipe, r.progress)
		},
		Command: func(h Harness, _ Task) []string { return h.Command },
	}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Sizes of an agent's sandbox.
const (
	workspaceSize = 1 << 30
	outSize       = 64 << 20
	taskSize      = 1 << 20
	tmpSize       = 512 << 20
	// maxHarnessBytes bounds a harness's files.
	maxHarnessBytes = 64 << 20
	outputLimit     = 1 << 20
	outLimit        = 16 << 20
	changeLimit     = 64 << 20
	// runGrace is what the sandbox gets beyond the agent's timeout: to
	// commit the base before and read the results after.
	runGrace = 2 * time.Minute
	// testUIDBase and testUIDSpan bound the agent's uid, drawn at random
	// per run as a grade's test uid is.
	testUIDBase = 100_000
	testUIDSpan = 1 << 24
)

// Run runs req's harness in a fresh sandbox. See Runner.
func (r *SandboxRunner) Run(ctx context.Context, req Request) (Result, error) {
	var res Result
	h, err := r.cfg.Harness(req.Harness)
	if err != nil {
		return res, err
	}
	switch {
	case !req.Task.Role.Valid():
		return res, fmt.Errorf("agent run: role %q: want %s or %s", req.Task.Role, RoleWriter, RoleImplementer)
	case req.Base == nil:
		return res, errors.New("agent run: no base tree")
	}
	preset, ok := r.presets[h.Preset]
	if !ok {
		return res, fmt.Errorf("harness %s: preset %s is not available in this build", h.Name, h.Preset)
	}
	argv := preset.Command(h, req.Task)
	if len(argv) == 0 {
		return res, fmt.Errorf("harness %s: no command", h.Name)
	}
	img, err := r.image(ctx, h.Preset, preset)
	if err != nil {
		return res, err
	}
	var files *tree.Tree
	if h.Files != "" {
		if files, err = tree.Load(h.Files); err != nil {
			return res, fmt.Errorf("harness %s: files: %w", h.Name, err)
		}
		if files.Size() > maxHarnessBytes {
			return res, fmt.Errorf("harness %s: files: more than %d MiB", h.Name, maxHarnessBytes>>20)
		}
	}

	policy := EgressPolicy{
		Allow:           append(slices.Clone(r.index), egressHosts(h.Egress)...),
		GitHubHost:      r.cfg.GitHubHost,
		MaxRequestBytes: maxRequestBytes,
		MaxTunnelBytes:  maxTunnelBytes,
		BodyKept:        bodyKept,
	}
	env := slices.Clone(preset.Env)
	if h.ModelAPI != "" {
		m := r.cfg.ModelAPIs[h.ModelAPI]
		key, err := m.Key()
		if err != nil {
			return res, err
		}
		policy.Model = &ModelRoute{Name: m.Name, URL: m.URL, Header: m.Header, Key: key}
		env = append(env, modelEnv(m)...)
	}
	lim := r.cfg.Limits
	uid := testUIDBase + rand.IntN(testUIDSpan)
	job := wrapper.Job{
		Mode:          wrapper.ModeAgent,
		UIDSplit:      true,
		TestUID:       uid,
		TimeoutMillis: lim.Timeout.Milliseconds(),
		ProcLimit:     int(lim.Pids) - 32,
		OutputLimit:   outputLimit,
		Proxy:         true,
		Agent: &wrapper.AgentJob{
			Command:     argv,
			Env:         env,
			Message:     fmt.Sprintf("%s at %s", req.Task.Repo, req.Task.BaseSHA),
			OutLimit:    outLimit,
			ChangeLimit: changeLimit,
		},
	}
	input, err := agentArchive(job, req.Task, files, req.Base)
	if err != nil {
		return res, err
	}

	sess, err := r.proxy.Serve(policy)
	if err != nil {
		return res, fmt.Errorf("agent run: egress proxy: %w", err)
	}
	limits := sandbox.LimitsOf(lim.Memory, lim.CPUs, lim.Pids)
	limits.RepoSize, limits.HiddenSize, limits.TmpSize = 1<<20, 1<<20, tmpSize
	sres, runErr := r.eng.Run(ctx, sandbox.Spec{
		Image:       img,
		Entrypoint:  []string{wrapper.BinaryPath},
		Input:       bytes.NewReader(input),
		Timeout:     lim.Timeout + runGrace,
		Limits:      limits,
		UIDSplit:    true,
		TestUID:     uid,
		Labels:      map[string]string{"app.testfirst.agent": string(req.Task.Role), "app.testfirst.harness": h.Name},
		StdoutLimit: 2 * (outLimit + changeLimit + 4*outputLimit),
		StderrLimit: 64 << 10,
		ProxySocket: sess.Socket(),
		Dirs: []sandbox.Dir{
			{Path: wrapper.WorkspaceDir, Size: workspaceSize, Mode: 0o755, Owner: uid},
			{Path: wrapper.OutDir, Size: outSize, Mode: 0o755, Owner: uid},
			{Path: wrapper.TaskDir, Size: taskSize, Mode: 0o755, NoExec: true},
			{Path: wrapper.AgentDir, Size: maxHarnessBytes + taskSize, Mode: 0o755},
		},
	})
	closeErr := sess.Close()
	res.Egress = sess.Records()
	res.EgressReachesGitHub = h.EgressReachesGitHub(r.cfg.GitHubHost)
	res.Duration = sres.Duration
	if runErr != nil {
		return res, fmt.Errorf("agent run: %w", runErr)
	}
	if closeErr != nil {
		return res, fmt.Errorf("agent run: egress proxy: %w", closeErr)
	}
	if sres.TimedOut {
		res.TimedOut, res.ExitCode = true, -1
		res.Stderr = sres.Stderr
		return res, nil
	}
	var w wrapper.Result
	if err := json.Unmarshal(sres.Stdout, &w); err != nil || sres.StdoutTruncated {
		return res, fmt.Errorf("agent run: the sandbox's result cannot be read (exit %d, truncated %v): %v; stderr: %s",
			sres.ExitCode, sres.StdoutTruncated, err, truncated(sres.Stderr, 2000))
	}
	if w.Error != "" {
		return res, fmt.Errorf("agent run: %s", w.Error)
	}
	if w.Agent == nil {
		return res, errors.New("agent run: the sandbox handed back no agent result")
	}
	res.ExitCode, res.TimedOut = w.ExitCode, w.TimedOut
	if w.TimedOut {
		res.ExitCode = -1
	}
	res.Stdout, res.Stderr = w.Output, w.Agent.Stderr
	res.BaseCommit = w.Agent.Commit
	readOut(&res, w.Agent)
	if req.Task.Role == RoleImplementer {
		res.Changes = changesOf(w.Agent)
		res.Patch = unifiedDiff(req.Base, res.Changes)
	}
	for _, t := range w.Agent.Truncated {
		res.Problems = append(res.Problems, fmt.Sprintf("the agent's %s went past their bound and were cut", t))
	}
	for _, s := range w.Agent.Skipped {
		res.Problems = append(res.Problems, fmt.Sprintf("%s is neither a file nor a symlink: not read", s))
	}
	return res, nil
}

// image returns the image of preset: its base plus the wrapper.
func (r *SandboxRunner) image(ctx context.Context, name string, p Preset) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.images[name]; ok {
		return id, nil
	}
	base, err := p.Image(ctx)
	if err != nil {
		return "", fmt.Errorf("agent image for preset %s: %w", name, err)
	}
	_, id, err := r.eng.EnsureLayer(ctx, sandbox.Layer{
		Name:       ImageName,
		Base:       base,
		Files:      []sandbox.LayerFile{{Path: wrapper.BinaryPath, Mode: 0o755, Data: r.wrapper}},
		Entrypoint: []string{wrapper.BinaryPath},
	})
	if err != nil {
		return "", fmt.Errorf("agent image for preset %s: %w", name, err)
	}
	r.images[name] = id
	return id, nil
}

// agentArchive is the wrapper's input: the job, the task's files, the
// harness's files and the base tree.
func agentArchive(job wrapper.Job, t Task, files, base *tree.Tree) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	jobJSON, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	tj, err := taskJSON(t)
	if err != nil {
		return nil, err
	}
	err = errors.Join(add(wrapper.JobEntry, 0o644, jobJSON), add(wrapper.TaskPrefix+"TASK.md", 0o644, taskMarkdown(t)), add(wrapper.TaskPrefix+"task.json", 0o644, tj))
	if err != nil {
		return nil, fmt.Errorf("agent archive: %w", err)
	}
	if files != nil {
		for _, f := range files.Files {
			if f.IsSymlink() {
				continue // the harness's files are copied, never its links
			}
			if err := add(wrapper.AgentPrefix+f.Path, int64(f.Mode.Perm()), f.Data); err != nil {
				return nil, fmt.Errorf("agent archive: %w", err)
			}
		}
	}
	for _, f := range base.Files {
		var err error
		if f.IsSymlink() {
			err = tw.WriteHeader(&tar.Header{Name: wrapper.RepoPrefix + f.Path, Typeflag: tar.TypeSymlink, Linkname: f.Link, Mode: 0o777, Format: tar.FormatPAX})
		} else {
			err = add(wrapper.RepoPrefix+f.Path, int64(f.Mode.Perm()), f.Data)
		}
		if err != nil {
			return nil, fmt.Errorf("agent archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("agent archive: %w", err)
	}
	return buf.Bytes(), nil
}

// readOut takes the writer's results from /out.
func readOut(res *Result, a *wrapper.AgentResult) {
	for _, f := range a.Out {
		switch {
		case f.Link != "":
			res.Problems = append(res.Problems, fmt.Sprintf("/out/%s is a symlink: not taken", f.Path))
		case strings.HasPrefix(f.Path, "tests/"):
			res.Tests = append(res.Tests, tree.File{Path: strings.TrimPrefix(f.Path, "tests/"), Mode: fs.FileMode(f.Mode) & 0o755, Data: f.Data})
		case f.Path == "criteria.json":
			var c map[string][]string
			if err := json.Unmarshal(f.Data, &c); err != nil {
				res.Problems = append(res.Problems, fmt.Sprintf(`/out/criteria.json is not {"criterion": ["test id", ...]}: %v`, err))
			} else {
				res.Criteria = c
			}
		case f.Path == "reference.patch":
			res.ReferencePatch = f.Data
		case f.Path == "RESULT.md":
			res.Summary = f.Data
		}
	}
}

// changesOf turns the workspace's changed and deleted files into Changes,
// sorted by path.
func changesOf(a *wrapper.AgentResult) []Change {
	var out []Change
	for _, f := range a.Changed {
		c := Change{Path: f.Path, Content: f.Data, Executable: f.Mode&0o111 != 0}
		if f.Link != "" {
			c = Change{Path: f.Path, Content: []byte(f.Link), Symlink: true}
		}
		out = append(out, c)
	}
	for _, p := range a.Deleted {
		out = append(out, Change{Path: p, Deleted: true})
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

func truncated(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

package e2b_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/errdefs"
	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/sandbox/e2b"
	"github.com/testfirst-app/testfirst/test/fakee2b"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

const template = "testfirst-agent"

// model is a model API on 127.0.0.1 that records the key of each request.
type model struct {
	mu   sync.Mutex
	keys []string
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.keys = append(m.keys, r.Header.Get("X-Api-Key")+"|"+r.Header.Get("Authorization"))
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"type":"message","content":[{"type":"text","text":"hello from the fake model"}],"path":"`+r.URL.Path+`"}`)
}

func (m *model) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.keys)
}

// world is the fake E2B with its template, the gateway on loopback, the
// Docker engine, a model API and its real key.
type world struct {
	fake    *fakee2b.Server
	client  *e2b.Client
	engine  *e2b.Engine
	docker  *docker.Engine
	wrapper []byte
	model   *model
	modelAt string
	key     string
	waits   *[]time.Duration
	gateway string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{docker: testenv.Docker(t)}
	var err error
	if w.wrapper, err = os.ReadFile(testenv.Wrapper(t)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	img, err := w.docker.EnsureDebianImage(ctx, agent.CommandRecipe, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	w.fake = fakee2b.New(testenv.EngineClient(t), apiKey)
	t.Cleanup(w.fake.Close)
	w.fake.AddTemplate(template, img)
	w.client = w.fake.Client(apiKey)
	var waits []time.Duration
	w.waits = &waits
	w.client.Wait = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.gateway = "http://" + l.Addr().String() + "/egress"
	gw, err := e2b.NewGateway(w.gateway)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(gw.Path(), gw)
	gs := &http.Server{Handler: mux}
	go gs.Serve(l)
	t.Cleanup(func() { gs.Close() })
	w.fake.Expose(l.Addr().String())
	if w.engine, err = e2b.NewEngine(w.client, template, gw); err != nil {
		t.Fatal(err)
	}

	// The model API is on the fake's internet too, at another loopback
	// address than the gateway's: reachable from a sandbox only where its
	// network rules allow.
	w.model = &model{}
	ml, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	ms := httptest.NewUnstartedServer(w.model)
	ms.Listener = ml
	ms.Start()
	t.Cleanup(ms.Close)
	w.modelAt = ms.URL
	w.fake.Expose(ml.Addr().String())
	b := make([]byte, 16)
	rand.Read(b)
	w.key = "sk-real-" + hex.EncodeToString(b)
	return w
}

// runner returns a runner of harnesses on eng (the E2B engine or Docker's).
func (w *world) runner(t *testing.T, eng agent.Engine, harnesses string, timeout string) *agent.SandboxRunner {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "anthropic.key")
	if err := os.WriteFile(keyFile, []byte(w.key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.Parse([]byte(`
model_apis:
  fake: {url: "` + w.modelAt + `", key_file: "` + keyFile + `", header: x-api-key}
harnesses:
` + harnesses + `
agents: {timeout: ` + timeout + `, memory: 1GiB, cpus: 1, pids: 256}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.NewSandboxRunner(eng, egressproxy.New("", nil), cfg, w.wrapper)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func probeHarness(t *testing.T) string {
	files, err := filepath.Abs("../../agent/testdata/probe")
	if err != nil {
		t.Fatal(err)
	}
	return `  probe: {preset: command, command: ["/agent/probe.py"], files: "` + files + `", model_api: fake, egress: [github.com]}`
}

func baseTree(t *testing.T) *tree.Tree {
	t.Helper()
	b, err := tree.New([]tree.File{
		{Path: "greet.py", Mode: 0o644, Data: []byte("def greet(name):\n    return 'hi ' + name\n")},
		{Path: "obsolete.txt", Mode: 0o644, Data: []byte("old\n")},
		{Path: "tool.sh", Mode: 0o644, Data: []byte("echo tool\n")},
		{Path: ".gitignore", Mode: 0o644, Data: []byte("*.txt\n")},
		{Path: "pkg/__init__.py", Mode: 0o644, Data: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func task(role agent.Role) agent.Task {
	return agent.Task{Role: role, Repo: "octo/greet", Issue: 7, Title: "Add a greeting", Body: "hello() returns 'hello'.",
		BaseSHA: "0123456789abcdef0123456789abcdef01234567", Round: 1}
}

// handedBack is what a run hands back that must not depend on where it
// ran: all of it but the probe's report of its surroundings, the egress
// log and the duration.
type handedBack struct {
	Tests          []tree.File
	Criteria       map[string][]string
	ReferencePatch []byte
	Changes        []agent.Change
	Patch          []byte
	Stdout, Stderr []byte
	BaseCommit     string
	ExitCode       int
	TimedOut       bool
	Problems       []string
}

func handed(r agent.Result) handedBack {
	return handedBack{r.Tests, r.Criteria, r.ReferencePatch, r.Changes, r.Patch, r.Stdout, r.Stderr, r.BaseCommit, r.ExitCode, r.TimedOut, r.Problems}
}

// report is the part of testdata/probe's report this test reads.
type report struct {
	UID            int               `json:"uid"`
	LogAll         []string          `json:"log_all"`
	Remotes        []string          `json:"remotes"`
	ObjectsStored  []string          `json:"objects_stored"`
	ObjectsReached []string          `json:"objects_reachable"`
	Env            map[string]string `json:"env"`
	SecretsInFiles [][]string        `json:"secrets_in_files"`
	AgentWritable  bool              `json:"agent_writable"`
	TaskWritable   bool              `json:"task_writable"`
	OutWritable    bool              `json:"out_writable"`
	Direct         map[string]string `json:"direct"`
	GitHubHTTPS    []any             `json:"github_https"`
	ModelDirect    []any             `json:"model_direct"`
	ModelViaProxy  []any             `json:"model_via_proxy"`
}

// TestAgentRounds runs the scripted probe as a writer and as an
// implementer through the E2B provider (against the fake, whose sandboxes
// are containers) and on Docker: the same task hands back the same bytes;
// inside E2B's sandbox the workspace is the base as one commit, no secret
// of ours is in its environment or files, the model API answers through
// the proxy with a key the sandbox never held, and GitHub is refused; no
// request the sandbox's side received carries the model key or the E2B
// key; and every sandbox is killed at its run's end.
func TestAgentRounds(t *testing.T) {
	w := newWorld(t)
	onE2B := w.runner(t, w.engine, probeHarness(t), "3m")
	onDocker := w.runner(t, w.docker, probeHarness(t), "3m")
	base := baseTree(t)
	for _, role := range []agent.Role{agent.RoleWriter, agent.RoleImplementer} {
		t.Run(string(role), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			req := agent.Request{Task: task(role), Harness: "probe", Base: base}
			e, err := onE2B.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if e.ExitCode != 0 || e.TimedOut {
				t.Fatalf("on E2B: exit %d timed out %v\nstdout %s\nstderr %s", e.ExitCode, e.TimedOut, e.Stdout, e.Stderr)
			}
			d, err := onDocker.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s on E2B (the fake), %s on Docker", role, e.Duration.Round(time.Millisecond), d.Duration.Round(time.Millisecond))
			if diff := cmp.Diff(handed(d), handed(e)); diff != "" {
				t.Errorf("Docker (-) and E2B (+) handed back different results:\n%s", diff)
			}
			if role == agent.RoleWriter && len(e.Tests) != 1 || role == agent.RoleImplementer && len(e.Changes) == 0 {
				t.Errorf("%s handed back tests %d, changes %d", role, len(e.Tests), len(e.Changes))
			}
			var rep report
			if err := json.Unmarshal(e.Summary, &rep); err != nil {
				t.Fatalf("RESULT.md: %v\n%s", err, e.Summary)
			}
			if len(rep.LogAll) != 1 || len(rep.Remotes) != 0 || !slices.Equal(rep.ObjectsStored, rep.ObjectsReached) || rep.UID < 100000 {
				t.Errorf("workspace: log %q, remotes %q, objects stored %d reachable %d, uid %d", rep.LogAll, rep.Remotes, len(rep.ObjectsStored), len(rep.ObjectsReached), rep.UID)
			}
			if rep.AgentWritable || rep.TaskWritable || !rep.OutWritable {
				t.Errorf("/agent writable %v, /task writable %v, /out writable %v", rep.AgentWritable, rep.TaskWritable, rep.OutWritable)
			}
			for k, v := range rep.Env {
				if strings.Contains(v, w.key) || strings.Contains(v, apiKey) || strings.HasPrefix(k, "TESTFIRST_EGRESS") || strings.HasPrefix(k, "E2B") {
					t.Errorf("the agent's environment holds %s=%q", k, v)
				}
			}
			if len(rep.SecretsInFiles) != 0 {
				t.Errorf("credentials in the sandbox's files: %q", rep.SecretsInFiles)
			}
			for name, got := range map[string][]any{"through the relay": rep.ModelDirect, "as a proxy request": rep.ModelViaProxy} {
				if got[0] != 200.0 || !strings.Contains(got[1].(string), "hello from the fake model") {
					t.Errorf("model API %s: %v", name, got)
				}
			}
			if got := rep.GitHubHTTPS; got[0] == 200.0 || !strings.Contains(got[1].(string), "403") && got[0] != 403.0 {
				t.Errorf("https://github.com/ through the proxy: %v, want refused", got)
			}
			for target, got := range rep.Direct {
				if !strings.HasPrefix(got, "refused") {
					t.Errorf("direct connection to %s: %s", target, got)
				}
			}
		})
	}
	for _, k := range w.model.seen() {
		if k != w.key+"|" {
			t.Errorf("the model API got key|authorization %q, want the real key and nothing else", k)
		}
	}
	if got := w.fake.Running(); len(got) != 0 {
		t.Errorf("sandboxes left running: %v", got)
	}
	checkRequests(t, w)
}

// checkRequests greps every request the fake received: those the sandbox
// could read (its daemon's) carry neither the model key nor the E2B key;
// the API's carry the E2B key (so the grep would have found it). Every
// creation asked for the template, metadata with the deadline and network
// rules that allow the gateway's host only.
func checkRequests(t *testing.T, w *world) {
	t.Helper()
	var api, box int
	for _, r := range w.fake.Requests() {
		all := r.Method + " " + r.Host + r.Path + "?" + r.Query.Encode() + "\n" + string(r.Body)
		for k, vs := range r.Header {
			all += "\n" + k + ": " + strings.Join(vs, ",")
		}
		if strings.Contains(all, w.key) {
			t.Errorf("a request to the fake holds the model key: %s %s", r.Method, r.Path)
		}
		if r.Sandbox {
			box++
			if strings.Contains(all, apiKey) {
				t.Errorf("a request to the sandbox's daemon holds the E2B key: %s %s", r.Method, r.Path)
			}
		} else if strings.Contains(all, apiKey) {
			api++
		}
	}
	if api == 0 || box == 0 {
		t.Errorf("%d API requests with the key, %d to sandboxes: want both", api, box)
	}
	for _, n := range w.fake.Created() {
		if n.TemplateID != template || n.Metadata[sandbox.LabelSandbox] != "1" || n.Metadata[sandbox.LabelDeadline] == "" || n.Network == nil ||
			!slices.Equal(n.Network.DenyOut, []string{"0.0.0.0/0"}) || !slices.Equal(n.Network.AllowOut, []string{"127.0.0.1"}) || len(n.EnvVars) != 0 {
			t.Errorf("created %+v network %+v", n, n.Network)
		}
	}
}

// TestEgressRules: E2B's network rules are what keeps a sandbox to the
// gateway. The attack: an agent connects straight to the model API (on
// the fake's internet), around the proxy. A sandbox created as E2B makes
// one by default (internet access) lets it through; the engine's sandbox,
// created with denyOut 0.0.0.0/0 and allowOut the gateway's host, does
// not, and still reaches the gateway (TestAgentRounds goes through it to
// the model API).
func TestEgressRules(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	model := strings.TrimPrefix(w.modelAt, "http://")
	gateway := strings.TrimSuffix(strings.TrimPrefix(w.gateway, "http://"), "/egress")
	const connect = `import socket, sys
for a in sys.argv[1:]:
    h, p = a.rsplit(":", 1)
    try:
        socket.create_connection((h, int(p)), timeout=3).close(); print(a, "connected")
    except OSError as e:
        print(a, "refused", e)
`
	// Before: E2B's default sandbox.
	sb, err := w.client.Create(ctx, e2b.NewSandbox{TemplateID: template, Timeout: 60})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, err := w.client.Envd(sb).Start(ctx, e2b.Process{Cmd: "python3", Args: []string{"-c", connect, model, "1.1.1.1:443"}}, "root", &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), model+" connected") || !strings.Contains(out.String(), "1.1.1.1:443 refused") {
		t.Errorf("E2B's default sandbox on the fake: %q, want the model API reached directly (and nothing off the fake's internet)", out.String())
	}
	w.client.Kill(ctx, sb.SandboxID)

	// The engine's sandbox, with the rules.
	sess, err := egressproxy.New("", nil).Serve(agent.EgressPolicy{Allow: []string{"pypi.org:443"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := w.engine.Run(ctx, sandbox.Spec{Image: template, Entrypoint: []string{"python3", "-c", connect, model, gateway}, Timeout: time.Minute,
		StdoutLimit: 1 << 10, StderrLimit: 1 << 10, ProxySocket: sess.Socket()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Stdout), model+" refused") || !strings.Contains(string(res.Stdout), gateway+" connected") {
		t.Errorf("the engine's sandbox: %q %q, want the model API refused and the gateway reached", res.Stdout, res.Stderr)
	}
}

// TestRetriedCreate: E2B answering 429 and then 503 to the creation is
// waited out, and the run goes on.
func TestRetriedCreate(t *testing.T) {
	w := newWorld(t)
	w.fake.FailNext("/sandboxes", 1, 429, "2")
	w.fake.FailNext("/sandboxes", 1, 503, "")
	res, err := w.engine.Run(context.Background(), sandbox.Spec{Image: template, Entrypoint: []string{"/bin/sh", "-c", "cat; echo -n done >&2"},
		Input: strings.NewReader("the input"), Timeout: time.Minute, StdoutLimit: 1 << 10, StderrLimit: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "the input" || string(res.Stderr) != "done" || res.ExitCode != 0 {
		t.Errorf("stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	if !slices.Equal(*w.waits, []time.Duration{2 * time.Second, time.Second}) {
		t.Errorf("waits %v", *w.waits)
	}
	if got := w.fake.Running(); len(got) != 0 {
		t.Errorf("sandboxes left running: %v", got)
	}
}

// TestSandboxEnds: a sandbox that outlives its deadline is a timed-out
// result and is killed; one that dies under its command is an error that
// says so; a cancelled run kills its sandbox.
func TestSandboxEnds(t *testing.T) {
	w := newWorld(t)
	hang := sandbox.Spec{Image: template, Entrypoint: []string{"sleep", "600"}, Timeout: 2 * time.Second, StdoutLimit: 1 << 10, StderrLimit: 1 << 10}
	res, err := w.engine.Run(context.Background(), hang)
	if err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("past its deadline: %+v %v", res, err)
	}
	if got := w.fake.Running(); len(got) != 0 {
		t.Errorf("a sandbox past its deadline is still running: %v", got)
	}

	hang.Timeout = 10 * time.Minute
	started := func() string {
		if ids := w.fake.Started(); len(ids) == 1 {
			return ids[0]
		}
		return ""
	}
	done := make(chan error, 1)
	go func() { _, err := w.engine.Run(context.Background(), hang); done <- err }()
	w.fake.Die(waitFor(t, started))
	if err := <-done; err == nil || !strings.Contains(err.Error(), "the sandbox died") {
		t.Errorf("a sandbox that died under its command: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := w.engine.Run(ctx, hang); done <- err }()
	waitFor(t, started)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("a cancelled run: %v", err)
	}
	if got := w.fake.Running(); len(got) != 0 {
		t.Errorf("a cancelled run's sandbox is still running: %v", got)
	}
}

// TestSweep: the sandboxes a dead process left (created with its
// metadata, their deadline past) are found by metadata and killed; a run
// in progress (its deadline ahead) and a sandbox not ours are not.
func TestSweep(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	now := time.Now()
	mk := func(meta map[string]string) string {
		s, err := w.client.Create(ctx, e2b.NewSandbox{TemplateID: template, Timeout: 600, Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		return s.SandboxID
	}
	left := mk(map[string]string{e2b.MetaSandbox: "1", e2b.MetaDeadline: strconv.FormatInt(now.Add(-2*time.Minute).Unix(), 10), sandbox.LabelJob: "7"})
	running := mk(map[string]string{e2b.MetaSandbox: "1", e2b.MetaDeadline: strconv.FormatInt(now.Add(time.Hour).Unix(), 10), sandbox.LabelJob: "8"})
	other := mk(map[string]string{"owner": "someone else", e2b.MetaDeadline: "1"})
	n, err := w.engine.Sweep(ctx, now)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want 1", n, err)
	}
	if got := w.fake.Running(); !slices.Equal(got, sorted(running, other)) {
		t.Errorf("after the sweep %v, want %v (%s gone)", got, sorted(running, other), left)
	}
	// A rescued job's sandboxes go, running or not.
	if n, err := w.engine.RemoveLabelled(ctx, sandbox.LabelJob, "8"); err != nil || n != 1 {
		t.Errorf("remove job 8's: %d %v", n, err)
	}
	if got := w.fake.Running(); !slices.Equal(got, []string{other}) {
		t.Errorf("left %v, want %s only", got, other)
	}
}

func sorted(s ...string) []string { slices.Sort(s); return s }

func waitFor(t *testing.T, f func() string) string {
	t.Helper()
	for range 2400 {
		if v := f(); v != "" {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("waited two minutes")
	return ""
}

// envDeadProcess, in a child of TestSweepAfterOurProcessDied, is the
// fake's address: the child runs one sandbox there until it is killed.
const envDeadProcess = "TESTFIRST_E2B_DEAD_PROCESS"

// TestSweepAfterOurProcessDied: the process running a sandbox is killed
// (SIGKILL, nothing of it runs after) in the middle of the run. Its
// sandbox lives on, found by the metadata it was created with: a sweep of
// another process leaves it while its deadline is ahead, kills it once
// the deadline is LeftoverGrace past, and E2B's own timeout for it ends a
// minute after that deadline should no sweep run at all.
func TestSweepAfterOurProcessDied(t *testing.T) {
	if addr := os.Getenv(envDeadProcess); addr != "" {
		eng, err := e2b.NewEngine(fakee2b.ClientAt(addr, apiKey), template, nil)
		if err != nil {
			t.Fatal(err)
		}
		spec := sandbox.Spec{Image: template, Entrypoint: []string{"sleep", "600"}, Timeout: 10 * time.Minute,
			StdoutLimit: 1 << 10, StderrLimit: 1 << 10, Labels: map[string]string{sandbox.LabelJob: "41"}}
		res, err := eng.Run(context.Background(), spec)
		t.Fatalf("the run was to be killed with its process; it ended: %+v %v", res, err)
	}
	w := newWorld(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepAfterOurProcessDied$", "-test.count=1")
	cmd.Env = append(os.Environ(), envDeadProcess+"="+w.fake.Addr())
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	id := waitFor(t, func() string {
		select {
		case err := <-exited:
			t.Fatalf("the child ended before its sandbox started: %v\n%s", err, out.String())
		default:
		}
		if ids := w.fake.Started(); len(ids) == 1 {
			return ids[0]
		}
		return ""
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child was not killed: %v\n%s", err, out.String())
	}
	if got := w.fake.Running(); !slices.Equal(got, []string{id}) {
		t.Fatalf("after our process died, running %v; want its sandbox %s", got, id)
	}

	created := w.fake.Created()
	if len(created) != 1 {
		t.Fatalf("created %d sandboxes; want 1", len(created))
	}
	meta := created[0].Metadata
	deadline, err := strconv.ParseInt(meta[e2b.MetaDeadline], 10, 64)
	if err != nil || meta[e2b.MetaSandbox] != "1" || meta[sandbox.LabelJob] != "41" {
		t.Fatalf("the sandbox's metadata %v lacks what a sweep or a rescue finds it by", meta)
	}
	if end := time.Unix(deadline, 0); end.Before(began.Add(10*time.Minute-time.Second)) || end.After(time.Now().Add(10*time.Minute)) {
		t.Errorf("deadline %v; want the run's, 10 minutes after %v", end, began)
	}
	if got := created[0].Timeout; got != 11*60 {
		t.Errorf("E2B's timeout for the sandbox %d s; want the run's 600 s and a minute", got)
	}

	// Another process: its engine, its client.
	other, err := e2b.NewEngine(w.fake.Client(apiKey), template, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := other.Sweep(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("a sweep before the deadline killed %d (%v); a run may still be using it", n, err)
	}
	if n, err := other.Sweep(ctx, time.Unix(deadline, 0).Add(sandbox.LeftoverGrace-time.Second)); err != nil || n != 0 {
		t.Errorf("a sweep within the grace killed %d (%v)", n, err)
	}
	if got := w.fake.Running(); !slices.Equal(got, []string{id}) {
		t.Fatalf("running %v; want %s still", got, id)
	}
	box := w.fake.Container(id)
	if n, err := other.Sweep(ctx, time.Unix(deadline, 0).Add(sandbox.LeftoverGrace)); err != nil || n != 1 {
		t.Errorf("the sweep past the grace killed %d (%v); want the dead process's sandbox", n, err)
	}
	if got := w.fake.Running(); len(got) != 0 {
		t.Errorf("after the sweep still running: %v", got)
	}
	if _, err := testenv.EngineClient(t).ContainerInspect(ctx, box); !errdefs.IsNotFound(err) {
		t.Errorf("the sandbox's container %s: %v; want it removed", box, err)
	}
}

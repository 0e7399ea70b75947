package test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/egress"
	"github.com/testfirst-app/testfirst/test/fakemodel"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// hostCA is the host's certificate bundle, which a preset image's npm
// install trusts beside Debian's: on a machine whose way to the registry
// intercepts TLS, that is where the interceptor's authority is.
func hostCA(t *testing.T) []byte {
	for _, p := range []string{os.Getenv("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"} {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			return b
		}
	}
	return nil
}

// ensurePresetImage builds (or finds) p's image through an egress proxy
// that allows the npm registry only, and says how long it took.
func ensurePresetImage(t *testing.T, p agent.Preset) string {
	t.Helper()
	eng := testenv.Docker(t)
	proxy, err := egress.New([]string{agent.NPMRegistry}, egress.WithLog(func(e egress.Entry) {
		if e.Denied != "" {
			t.Logf("image build egress refused: %s %s%s: %s", e.Method, e.Host, e.Path, e.Denied)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	ref, _, err := p.EnsureImage(ctx, eng, agent.ImageBuild{ProxySocket: srv.Socket, ExtraCA: hostCA(t), Progress: &progress})
	if err != nil {
		t.Fatalf("agent image %s: %v\n%s", p.Name, err, progress.String())
	}
	t.Logf("agent image %s ready in %s", ref, time.Since(began).Round(time.Millisecond))
	return ref
}

// modelLog collects the egress proxy's entries of an agent run.
type modelLog struct {
	mu      sync.Mutex
	entries []egress.Entry
}

func (l *modelLog) add(e egress.Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

func (l *modelLog) all() []egress.Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]egress.Entry(nil), l.entries...)
}

// relayScript relays 127.0.0.1:3128 to the egress proxy's socket with the
// image's node, then runs the preset's command in /workspace: what the
// agent runner's sandbox does, for a plain docker run with network none.
const relayScript = `set -e
node -e "const n=require('net');n.createServer(c=>{const u=n.connect('` + sandbox.ProxyMount + `');u.on('error',()=>c.destroy());c.on('error',()=>u.destroy());c.pipe(u).pipe(c)}).listen(3128,'127.0.0.1')" &
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.1; done
cd /workspace
git init -q -b main && git add -A && git -c user.name=testfirst -c user.email=testfirst@invalid commit -qm base
mkdir -p /out/tests
"$@"
`

// runPresetPlain runs inv in image ref with network none, the proxy's
// socket its one mount, and the task and a one-file base tree copied in;
// it returns the exit code, stdout, and /out as a tar stream.
func runPresetPlain(t *testing.T, ref, socket string, inv agent.Invocation, taskMD string, task agent.Task) (int, []byte, []byte, []string) {
	t.Helper()
	name := "testfirst-agent-preset-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	exec.Command("docker", "rm", "-f", name).Run()
	args := []string{"create", "--name", name, "--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--pids-limit", "512", "--memory", "2g", "--label", sandbox.LabelSandbox + "=1",
		"--label", sandbox.LabelDeadline + "=" + strconv.FormatInt(time.Now().Add(10*time.Minute).Unix(), 10),
		"--mount", "type=bind,source=" + socket + ",target=" + sandbox.ProxyMount,
		"--tmpfs", "/tmp:rw,exec,size=512m,mode=1777",
		"--entrypoint", "/bin/bash"}
	proxyURL := agent.ProxyURL
	for _, e := range append([]string{"HTTP_PROXY=" + proxyURL, "HTTPS_PROXY=" + proxyURL, "http_proxy=" + proxyURL, "https_proxy=" + proxyURL}, inv.Env...) {
		args = append(args, "--env", e)
	}
	args = append(args, ref, "-c", relayScript, "agent")
	args = append(args, inv.Command...)
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		t.Fatalf("docker create: %v\n%s", err, out)
	}
	defer exec.Command("docker", "rm", "-f", name).Run()

	taskJSON, _ := json.Marshal(task)
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	for _, f := range []struct{ name, data string }{
		{"task/TASK.md", taskMD},
		{"task/task.json", string(taskJSON)},
		{"workspace/slug.py", "def slugify(s):\n    return s.lower()\n"},
	} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.data))
	}
	tw.Close()
	cp := exec.Command("docker", "cp", "-", name+":/")
	cp.Stdin = &in
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("docker cp task: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	start := exec.Command("docker", "start", "--attach", name)
	start.Stdout, start.Stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- start.Run() }()
	var runErr error
	select {
	case runErr = <-done:
	case <-ctx.Done():
		exec.Command("docker", "kill", name).Run()
		t.Fatalf("the agent ran past 5 minutes\nstdout:\n%s\nstderr:\n%s", stdout.Bytes(), stderr.Bytes())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		code = ee.ExitCode()
	} else if runErr != nil {
		t.Fatal(runErr)
	}
	out, err := exec.Command("docker", "cp", name+":/out", "-").Output()
	if err != nil {
		t.Fatalf("docker cp /out: %v", err)
	}
	env, err := exec.Command("docker", "inspect", "--format", "{{json .Config.Env}}", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	var envs []string
	json.Unmarshal(env, &envs)
	if stderr.Len() > 0 {
		t.Logf("agent stderr:\n%s", stderr.Bytes())
	}
	return code, stdout.Bytes(), out, envs
}

// untar reads a docker cp stream into path → content.
func untar(t *testing.T, b []byte) map[string]string {
	t.Helper()
	files := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			d, _ := io.ReadAll(tr)
			files[h.Name] = string(d)
		}
	}
}

// presetCase is one preset's end-to-end run: the scripted model API's
// steps for its CLI, which look at the sandbox's environment first and
// then write the writer's files.
type presetCase struct {
	preset   agent.Preset
	modelAPI string
	header   string
	// keyVar and urlVar are the environment variables that must hold the
	// placeholder key and the proxy's model URL inside.
	keyVar, urlVar string
	urlSuffix      string
	script         func(testFile, criteria, result string) []fakemodel.Step
}

const presetTestFile = "from slug import slugify\n\n\ndef test_spaces_become_dashes():\n    assert slugify(\"A b\") == \"a-b\"\n"

var presetCases = []presetCase{
	{
		preset: agent.ClaudeCode, modelAPI: "anthropic", header: egress.HeaderAPIKey, keyVar: "ANTHROPIC_API_KEY", urlVar: "ANTHROPIC_BASE_URL",
		script: func(testFile, criteria, result string) []fakemodel.Step {
			return []fakemodel.Step{
				{Tool: "Bash", Input: map[string]any{"command": "env | sort; git -C /workspace log --all --oneline", "description": "Look at the sandbox"}},
				{Tool: "Write", Input: map[string]any{"file_path": "/out/tests/test_slug.py", "content": testFile}},
				{Tool: "Write", Input: map[string]any{"file_path": "/out/criteria.json", "content": criteria}},
				{Tool: "Write", Input: map[string]any{"file_path": "/out/RESULT.md", "content": result}},
				{Text: "The tests are in /out/tests."},
			}
		},
	},
	{
		preset: agent.Codex, modelAPI: "openai", header: egress.HeaderBearer, keyVar: "OPENAI_API_KEY", urlVar: "OPENAI_BASE_URL", urlSuffix: "/v1",
		// codex offers its shell through exec, a free-form tool that runs
		// JavaScript calling tools.exec_command.
		script: func(testFile, criteria, result string) []fakemodel.Step {
			write := func(path, content string) string {
				return "const r = await tools.exec_command({cmd: \"mkdir -p $(dirname " + path + ") && printf %s " +
					base64.StdEncoding.EncodeToString([]byte(content)) + " | base64 -d > " + path + "\"});\ntext(r.output);\n"
			}
			return []fakemodel.Step{
				{Tool: "exec", Raw: "const r = await tools.exec_command({cmd: \"env | sort; git -C /workspace log --all --oneline\"});\ntext(r.output);\n"},
				{Tool: "exec", Raw: write("/out/tests/test_slug.py", testFile)},
				{Tool: "exec", Raw: write("/out/criteria.json", criteria)},
				{Tool: "exec", Raw: write("/out/RESULT.md", result)},
				{Text: "The tests are in /out/tests."},
			}
		},
	},
}

// TestPresetsWriteTests runs each preset's real CLI (claude-code, codex)
// from its image in a sandbox with network none, against a scripted model
// API on 127.0.0.1 reached through the egress proxy's model route: the CLI
// runs the scripted tool calls (a look at its own environment, then the
// writer's files) and the test file lands in /out/tests. Every request
// reached the model API with the real key; the environment the CLI
// reported from inside holds only the placeholder; everything else the
// CLI tried to reach was refused.
//
// It needs the npm registry the first time (the images are built from it),
// so it runs only with TESTFIRST_AGENT_PRESETS set: make test-agents.
func TestPresetsWriteTests(t *testing.T) {
	if os.Getenv("TESTFIRST_AGENT_PRESETS") == "" {
		t.Skip("the agent presets' CLIs run with TESTFIRST_AGENT_PRESETS=1 (make test-agents): their images are built from the npm registry")
	}
	for _, pc := range presetCases {
		t.Run(pc.preset.Name, func(t *testing.T) { testPresetWritesTests(t, pc) })
	}
}

func testPresetWritesTests(t *testing.T, pc presetCase) {
	began := time.Now()
	ref := ensurePresetImage(t, pc.preset)
	const realKey = "sk-real-key-only-the-proxy-holds"
	const criteria = `{"spaces become dashes": ["tests/test_slug.py::test_spaces_become_dashes"]}`
	fake := fakemodel.New(pc.script(presetTestFile, criteria, "One test: spaces become dashes.\n"), fakemodel.WithKey(realKey))
	defer fake.Close()

	var log modelLog
	proxy, err := egress.New([]string{"pypi.org:443"}, egress.WithModel(pc.modelAPI, fake.URL, pc.header, realKey), egress.WithLog(log.add))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	task := agent.Task{Role: agent.RoleWriter, Repo: "octo/slug", Issue: 7, Title: "slugify turns spaces into dashes", BaseSHA: strings.Repeat("a", 40), Round: 1}
	taskMD := "# " + task.Title + "\n\nslugify(\"A b\") should be \"a-b\".\n\n" + agent.Instructions(agent.RoleWriter)
	inv := pc.preset.Invocation(agent.RoleWriter, pc.modelAPI)
	runBegan := time.Now()
	code, stdout, out, envs := runPresetPlain(t, ref, srv.Socket, inv, taskMD, task)
	t.Logf("%s ran in %s", pc.preset.Name, time.Since(runBegan).Round(time.Millisecond))
	if code != 0 {
		t.Errorf("%s exited with %d\nstdout:\n%s", inv.Command[0], code, stdout)
	}
	if errs := fake.Errors(); len(errs) > 0 {
		t.Errorf("the scripted model API could not answer as scripted: %q", errs)
	}

	files := untar(t, out)
	if got := files["out/tests/test_slug.py"]; got != presetTestFile {
		t.Errorf("/out/tests/test_slug.py = %q, want the scripted test %q (files: %v)", got, presetTestFile, keys(files))
	}
	if got := files["out/criteria.json"]; got != criteria {
		t.Errorf("/out/criteria.json = %q, want %q", got, criteria)
	}

	reqs := fake.Requests()
	scripted := 0
	var sandboxEnv string
	for _, r := range reqs {
		if r.Key != realKey {
			t.Errorf("%s %s reached the model API with key %q, not the real one", r.Method, r.Path, r.Key)
		}
		if strings.Contains(string(r.Body), realKey) {
			t.Errorf("%s %s: the real key is in what the CLI sent", r.Method, r.Path)
		}
		if r.Step >= 0 {
			scripted++
		}
		if r.Step == 1 {
			sandboxEnv = string(r.Body)
		}
	}
	if want := len(pc.script("", "", "")); scripted != want {
		t.Errorf("%d requests walked the script, want %d (one per step)", scripted, want)
	}
	// The first step's result, as the CLI reported it to the model, is
	// the sandbox's own environment: the placeholder, never the key.
	for _, want := range []string{pc.keyVar + "=" + agent.PlaceholderKey, pc.urlVar + "=" + agent.ModelURL(pc.modelAPI) + pc.urlSuffix} {
		if !strings.Contains(sandboxEnv, want) {
			t.Errorf("the CLI's report of env lacks %s:\n%.3000s", want, sandboxEnv)
		}
	}
	if strings.Contains(string(stdout), realKey) {
		t.Error("the real key is in the CLI's transcript")
	}
	for _, e := range envs {
		if strings.Contains(e, realKey) {
			t.Errorf("the container's environment holds the real key: %s", e)
		}
	}
	models := 0
	for _, e := range log.all() {
		switch {
		case e.Model == pc.modelAPI && e.Denied == "":
			models++
		case e.Denied == "":
			t.Errorf("egress beside the model API got out: %s %s%s %d", e.Method, e.Host, e.Path, e.Status)
		default:
			t.Logf("egress refused: %s %s%s: %s", e.Method, e.Host, e.Path, e.Denied)
		}
	}
	if models != len(reqs) {
		t.Errorf("the egress log holds %d model API requests, the model API received %d", models, len(reqs))
	}
	t.Logf("%d requests to the model API, %d of them scripted steps; test took %s", len(reqs), scripted, time.Since(began).Round(time.Millisecond))
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

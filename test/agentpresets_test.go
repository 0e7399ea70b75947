package test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/sandbox/egress"
	"github.com/testfirst-app/testfirst/test/fakemodel"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// The Docker engine builds the presets' images.
var _ agent.ImageEngine = (*docker.Engine)(nil)

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

// presetCase is one preset's end-to-end run: the scripted model API's
// steps for its CLI, which look at the sandbox's environment first and
// then hand back the role's results.
type presetCase struct {
	cli      agent.CLI
	modelAPI string
	header   string
	// keyVar and urlVar are the environment variables that must hold the
	// placeholder key and the proxy's model URL inside.
	keyVar, urlVar string
	urlSuffix      string
	// writer and implementer are the scripts of each role.
	writer, implementer []fakemodel.Step
}

// The base, and what the scripted agents hand back.
const (
	presetBase     = "def slugify(s):\n    return s.lower()\n"
	presetFixed    = "def slugify(s):\n    return s.lower().replace(\" \", \"-\")\n"
	presetTestFile = "from slug import slugify\n\n\ndef test_spaces_become_dashes():\n    assert slugify(\"A b\") == \"a-b\"\n"
	presetCriteria = `{"spaces become dashes": ["tests/test_slug.py::test_spaces_become_dashes"]}`
	presetResult   = "spaces become dashes\n"
	lookAround     = "env | sort; git -C /workspace log --all --oneline"
)

// codexWrite is codex's exec input that writes content to path with its
// shell (exec runs JavaScript that calls tools.exec_command).
func codexWrite(path, content string) string {
	return "const r = await tools.exec_command({cmd: \"mkdir -p $(dirname " + path + ") && printf %s " +
		base64.StdEncoding.EncodeToString([]byte(content)) + " | base64 -d > " + path + "\"});\ntext(r.output);\n"
}

var presetCases = []presetCase{
	{
		cli: agent.ClaudeCode, modelAPI: "anthropic", header: egress.HeaderAPIKey, keyVar: "ANTHROPIC_API_KEY", urlVar: "ANTHROPIC_BASE_URL",
		writer: []fakemodel.Step{
			{Tool: "Bash", Input: map[string]any{"command": lookAround, "description": "Look at the sandbox"}},
			{Tool: "Write", Input: map[string]any{"file_path": "/out/tests/test_slug.py", "content": presetTestFile}},
			{Tool: "Write", Input: map[string]any{"file_path": "/out/criteria.json", "content": presetCriteria}},
			{Tool: "Write", Input: map[string]any{"file_path": "/out/RESULT.md", "content": presetResult}},
			{Text: "The tests are in /out/tests."},
		},
		// claude-code edits only a file it has read.
		implementer: []fakemodel.Step{
			{Tool: "Bash", Input: map[string]any{"command": lookAround, "description": "Look at the sandbox"}},
			{Tool: "Read", Input: map[string]any{"file_path": "/workspace/slug.py"}},
			{Tool: "Edit", Input: map[string]any{"file_path": "/workspace/slug.py", "old_string": "return s.lower()", "new_string": `return s.lower().replace(" ", "-")`}},
			{Tool: "Write", Input: map[string]any{"file_path": "/out/RESULT.md", "content": presetResult}},
			{Text: "slugify now turns spaces into dashes."},
		},
	},
	{
		cli: agent.Codex, modelAPI: "openai", header: egress.HeaderBearer, keyVar: "OPENAI_API_KEY", urlVar: "OPENAI_BASE_URL", urlSuffix: "/v1",
		writer: []fakemodel.Step{
			{Tool: "exec", Raw: "const r = await tools.exec_command({cmd: \"" + lookAround + "\"});\ntext(r.output);\n"},
			{Tool: "exec", Raw: codexWrite("/out/tests/test_slug.py", presetTestFile)},
			{Tool: "exec", Raw: codexWrite("/out/criteria.json", presetCriteria)},
			{Tool: "exec", Raw: codexWrite("/out/RESULT.md", presetResult)},
			{Text: "The tests are in /out/tests."},
		},
		implementer: []fakemodel.Step{
			{Tool: "exec", Raw: "const r = await tools.exec_command({cmd: \"" + lookAround + "\"});\ntext(r.output);\n"},
			{Tool: "exec", Raw: codexWrite("/workspace/slug.py", presetFixed)},
			{Tool: "exec", Raw: codexWrite("/out/RESULT.md", presetResult)},
			{Text: "slugify now turns spaces into dashes."},
		},
	},
}

// TestPresetCLIs runs each preset's real CLI (claude-code, codex), as a
// writer and as an implementer, through the SandboxRunner (its image built
// from Debian's packages and the pinned npm tarballs on first use),
// against a scripted model API on 127.0.0.1 reached through the egress
// proxy's model route. The CLI runs the scripted tool calls (a look at
// its own environment, then the role's work): the writer's test file lands
// in /out/tests with its criteria, the implementer's edit comes back as
// the change and patch of /workspace. Every request reached the model API
// with the real key; the environment the CLI reported from inside holds
// only the placeholder; everything else the CLI tried to reach was
// refused.
//
// It needs the npm registry the first time (the images are built from it),
// so it runs only with TESTFIRST_AGENT_PRESETS set: make test runs the
// claude-code cases, make test-agents both CLIs'.
func TestPresetCLIs(t *testing.T) {
	if os.Getenv("TESTFIRST_AGENT_PRESETS") == "" {
		t.Skip("the agent presets' CLIs run with TESTFIRST_AGENT_PRESETS=1 (make test-agents): their images are built from the npm registry")
	}
	for _, pc := range presetCases {
		t.Run(pc.cli.Name+"/writer", func(t *testing.T) {
			res, _ := runPreset(t, pc, agent.RoleWriter, pc.writer)
			var got string
			var paths []string
			for _, f := range res.Tests {
				paths = append(paths, f.Path)
				if f.Path == "test_slug.py" {
					got = string(f.Data)
				}
			}
			if got != presetTestFile {
				t.Errorf("/out/tests/test_slug.py = %q, want the scripted test %q (tests: %q)", got, presetTestFile, paths)
			}
			if ids := res.Criteria["spaces become dashes"]; len(ids) != 1 || ids[0] != "tests/test_slug.py::test_spaces_become_dashes" {
				t.Errorf("criteria %v", res.Criteria)
			}
			if len(res.Changes) != 0 {
				t.Errorf("a writer handed back changes: %v", res.Changes)
			}
		})
		t.Run(pc.cli.Name+"/implementer", func(t *testing.T) {
			res, _ := runPreset(t, pc, agent.RoleImplementer, pc.implementer)
			if len(res.Changes) != 1 || res.Changes[0].Path != "slug.py" || string(res.Changes[0].Content) != presetFixed {
				t.Errorf("changes %+v, want slug.py as the scripted edit left it", res.Changes)
			}
			if !bytes.Contains(res.Patch, []byte(`+    return s.lower().replace(" ", "-")`)) {
				t.Errorf("patch:\n%s", res.Patch)
			}
			if len(res.Tests) != 0 {
				t.Errorf("an implementer handed back tests: %v", res.Tests)
			}
		})
	}
}

// runPreset runs pc's CLI as role against a model API that answers with
// script, checks what every preset run must show (its exit, RESULT.md,
// the key, the egress), and returns the result.
func runPreset(t *testing.T, pc presetCase, role agent.Role, script []fakemodel.Step) (agent.Result, *fakemodel.Server) {
	t.Helper()
	began := time.Now()
	eng := testenv.Docker(t)
	wrapperBinary, err := os.ReadFile(testenv.Wrapper(t))
	if err != nil {
		t.Fatal(err)
	}
	const realKey = "sk-real-key-only-the-proxy-holds"
	fake := fakemodel.New(script, fakemodel.WithKey(realKey))
	t.Cleanup(fake.Close)
	keyFile := filepath.Join(t.TempDir(), "model.key")
	if err := os.WriteFile(keyFile, []byte(realKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.Parse([]byte(`
model_apis:
  ` + pc.modelAPI + `: {url: "` + fake.URL + `", key_file: "` + keyFile + `", header: ` + pc.header + `}
harnesses:
  ` + pc.cli.Name + `: {preset: ` + pc.cli.Name + `, model_api: ` + pc.modelAPI + `}
agents: {timeout: 5m, memory: 2GiB, cpus: 2, pids: 512}
`))
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	proxies := egressproxy.New("", nil)
	runner, err := agent.NewSandboxRunner(eng, proxies, cfg, wrapperBinary, agent.WithCLIs(eng, proxies, hostCA(t), &progress))
	if err != nil {
		t.Fatal(err)
	}
	base, err := tree.New([]tree.File{{Path: "slug.py", Mode: 0o644, Data: []byte(presetBase)}})
	if err != nil {
		t.Fatal(err)
	}
	task := agent.Task{Role: role, Repo: "octo/slug", Issue: 7, Title: "slugify turns spaces into dashes",
		Body: "slugify(\"A b\") should be \"a-b\".", BaseSHA: strings.Repeat("a", 40), Round: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, agent.Request{Task: task, Harness: pc.cli.Name, Base: base})
	if err != nil {
		t.Fatalf("run %s: %v\n%s", pc.cli.Name, err, progress.String())
	}
	if p := strings.TrimSpace(progress.String()); p != "" {
		t.Logf("%s", p)
	}
	if res.ExitCode != 0 || res.TimedOut {
		t.Errorf("%s exited with %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", pc.cli.Name, res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	if errs := fake.Errors(); len(errs) > 0 {
		t.Errorf("the scripted model API could not answer as scripted: %q", errs)
	}
	if string(res.Summary) != presetResult {
		t.Errorf("RESULT.md = %q, want %q", res.Summary, presetResult)
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
	if scripted != len(script) {
		t.Errorf("%d requests walked the script, want %d (one per step)", scripted, len(script))
	}
	// The first step's result, as the CLI reported it to the model, is
	// the sandbox's own environment: a placeholder key, never the real
	// one, and the proxy's model URL.
	for _, want := range []string{pc.keyVar + "=testfirst-placeholder", pc.urlVar + "=" + agent.ModelURL(pc.modelAPI) + pc.urlSuffix} {
		if !strings.Contains(sandboxEnv, want) {
			t.Errorf("the CLI's report of env lacks %s:\n%.3000s", want, sandboxEnv)
		}
	}
	for name, b := range map[string][]byte{"stdout": res.Stdout, "stderr": res.Stderr, "RESULT.md": res.Summary, "patch": res.Patch} {
		if bytes.Contains(b, []byte(realKey)) {
			t.Errorf("the real key is in the agent's %s", name)
		}
	}
	fakeHost := strings.TrimPrefix(fake.URL, "http://")
	models := 0
	for _, e := range res.Egress {
		switch {
		case e.Host == fakeHost && e.Allowed:
			models++
			if bytes.Contains(e.Body, []byte(realKey)) {
				t.Errorf("the egress log's body of %s %s holds the real key", e.Method, e.Path)
			}
		case e.Allowed:
			t.Errorf("egress beside the model API got out: %s %s%s %d", e.Method, e.Host, e.Path, e.Status)
		default:
			t.Logf("egress refused: %s %s%s: %s", e.Method, e.Host, e.Path, e.Refused)
		}
	}
	if models != len(reqs) {
		t.Errorf("the egress log holds %d model API requests, the model API received %d", models, len(reqs))
	}
	t.Logf("%d requests to the model API, %d of them scripted steps; run took %s", len(reqs), scripted, time.Since(began).Round(time.Millisecond))
	return res, fake
}

// TestPresetImagePins builds a preset image whose pinned integrity is not
// the registry's tarball's, as a registry or a TLS interceptor serving
// another tarball would make it: the build fails, names the pin, and no
// image is kept. The build's egress went to the npm registry only.
func TestPresetImagePins(t *testing.T) {
	if os.Getenv("TESTFIRST_AGENT_PRESETS") == "" {
		t.Skip("the agent presets' images are built with TESTFIRST_AGENT_PRESETS=1 (make test-agents): they come from the npm registry")
	}
	eng := testenv.Docker(t)
	wrong := "sha512-" + base64.StdEncoding.EncodeToString(make([]byte, 64))
	cli := agent.CLI{Name: "pin-test", Tarballs: []agent.NPMTarball{{Spec: agent.Codex.Tarballs[0].Spec, Integrity: wrong}}, Version: []string{"codex", "--version"}}
	var mu sync.Mutex
	var hosts []string
	proxy, err := egress.New([]string{agent.NPMRegistry}, egress.WithLog(func(e egress.Entry) {
		mu.Lock()
		defer mu.Unlock()
		hosts = append(hosts, e.Host)
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref, id, err := cli.EnsureImage(ctx, eng, agent.ImageBuild{ProxySocket: srv.Socket, ExtraCA: hostCA(t)})
	srv.Close() // waits until every request is logged
	if err == nil || !strings.Contains(err.Error(), "not the pinned "+wrong) {
		t.Fatalf("EnsureImage = %s, %s, %v; want the build refused for the pin", ref, id, err)
	}
	t.Logf("refused: %v", err)
	base, err := eng.EnsureDebianImage(ctx, agent.AgentBaseRecipe, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, found, err := eng.FindImage(ctx, cli.ImageRef(base)); err != nil || found {
		t.Errorf("an image was kept for the refused build (found %v, %v)", found, err)
	}
	if len(hosts) == 0 {
		t.Error("the build reached no host: it did not go through the proxy")
	}
	for _, h := range hosts {
		if h != agent.NPMRegistry {
			t.Errorf("the build's egress went to %s", h)
		}
	}
}

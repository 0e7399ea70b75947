package test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/grader"
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

// presetCase is one preset's end-to-end run: the scripted model API's
// steps for its CLI, which look at the sandbox's environment first and
// then write the writer's files.
type presetCase struct {
	cli      agent.CLI
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
		cli: agent.ClaudeCode, modelAPI: "anthropic", header: egress.HeaderAPIKey, keyVar: "ANTHROPIC_API_KEY", urlVar: "ANTHROPIC_BASE_URL",
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
		cli: agent.Codex, modelAPI: "openai", header: egress.HeaderBearer, keyVar: "OPENAI_API_KEY", urlVar: "OPENAI_BASE_URL", urlSuffix: "/v1",
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
// as a writer through the SandboxRunner (its image built from Debian's
// packages and the pinned npm tarballs on first use), against a scripted
// model API on 127.0.0.1 reached through the egress proxy's model route: the CLI
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
		t.Run(pc.cli.Name, func(t *testing.T) { testPresetWritesTests(t, pc) })
	}
}

func testPresetWritesTests(t *testing.T, pc presetCase) {
	began := time.Now()
	eng := testenv.Docker(t)
	wrapperBinary, err := os.ReadFile(testenv.Wrapper(t))
	if err != nil {
		t.Fatal(err)
	}
	const realKey = "sk-real-key-only-the-proxy-holds"
	const criteria = `{"spaces become dashes": ["tests/test_slug.py::test_spaces_become_dashes"]}`
	fake := fakemodel.New(pc.script(presetTestFile, criteria, "One test: spaces become dashes.\n"), fakemodel.WithKey(realKey))
	defer fake.Close()
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
	runner, err := agent.NewSandboxRunner(eng, proxies, cfg, wrapperBinary,
		agent.WithCLIs(eng, proxies, hostCA(t), &progress))
	if err != nil {
		t.Fatal(err)
	}
	base, err := grader.NewTree([]grader.File{{Path: "slug.py", Mode: 0o644, Data: []byte("def slugify(s):\n    return s.lower()\n")}})
	if err != nil {
		t.Fatal(err)
	}
	task := agent.Task{Role: agent.RoleWriter, Repo: "octo/slug", Issue: 7, Title: "slugify turns spaces into dashes",
		Body: "slugify(\"A b\") should be \"a-b\".", BaseSHA: strings.Repeat("a", 40), Round: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, agent.Request{Task: task, Harness: pc.cli.Name, Base: base})
	if err != nil {
		t.Fatalf("run %s: %v\n%s", pc.cli.Name, err, progress.String())
	}
	t.Logf("%s: image and run in %s (%s)", pc.cli.Name, time.Since(began).Round(time.Millisecond), strings.TrimSpace(progress.String()))
	if res.ExitCode != 0 || res.TimedOut {
		t.Errorf("%s exited with %d (timed out %v)\nstdout:\n%s\nstderr:\n%s", pc.cli.Name, res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	if errs := fake.Errors(); len(errs) > 0 {
		t.Errorf("the scripted model API could not answer as scripted: %q", errs)
	}

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
	if !strings.Contains(string(res.Summary), "spaces become dashes") {
		t.Errorf("RESULT.md = %q", res.Summary)
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
	// the sandbox's own environment: a placeholder key, never the real
	// one, and the proxy's model URL.
	for _, want := range []string{pc.keyVar + "=testfirst-placeholder", pc.urlVar + "=" + agent.ModelURL(pc.modelAPI) + pc.urlSuffix} {
		if !strings.Contains(sandboxEnv, want) {
			t.Errorf("the CLI's report of env lacks %s:\n%.3000s", want, sandboxEnv)
		}
	}
	for name, b := range map[string][]byte{"stdout": res.Stdout, "stderr": res.Stderr, "RESULT.md": res.Summary} {
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
	t.Logf("%d requests to the model API, %d of them scripted steps; test took %s", len(reqs), scripted, time.Since(began).Round(time.Millisecond))
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

package agent_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// fakeModel is a model API on 127.0.0.1 that records the key each request
// carried.
type fakeModel struct {
	mu     sync.Mutex
	keys   []string
	bodies []string
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.keys = append(m.keys, r.Header.Get("X-Api-Key")+"|"+r.Header.Get("Authorization"))
	m.bodies = append(m.bodies, string(body))
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"type":"message","content":[{"type":"text","text":"hello from the fake model"}],"path":"`+r.URL.Path+`"}`)
}

// probeReport is what testdata/probe/probe.py found inside the sandbox.
type probeReport struct {
	Task             map[string]any    `json:"task"`
	TaskMDHasTitle   bool              `json:"task_md_has_title"`
	UID              int               `json:"uid"`
	Home             string            `json:"home"`
	Cwd              string            `json:"cwd"`
	LogAll           []string          `json:"log_all"`
	Branches         []string          `json:"branches"`
	Tags             []string          `json:"tags"`
	Remotes          []string          `json:"remotes"`
	Refs             []string          `json:"refs"`
	Config           []string          `json:"config"`
	ObjectsStored    []string          `json:"objects_stored"`
	ObjectsReachable []string          `json:"objects_reachable"`
	Status           []string          `json:"status"`
	HeadFiles        []string          `json:"head_files"`
	Env              map[string]string `json:"env"`
	SecretsInFiles   [][]string        `json:"secrets_in_files"`
	AgentWritable    bool              `json:"agent_writable"`
	TaskWritable     bool              `json:"task_writable"`
	OutWritable      bool              `json:"out_writable"`
	AgentFiles       []string          `json:"agent_files"`
	Direct           map[string]string `json:"direct"`
	Interfaces       []string          `json:"interfaces"`
	GitHubHTTPS      []any             `json:"github_https"`
	GitHubAPIHTTP    []any             `json:"github_api_http"`
	GitHubContent    []any             `json:"githubusercontent"`
	GitLsRemote      []any             `json:"git_ls_remote"`
	OtherHost        []any             `json:"other_host"`
	ModelDirect      []any             `json:"model_direct"`
	ModelViaProxy    []any             `json:"model_via_proxy"`
}

// setup returns a runner of the probe harness against a fake model API,
// the model and the real key.
func setup(t *testing.T) (*agent.SandboxRunner, *fakeModel, string) {
	t.Helper()
	eng := testenv.Docker(t)
	wrapperBinary, err := os.ReadFile(testenv.Wrapper(t))
	if err != nil {
		t.Fatal(err)
	}
	model := &fakeModel{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	b := make([]byte, 16)
	rand.Read(b)
	key := "sk-real-" + hex.EncodeToString(b)
	keyFile := filepath.Join(t.TempDir(), "anthropic.key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Abs("testdata/probe")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.Parse([]byte(`
model_apis:
  fake: {url: "` + srv.URL + `", key_file: "` + keyFile + `", header: x-api-key}
harnesses:
  probe: {preset: command, command: ["/agent/probe.py"], files: "` + files + `", model_api: fake, egress: [github.com, "*.githubusercontent.com"]}
agents: {timeout: 3m, memory: 1GiB, cpus: 1, pids: 256}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.NewSandboxRunner(eng, egressproxy.New("", nil), cfg, wrapperBinary, agent.WithProgress(os.Stderr))
	if err != nil {
		t.Fatal(err)
	}
	return r, model, key
}

func baseTree(t *testing.T) *tree.Tree {
	t.Helper()
	tree, err := tree.New([]tree.File{
		{Path: "greet.py", Mode: 0o644, Data: []byte("def greet(name):\n    return 'hi ' + name\n")},
		{Path: "obsolete.txt", Mode: 0o644, Data: []byte("old\n")},
		{Path: "tool.sh", Mode: 0o644, Data: []byte("echo tool\n")},
		{Path: ".gitignore", Mode: 0o644, Data: []byte("*.txt\n")},
		{Path: "pkg/__init__.py", Mode: 0o644, Data: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestSandboxContract runs the scripted probe as a writer and as an
// implementer and checks what it found inside against the contract: the
// workspace is the base as one commit and nothing more, no credential is
// anywhere, a direct connection fails, GitHub through the proxy is
// refused, and the model API through the proxy answers while the fake
// model API received the real key the sandbox never held.
func TestSandboxContract(t *testing.T) {
	r, model, key := setup(t)
	base := baseTree(t)
	for _, role := range []agent.Role{agent.RoleWriter, agent.RoleImplementer} {
		t.Run(string(role), func(t *testing.T) {
			began := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			task := agent.Task{Role: role, Repo: "octo/greet", Issue: 7, Title: "Add a greeting", Body: "hello() returns 'hello'.",
				BaseSHA: "0123456789abcdef0123456789abcdef01234567", Round: 2, Feedback: "1/3 hidden tests passed; failing: tests/test_greet.py::test_hello"}
			res, err := r.Run(ctx, agent.Request{Task: task, Harness: "probe", Base: base})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s run: %s (test %s)", role, res.Duration.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
			if res.ExitCode != 0 || res.TimedOut {
				t.Fatalf("probe exit %d timed out %v\nstdout %s\nstderr %s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
			}
			var rep probeReport
			if err := json.Unmarshal(res.Summary, &rep); err != nil {
				t.Fatalf("RESULT.md: %v\n%s", err, res.Summary)
			}
			checkContract(t, rep, res, key)
			for _, b := range [][]byte{res.Stdout, res.Stderr, res.Summary, res.Patch} {
				if strings.Contains(string(b), key) {
					t.Errorf("the real key is in what the sandbox handed back")
				}
			}
			if string(res.Stdout) != "probe done\n" || string(res.Stderr) != "to stderr\n" {
				t.Errorf("stdout %q, stderr %q", res.Stdout, res.Stderr)
			}
			if !res.EgressReachesGitHub {
				t.Error("the harness lists github.com: EgressReachesGitHub must be set")
			}
			checkEgress(t, res.Egress, model)
			if role == agent.RoleWriter {
				checkWriter(t, res)
			} else {
				checkImplementer(t, res)
			}
		})
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.keys) != 4 {
		t.Errorf("the fake model API got %d requests, want 2 per run", len(model.keys))
	}
	for _, k := range model.keys {
		if k != key+"|" {
			t.Errorf("the fake model API got key|authorization %q, want the real key and nothing else", k)
		}
	}
}

func checkContract(t *testing.T, rep probeReport, res agent.Result, key string) {
	t.Helper()
	if len(rep.LogAll) != 1 || !strings.HasPrefix(rep.LogAll[0], res.BaseCommit+" ") || len(res.BaseCommit) != 40 {
		t.Errorf("git log --all = %q, want the one base commit %s", rep.LogAll, res.BaseCommit)
	}
	if !slices.Equal(rep.Branches, []string{"* main"}) || len(rep.Tags) != 0 || len(rep.Remotes) != 0 || !slices.Equal(rep.Refs, []string{"refs/heads/main"}) {
		t.Errorf("branches %q, tags %q, remotes %q, refs %q: want main only", rep.Branches, rep.Tags, rep.Remotes, rep.Refs)
	}
	for _, c := range rep.Config {
		if strings.HasPrefix(c, "remote.") || strings.Contains(c, "fetch") || strings.HasPrefix(c, "url.") {
			t.Errorf("git config %q", c)
		}
	}
	if !slices.Equal(rep.ObjectsStored, rep.ObjectsReachable) || len(rep.ObjectsStored) == 0 {
		t.Errorf("objects stored %d, reachable from the base %d: want the same", len(rep.ObjectsStored), len(rep.ObjectsReachable))
	}
	if len(rep.Status) != 0 {
		t.Errorf("git status = %q: the workspace is not the commit", rep.Status)
	}
	if want := []string{".gitignore", "greet.py", "obsolete.txt", "pkg/__init__.py", "tool.sh"}; !slices.Equal(rep.HeadFiles, want) {
		t.Errorf("the commit holds %q, want %q (ignored files too)", rep.HeadFiles, want)
	}
	if rep.UID < 100000 || rep.Home != "/tmp" || rep.Cwd != "/workspace" {
		t.Errorf("uid %d, HOME %q, cwd %q", rep.UID, rep.Home, rep.Cwd)
	}
	if rep.AgentWritable || rep.TaskWritable || !rep.OutWritable || !slices.Contains(rep.AgentFiles, "probe.py") {
		t.Errorf("/agent writable %v (files %q), /task writable %v, /out writable %v", rep.AgentWritable, rep.AgentFiles, rep.TaskWritable, rep.OutWritable)
	}
	if rep.Task["role"] != string(res.Summary[:0])+rep.Task["role"].(string) || rep.Task["repo"] != "octo/greet" || rep.Task["issue"] != 7.0 ||
		rep.Task["round"] != 2.0 || rep.Task["base_sha"] != "0123456789abcdef0123456789abcdef01234567" || !strings.Contains(rep.Task["feedback"].(string), "test_hello") || !rep.TaskMDHasTitle {
		t.Errorf("task.json = %v, TASK.md has the title: %v", rep.Task, rep.TaskMDHasTitle)
	}
	for k, v := range rep.Env {
		if strings.Contains(v, key) || strings.Contains(v, "sk-real-") {
			t.Errorf("environment %s holds the real key", k)
		}
		ku := strings.ToUpper(k)
		if (strings.Contains(ku, "TOKEN") || strings.Contains(ku, "SECRET") || strings.Contains(ku, "PASSWORD") || strings.Contains(ku, "CREDENTIAL") ||
			strings.Contains(ku, "KEY")) && k != "ANTHROPIC_API_KEY" {
			t.Errorf("environment variable %s=%q", k, v)
		}
	}
	if rep.Env["ANTHROPIC_API_KEY"] == "" || rep.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:3128/model/fake" ||
		rep.Env["HTTPS_PROXY"] != "http://127.0.0.1:3128" || rep.Env["HTTP_PROXY"] != "http://127.0.0.1:3128" {
		t.Errorf("environment %v", rep.Env)
	}
	if len(rep.SecretsInFiles) != 0 {
		t.Errorf("credentials in files: %q", rep.SecretsInFiles)
	}
	for target, got := range rep.Direct {
		if !strings.HasPrefix(got, "refused") {
			t.Errorf("direct connection to %s: %s", target, got)
		}
	}
	if !slices.Equal(rep.Interfaces, []string{"lo"}) {
		t.Errorf("network interfaces %q, want lo only", rep.Interfaces)
	}
	for name, got := range map[string][]any{"https://github.com/": rep.GitHubHTTPS, "http://api.github.com/": rep.GitHubAPIHTTP,
		"https://raw.githubusercontent.com/": rep.GitHubContent, "http://example.com/": rep.OtherHost} {
		if got[0] == 200.0 || !strings.Contains(got[1].(string), "403") && got[0] != 403.0 {
			t.Errorf("%s through the proxy: %v, want refused (403)", name, got)
		}
	}
	if rep.GitLsRemote[0] == 0.0 {
		t.Errorf("git ls-remote github.com succeeded: %v", rep.GitLsRemote)
	}
	for name, got := range map[string][]any{"through the relay": rep.ModelDirect, "as a proxy request": rep.ModelViaProxy} {
		if got[0] != 200.0 || !strings.Contains(got[1].(string), "hello from the fake model") || !strings.Contains(got[1].(string), `"path":"/v1/messages"`) {
			t.Errorf("model API %s: %v", name, got)
		}
	}
}

func checkEgress(t *testing.T, recs []agent.EgressRecord, model *fakeModel) {
	t.Helper()
	var modelOK, github, other int
	for _, e := range recs {
		switch {
		case e.Allowed && e.Path == "/v1/messages" && e.Method == "POST":
			modelOK++
			if e.BytesIn == 0 || e.BytesOut == 0 || !strings.Contains(string(e.Body), "hello from the sandbox") || e.Status != 200 {
				t.Errorf("model record %+v", e)
			}
		case !e.Allowed && e.Refused == "github":
			github++
		case !e.Allowed && strings.HasPrefix(e.Host, "example.com"):
			other++
		}
	}
	if modelOK != 2 || github < 4 || other != 1 {
		t.Errorf("egress log: %d model requests, %d refused for GitHub, %d other refused; want 2, at least 4, 1:\n%+v", modelOK, github, other, recs)
	}
}

func checkWriter(t *testing.T, res agent.Result) {
	t.Helper()
	if len(res.Tests) != 1 || res.Tests[0].Path != "tests/test_greet.py" || !strings.Contains(string(res.Tests[0].Data), "def test_hello") {
		t.Errorf("tests = %+v", res.Tests)
	}
	if got := res.Criteria["says hello"]; !slices.Equal(got, []string{"tests/test_greet.py::test_hello"}) {
		t.Errorf("criteria = %v", res.Criteria)
	}
	if len(res.Changes) != 0 || len(res.Patch) != 0 {
		t.Errorf("a writer's run has changes: %+v", res.Changes)
	}
}

func checkImplementer(t *testing.T, res agent.Result) {
	t.Helper()
	var got []string
	for _, c := range res.Changes {
		got = append(got, c.Path+map[bool]string{true: " deleted"}[c.Deleted]+map[bool]string{true: " exec"}[c.Executable]+map[bool]string{true: " link"}[c.Symlink])
	}
	want := []string{"alias.py link", "greet.py", "new_module.py", "obsolete.txt deleted", "tool.sh exec"}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	for _, s := range []string{"diff --git a/greet.py b/greet.py", "+def hello():", "deleted file mode 100644", "new file mode 120000", "old mode 100644\nnew mode 100755"} {
		if !strings.Contains(string(res.Patch), s) {
			t.Errorf("patch lacks %q:\n%s", s, res.Patch)
		}
	}
	if strings.Contains(string(res.Patch), ".git/") {
		t.Errorf("the patch holds .git:\n%s", res.Patch)
	}
}

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeKey(t *testing.T, key string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseConfig(t *testing.T) {
	key := writeKey(t, "sk-test")
	files := t.TempDir()
	doc := `
listen: ":8080"
model_apis:
  anthropic: {url: https://api.anthropic.com, key_file: ` + key + `, header: x-api-key, vendor: anthropic}
  openai:    {url: https://api.openai.com,    key_file: ` + key + `, header: authorization-bearer}
harnesses:
  claude-code: {preset: claude-code, model_api: anthropic}
  codex:       {preset: codex, model_api: openai}
  our-writer:  {preset: command, command: ["/agent/run.sh"], files: ` + files + `, model_api: anthropic, egress: [registry.npmjs.org, "*.example.com:8443"]}
agents: {timeout: 20m, memory: 3GiB, cpus: 1.5, pids: 600, independence: refuse}
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits != (Limits{Timeout: 20 * time.Minute, Memory: 3 << 30, CPUs: 1.5, Pids: 600}) || c.Independence != IndependenceRefuse {
		t.Errorf("limits %+v, independence %q", c.Limits, c.Independence)
	}
	h, err := c.Harness("our-writer")
	if err != nil || h.Preset != PresetCommand || h.Files != files || len(h.Egress) != 2 || h.ModelAPI != "anthropic" {
		t.Errorf("our-writer = %+v, %v", h, err)
	}
	if k, err := c.ModelAPIs["openai"].Key(); err != nil || k != "sk-test" {
		t.Errorf("key = %q, %v", k, err)
	}
	if _, err := c.Harness("gpt"); err == nil || !strings.Contains(err.Error(), "claude-code, codex, our-writer") {
		t.Errorf("unknown harness: %v, want the list of names", err)
	}
	if c.Independent("claude-code", "claude-code") || !c.Independent("claude-code", "codex") {
		t.Error("independence of harnesses")
	}
	d, _ := Parse([]byte(""))
	if d.Limits.Timeout != DefaultTimeout || d.Independence != IndependenceWarn {
		t.Errorf("defaults: %+v", d)
	}
}

func TestConfigErrors(t *testing.T) {
	doc := `
model_apis:
  a: {url: "ftp://x", key_file: /nonexistent/key, header: basic}
  gh: {url: "https://api.github.com", key_file: /nonexistent/key, header: x-api-key}
harnesses:
  h1: {preset: command}
  h2: {preset: claude-code}
  h3: {preset: shell, model_api: nope, egress: ["a b"], sandbox: firecracker}
agents: {timeout: forever, memory: lots, cpus: 0, pids: 1, independence: maybe}
`
	_, err := Parse([]byte(doc))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, want := range []string{
		`model_apis.a.url "ftp://x"`, `model_apis.a.header "basic"`, `model_apis.a.key_file`,
		`model_apis.gh.url "https://api.github.com": a GitHub host`,
		`harnesses.h1.command`, `harnesses.h2.model_api: preset claude-code needs a model API`,
		`harnesses.h3.preset "shell"`, `harnesses.h3.model_api "nope": not a model API; want one of a, gh`,
		`harnesses.h3.egress "a b"`, `harnesses.h3.sandbox "firecracker": want docker (the default) or e2b`, `agents.timeout "forever"`, `agents.memory "lots"`, `agents.cpus 0`,
		`agents.pids 1`, `agents.independence "maybe"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestGitHubHosts(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"github.com", true}, {"API.GitHub.com", true}, {"raw.githubusercontent.com", true},
		{"github.corp.example", true}, {"api.github.corp.example", true},
		{"notgithub.com", false}, {"github.com.evil", false}, {"pypi.org", false},
	} {
		if got := IsGitHubHost(tt.host, "github.corp.example"); got != tt.want {
			t.Errorf("IsGitHubHost(%s) = %v", tt.host, got)
		}
	}
	for _, tt := range []struct {
		egress []string
		want   bool
	}{
		{[]string{"registry.npmjs.org"}, false},
		{[]string{"github.com"}, true},
		{[]string{"*.githubusercontent.com"}, true},
		{[]string{"*.com"}, true},
		{[]string{"codeload.github.com:443"}, true},
		{[]string{"github.corp.example"}, true},
		{[]string{"*.corp.example"}, true},
	} {
		if got := (Harness{Egress: tt.egress}).EgressReachesGitHub("github.corp.example"); got != tt.want {
			t.Errorf("EgressReachesGitHub(%v) = %v", tt.egress, got)
		}
	}
}

func TestConfigUnknownKeys(t *testing.T) {
	key := writeKey(t, "k")
	_, err := Parse([]byte(`
listen: ":8080"
model_apis:
  a: {url: "https://api.example", key_file: ` + key + `, header: x-api-key, keyfile: /x}
harnesses:
  h: {preset: command, command: [/agent/run], modelapi: a}
agents: {timeout: 1m, memroy: 1g}
`))
	for _, want := range []string{
		"line 4: unknown key model_apis.a.keyfile; the valid keys here are url, key_file, header, vendor",
		"line 6: unknown key harnesses.h.modelapi",
		"line 7: unknown key agents.memroy",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

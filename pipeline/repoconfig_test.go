package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRepoConfig(t *testing.T) {
	c, err := ParseRepoConfig([]byte(`
label: tests-first
test_paths: ["tests/**", "spec_*.py"]
grading:
  timeout: 5m
  memory: 2g
  cpus: 1.5
  pids: 512
  network: mirror
environment:
  python: "3.13"
approval:
  policy: enforce
  max_rejections: 2
  fast_approval: 90s
writer: our-writer
implementer: codex
agents:
  max_rounds: 2
withdrawn_check: neutral
keep_tests: follow_up
regressions:
  enabled: false
  paths: [tests/unit/, test_top.py]
  budget: 90s
`))
	if err != nil {
		t.Fatal(err)
	}
	want := RepoConfig{Label: "tests-first", TestPaths: []string{"tests/**", "spec_*.py"}, Timeout: 5 * time.Minute, Memory: 2 << 30,
		CPUs: 1.5, Pids: 512, Policy: PolicyEnforce, MaxRejections: 2, FastApproval: 90 * time.Second,
		Python: "3.13", Network: "mirror", Writer: "our-writer", Implementer: "codex", MaxRounds: 2, UIDSplit: UIDSplitAllowed, Split: SplitOff, WithdrawnCheck: "neutral",
		KeepTests: KeepFollowUp, Regressions: RegressionsConfig{Enabled: false, Paths: []string{"tests/unit/", "test_top.py"}, Budget: 90 * time.Second}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	for _, empty := range []string{"", "# nothing yet\n"} {
		c, err := ParseRepoConfig([]byte(empty))
		if err != nil || !cmp.Equal(c, DefaultRepoConfig()) {
			t.Errorf("empty file %q: %+v, %v", empty, c, err)
		}
	}
}

func TestParseRepoConfigErrors(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"lable: x\n", []string{`unknown key "lable"; the valid keys here are label`}},
		{"withdrawn_check: success\n", []string{`withdrawn_check "success": want action_required (the default: a withdrawn ticket's check stays blocking) or neutral`}},
		{"keep_tests: yes\n", []string{`keep_tests "yes": want off (the default: the hidden tests stay hidden), commit (once a pull request's grade passes`, "or follow_up"}},
		{"keep_tests: Commit\n", []string{`keep_tests "Commit": want off`}},
		{"grading:\n  timeout: forever\n", []string{`grading.timeout "forever": want a duration from 1s to 30m0s`}},
		{"grading:\n  timeout: 2h\n  memory: 10t\n", []string{"grading.timeout", `grading.memory "10t"`}},
		{"grading:\n  cpus: 0\n  pids: 3\n", []string{"grading.cpus 0", "grading.pids 3"}},
		{"approval:\n  policy: anyone\n  max_rejections: 0\n", []string{`approval.policy "anyone": want single or enforce`, "approval.max_rejections 0"}},
		{"approval:\n  max_rejections: 21\n  fast_approval: soon\n", []string{"approval.max_rejections 21: want 1 to 20", `approval.fast_approval "soon": want a duration up to 24h`}},
		{"approval:\n  fast_approval: -1m\n", []string{`approval.fast_approval "-1m"`}},
		{"approval:\n  polcy: enforce\n", []string{`unknown key "approval.polcy"; the valid keys here are approval.policy`}},
		{"label: ''\n", []string{`label "": want a label name`}},
		{"writer: 'Claude Code'\nagents:\n  max_rounds: 0\n", []string{`writer "Claude Code": want none or the name`, "agents.max_rounds 0: want 1 to 10"}},
		{"test_paths: ['/etc/*', '[']\n", []string{`test_paths "/etc/*"`, `test_paths "["`}},
		{"- just\n- a list\n", []string{"want a mapping of settings"}},
		{"grading:\n  network: host\n", []string{`grading.network "host": want none (the default) or mirror`}},
		{"regressions:\n  enabled: sometimes\n", []string{"regressions.enabled"}},
		{"regressions:\n  paths: [/etc, ../up, --co, tests/../..]\n  budget: 5s\n", []string{`regressions.paths "/etc"`, `regressions.paths "../up"`, `regressions.paths "--co"`,
			`regressions.paths "tests/../.."`, `regressions.budget "5s": want a duration from 10s to 30m0s`}},
		{"regressions:\n  budget: 1h\n", []string{`regressions.budget "1h"`}},
		{"environment:\n  python: \"3.9\"\n", []string{`environment.python "3.9": want one of 3.11, 3.13`}},
	}
	for _, tt := range tests {
		_, err := ParseRepoConfig([]byte(tt.in))
		if err == nil {
			t.Errorf("%q: no error", tt.in)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tt.in, err, w)
			}
		}
		if !strings.HasPrefix(err.Error(), RepoConfigPath) {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

func FuzzParseRepoConfig(f *testing.F) {
	f.Add([]byte("label: x\ngrading:\n  timeout: 1m\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseRepoConfig(data)
		if err == nil && (c.Label == "" || c.Timeout <= 0 || c.MaxRejections < 1) {
			t.Fatalf("accepted an invalid config %+v from %q", c, data)
		}
	})
}

// TestRepoConfigUnknownKeys: a misspelt key is named with the keys valid
// where it stands, never with a Go type's name.
func TestRepoConfigUnknownKeys(t *testing.T) {
	_, err := ParseRepoConfig([]byte("lable: x\ngrading:\n  timout: 5m\n"))
	if err == nil {
		t.Fatal("no error for unknown keys")
	}
	for _, want := range []string{`unknown key "lable"; the valid keys here are label, test_paths, grading, environment, approval`,
		`unknown key "grading.timout"; the valid keys here are grading.timeout, grading.memory, grading.cpus, grading.pids, grading.network`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "repoConfigFile") || strings.Contains(err.Error(), "pipeline.") {
		t.Errorf("error names a Go type: %v", err)
	}
	if c := ConfigErrorComment(err); !strings.Contains(c, "then comment `/testfirst status` on this issue or edit it") {
		t.Errorf("comment does not say the config is read again:\n%s", c)
	}
}

func TestRepoConfigHarnesses(t *testing.T) {
	c := DefaultRepoConfig()
	if c.Writer != AgentNone || c.Implementer != AgentNone || c.MaxRounds != 3 {
		t.Errorf("defaults: writer %q, implementer %q, max_rounds %d; want none, none, 3", c.Writer, c.Implementer, c.MaxRounds)
	}
	if err := c.CheckHarnesses(nil); err != nil {
		t.Errorf("none of either on a service without harnesses: %v", err)
	}
	c.Writer, c.Implementer = "claude-code", "codx"
	err := c.CheckHarnesses([]string{"claude-code", "codex"})
	if err == nil || !strings.Contains(err.Error(), `implementer "codx": no such harness; want none or one of the service's harnesses: claude-code, codex`) ||
		strings.Contains(err.Error(), "writer") {
		t.Errorf("an unknown implementer: %v", err)
	}
	if err := c.CheckHarnesses(nil); err == nil || !strings.Contains(err.Error(), `writer "claude-code": no such harness; want none (the service configures no harness)`) {
		t.Errorf("a writer on a service without harnesses: %v", err)
	}
}

// TestExampleConfigIsTheDefaults: docs/testfirst.example.yml, which the
// README offers to copy, parses and says exactly the defaults.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "testfirst.example.yml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseRepoConfig(data)
	if err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	if want := DefaultRepoConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("the example says\n%+v\nthe defaults are\n%+v", got, want)
	}
}

// TestParseRepoConfigKeepTests: keep_tests is off unless a repository says
// commit or follow_up; YAML's own off and on are read as the words they
// are, never as booleans.
func TestParseRepoConfigKeepTests(t *testing.T) {
	for in, want := range map[string]string{"": KeepOff, "keep_tests: off\n": KeepOff, "keep_tests: commit\n": KeepCommit,
		"keep_tests: follow_up\n": KeepFollowUp} {
		c, err := ParseRepoConfig([]byte(in))
		if err != nil || c.KeepTests != want {
			t.Errorf("%q: keep_tests %q, %v; want %q", in, c.KeepTests, err, want)
		}
	}
	for _, in := range []string{"keep_tests: on\n", "keep_tests: true\n", "keep_tests: followup\n"} {
		if _, err := ParseRepoConfig([]byte(in)); err == nil || !strings.Contains(err.Error(), "keep_tests") {
			t.Errorf("%q: %v; want an error naming keep_tests", in, err)
		}
	}
}

package agent

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestPresetCommand(t *testing.T) {
	tests := []struct {
		cli      CLI
		modelAPI string
		program  string
		// has are arguments the command line must hold.
		has []string
	}{
		{ClaudeCode, "anthropic", "claude", []string{"-p", "--dangerously-skip-permissions", "--output-format", "stream-json", "/out"}},
		{Codex, "openai", "codex", []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "--json", "/workspace",
			`model_provider="testfirst"`,
			`model_providers.testfirst={name="testfirst", base_url="http://127.0.0.1:3128/model/openai/v1", env_key="OPENAI_API_KEY", wire_api="responses"}`}},
	}
	for _, tt := range tests {
		for _, role := range []Role{RoleWriter, RoleImplementer} {
			argv := tt.cli.Command(role, tt.modelAPI)
			if argv[0] != tt.program {
				t.Errorf("%s: command %q, want %s", tt.cli.Name, argv, tt.program)
			}
			if !slices.Contains(argv, Prompt(role)) {
				t.Errorf("%s %s: command %q lacks the role's prompt", tt.cli.Name, role, argv)
			}
			for _, a := range tt.has {
				if !slices.Contains(argv, a) {
					t.Errorf("%s: command %q lacks %s", tt.cli.Name, argv, a)
				}
			}
		}
	}
	for _, e := range []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"} {
		if !slices.Contains(ClaudeCode.Env(), e) {
			t.Errorf("claude-code's environment %q lacks %s", ClaudeCode.Env(), e)
		}
	}
	for _, e := range append(ClaudeCode.Env(), Codex.Env()...) {
		if strings.Contains(strings.ToUpper(e), "KEY") || strings.Contains(strings.ToLower(e), "github") {
			t.Errorf("a CLI's own environment names a key or GitHub: %s", e)
		}
	}
}

func TestCLIFor(t *testing.T) {
	for _, name := range []string{PresetClaudeCode, PresetCodex} {
		if c, ok := CLIFor(name); !ok || c.Name != name {
			t.Errorf("CLIFor(%q) = %q, %v", name, c.Name, ok)
		}
	}
	if _, ok := CLIFor(PresetCommand); ok {
		t.Error("the command preset has no CLI, yet CLIFor found one")
	}
}

func TestPresetPins(t *testing.T) {
	for _, p := range []CLI{ClaudeCode, Codex} {
		for _, tb := range p.Tarballs {
			name, version, ok := strings.Cut(strings.TrimPrefix(tb.Spec, "@"), "@")
			if !ok || name == "" || version == "" || strings.ContainsAny(version, "^~*<> ") || version == "latest" {
				t.Errorf("%s: %q is not pinned to one version", p.Name, tb.Spec)
			}
			sum, ok := strings.CutPrefix(tb.Integrity, "sha512-")
			if b, err := base64.StdEncoding.DecodeString(sum); !ok || err != nil || len(b) != 64 {
				t.Errorf("%s: %s integrity %q is not a sha512", p.Name, tb.Spec, tb.Integrity)
			}
		}
	}
}

func TestPresetImageRef(t *testing.T) {
	ref := ClaudeCode.ImageRef("sha256:base")
	if !strings.HasPrefix(ref, "testfirst-agent-claude-code:") || ref != ClaudeCode.ImageRef("sha256:base") {
		t.Errorf("ref %q: want testfirst-agent-claude-code:<hash>, the same for the same recipe", ref)
	}
	if ClaudeCode.ImageRef("sha256:other") == ref {
		t.Error("a new Debian base kept the image")
	}
	repinned := ClaudeCode
	repinned.Tarballs = []NPMTarball{{Spec: "@anthropic-ai/claude-code@9.9.9", Integrity: ClaudeCode.Tarballs[0].Integrity}}
	if repinned.ImageRef("sha256:base") == ref {
		t.Error("a new pin kept the image")
	}
	for _, pkg := range []string{"nodejs", "npm", "git", "python3", "python3-pytest", "ca-certificates"} {
		if !slices.Contains(AgentBaseRecipe.Packages, pkg) {
			t.Errorf("the agent base lacks %s", pkg)
		}
	}
}

func TestPrompt(t *testing.T) {
	w, i := Prompt(RoleWriter), Prompt(RoleImplementer)
	for _, s := range []string{"/task/TASK.md", "/out/tests/", "/out/criteria.json", "/out/RESULT.md", "pytest"} {
		if !strings.Contains(w, s) {
			t.Errorf("the writer's prompt lacks %s", s)
		}
	}
	for _, s := range []string{"/task/TASK.md", "/workspace", "/out/RESULT.md", "feedback"} {
		if !strings.Contains(i, s) {
			t.Errorf("the implementer's prompt lacks %s", s)
		}
	}
	if strings.Contains(i, "/out/tests") || strings.Contains(i, "criteria") {
		t.Error("the implementer is told about the writer's results")
	}
}

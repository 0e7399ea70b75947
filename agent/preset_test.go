package agent

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestPresetInvocation(t *testing.T) {
	tests := []struct {
		preset   Preset
		modelAPI string
		program  string
		env      []string
	}{
		{ClaudeCode, "anthropic", "claude", []string{
			"HOME=/tmp",
			"ANTHROPIC_BASE_URL=http://127.0.0.1:3128/model/anthropic",
			"ANTHROPIC_API_KEY=" + PlaceholderKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
			"NO_PROXY=127.0.0.1,localhost",
		}},
		{Codex, "openai", "codex", []string{
			"HOME=/tmp",
			"OPENAI_BASE_URL=http://127.0.0.1:3128/model/openai/v1",
			"OPENAI_API_KEY=" + PlaceholderKey,
			"NO_PROXY=127.0.0.1,localhost",
		}},
	}
	for _, tt := range tests {
		for _, role := range []Role{RoleWriter, RoleImplementer} {
			inv := tt.preset.Invocation(role, tt.modelAPI)
			if inv.Command[0] != tt.program {
				t.Errorf("%s: command %q, want %s", tt.preset.Name, inv.Command, tt.program)
			}
			if !slices.Contains(inv.Command, Prompt(role)) {
				t.Errorf("%s %s: command %q lacks the role's prompt", tt.preset.Name, role, inv.Command)
			}
			for _, e := range tt.env {
				if !slices.Contains(inv.Env, e) {
					t.Errorf("%s: env %q lacks %s", tt.preset.Name, inv.Env, e)
				}
			}
			for _, e := range inv.Env {
				if strings.Contains(strings.ToLower(e), "github") {
					t.Errorf("%s: env %s names GitHub", tt.preset.Name, e)
				}
			}
		}
	}
}

func TestPresetFor(t *testing.T) {
	for _, name := range []string{PresetClaudeCode, PresetCodex} {
		if p, ok := PresetFor(name); !ok || p.Name != name {
			t.Errorf("PresetFor(%q) = %q, %v", name, p.Name, ok)
		}
	}
	if _, ok := PresetFor(PresetCommand); ok {
		t.Error("the command preset has no CLI, yet PresetFor found one")
	}
}

func TestPresetPins(t *testing.T) {
	for _, p := range []Preset{ClaudeCode, Codex} {
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

func TestInstructions(t *testing.T) {
	w, i := Instructions(RoleWriter), Instructions(RoleImplementer)
	for _, s := range []string{"/out/tests/", "/out/criteria.json", "/out/reference.patch", "/out/RESULT.md", "pytest"} {
		if !strings.Contains(w, s) {
			t.Errorf("writer instructions lack %s", s)
		}
	}
	for _, s := range []string{"/workspace", "/out/RESULT.md", "feedback"} {
		if !strings.Contains(i, s) {
			t.Errorf("implementer instructions lack %s", s)
		}
	}
	if strings.Contains(i, "/out/tests") || strings.Contains(i, "reference.patch") {
		t.Error("the implementer is told about the writer's results")
	}
}

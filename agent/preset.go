package agent

import (
	"fmt"
	"strings"
)

// ProxyURL is where a sandbox reaches the egress proxy: the relay to its
// unix socket. The model API is below it, at /model/<name>.
const ProxyURL = "http://127.0.0.1:3128"

// PlaceholderKey is the API key a preset's CLI is given: CLIs refuse to
// start without one, and the real key never enters the sandbox. The
// egress proxy replaces whatever key a request to /model/<name> carries.
const PlaceholderKey = "testfirst-placeholder-the-proxy-adds-the-key"

// NPMTarball is one npm package tarball a preset's image installs, pinned
// by version and by the sha512 integrity the registry published for it.
type NPMTarball struct {
	// Spec is name@version, as npm pack takes it.
	Spec string `json:"spec"`
	// Integrity is the tarball's "sha512-<base64>", as the registry's
	// dist.integrity: a tarball that does not match fails the build.
	Integrity string `json:"integrity"`
}

// Preset is a harness preset that runs a real agent command line: the npm
// package its image installs and the headless command it runs.
type Preset struct {
	// Name is the preset's name in a harness's preset key.
	Name string
	// Tarballs are fetched and checked at build time; the first is the
	// CLI installed globally, the others are what it needs from the
	// registry (a platform binary), installed from the same check.
	Tarballs []NPMTarball
	// OmitOptional skips the CLI's optional dependencies (image libraries
	// an agent has no use for).
	OmitOptional bool
	// Version is the command that proves the installed CLI starts.
	Version []string
	// command is the headless command line for a prompt and the model
	// API's proxy URL.
	command func(prompt, modelURL string) []string
	// env is the CLI's environment for the model API's proxy URL.
	env func(modelURL string) []string
}

// Invocation is how a preset's CLI is started in an agent's sandbox.
type Invocation struct {
	// Command is the argv, run in /workspace.
	Command []string
	// Env is added to the sandbox's environment (HTTP_PROXY and its
	// kind): the model URL, the placeholder key, HOME, and the switches
	// that keep the CLI from calling home or updating itself.
	Env []string
}

// claudeCodeVersion is the pinned @anthropic-ai/claude-code. 2.1.112 is
// the last release that ships the CLI as JavaScript (cli.js) for Node.js
// 18, which is what Debian bookworm's nodejs is (18.20.4); later ones are
// a native binary, and from 2.1.198 ask for Node.js 22.
const claudeCodeVersion = "2.1.112"

// codexVersion is the pinned @openai/codex: a Node.js launcher (engines
// node >= 16) and, from the same package name, the platform's binary.
const codexVersion = "0.171.0"

// ClaudeCode is the claude-code preset: Anthropic's CLI in print mode,
// every tool allowed (the sandbox is the boundary), its transcript as
// stream-json on stdout.
var ClaudeCode = Preset{
	Name: PresetClaudeCode,
	Tarballs: []NPMTarball{{
		Spec:      "@anthropic-ai/claude-code@" + claudeCodeVersion,
		Integrity: "sha512-9FUgJ0EOvILyhIqxFKNVliebiUjL68dwpEW3eGSSe0vkVDJ1c5qMDNWc22gW3zkD7zRAqtfQPSGv0t4vMM2DPA==",
	}},
	OmitOptional: true,
	Version:      []string{"claude", "--version"},
	command: func(prompt, _ string) []string {
		return []string{"claude", "-p", prompt,
			"--output-format", "stream-json", "--verbose",
			"--dangerously-skip-permissions",
			"--no-session-persistence",
			"--add-dir", "/out", "/task"}
	},
	env: func(modelURL string) []string {
		return []string{
			"ANTHROPIC_BASE_URL=" + modelURL,
			"ANTHROPIC_API_KEY=" + PlaceholderKey,
			// --dangerously-skip-permissions refuses root unless told it
			// runs in a sandbox, which it does.
			"IS_SANDBOX=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1",
		}
	},
}

// Codex is the codex preset: OpenAI's CLI as codex exec, its own sandbox
// and approvals off (the agent sandbox is the boundary), JSON events on
// stdout.
var Codex = Preset{
	Name: PresetCodex,
	Tarballs: []NPMTarball{
		{Spec: "@openai/codex@" + codexVersion, Integrity: "sha512-1IOFzL2Xg86tLdw6kDo3GoKbkQENgQi7TI6rlEvN132R7ngSw7SNOIQoTcnKzSZZ8kf9N9GynCweSoaFbqk2Eg=="},
		{Spec: "@openai/codex@" + codexVersion + "-linux-x64", Integrity: "sha512-l66NZkQgdk2C3pbcfULDz42yEUB581MVA6I+Y43Wp4OIqEy73HCdmZ0GTjeAHY2ycuH4N00d9VsLrwT1jxshTw=="},
	},
	Version: []string{"codex", "--version"},
	command: func(prompt, modelURL string) []string {
		// codex's built-in openai provider goes to api.openai.com
		// whatever OPENAI_BASE_URL says: a provider of its own names the
		// proxy's model URL (codex appends /responses to base_url, which
		// for OpenAI's API ends in /v1).
		provider := fmt.Sprintf(`model_providers.testfirst={name="testfirst", base_url=%q, env_key="OPENAI_API_KEY", wire_api="responses"}`, modelURL+"/v1")
		return []string{"codex", "exec",
			"--dangerously-bypass-approvals-and-sandbox",
			"--skip-git-repo-check",
			"--ephemeral",
			"--json",
			"--color", "never",
			"-C", "/workspace",
			"--add-dir", "/out",
			"-c", `model_provider="testfirst"`,
			"-c", provider,
			"-c", "check_for_update_on_startup=false",
			"-c", "analytics.enabled=false",
			prompt}
	},
	env: func(modelURL string) []string {
		return []string{
			"OPENAI_BASE_URL=" + modelURL + "/v1",
			"OPENAI_API_KEY=" + PlaceholderKey,
		}
	},
}

// PresetFor returns the preset named name; ok is false for the command
// preset and any unknown name.
func PresetFor(name string) (p Preset, ok bool) {
	switch name {
	case PresetClaudeCode:
		return ClaudeCode, true
	case PresetCodex:
		return Codex, true
	}
	return Preset{}, false
}

// ModelURL is where a sandbox reaches the model API named name through
// the egress proxy.
func ModelURL(name string) string { return ProxyURL + "/model/" + name }

// Invocation returns the command line and environment that run the CLI
// headless on the task of role, against the model API named modelAPI.
func (p Preset) Invocation(role Role, modelAPI string) Invocation {
	env := append([]string{
		"HOME=/tmp",
		// The CLI calls the model URL on the relay itself; HTTP_PROXY,
		// which the sandbox sets for everything else, must not apply.
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
	}, p.env(ModelURL(modelAPI))...)
	return Invocation{Command: p.command(Prompt(role), ModelURL(modelAPI)), Env: env}
}

// Prompt is the prompt a preset's CLI is started with: the task itself is
// in /task/TASK.md, which holds Instructions.
func Prompt(role Role) string {
	return fmt.Sprintf("You are the %s agent of testfirst. Read /task/TASK.md and /task/task.json, then do exactly what TASK.md asks. "+
		"Nobody will answer questions: decide, do the work, and finish by writing /out/RESULT.md.", role)
}

// Instructions are what a preset's CLI is told, in TASK.md below the
// issue, about the role it plays: where its results go and what is
// graded.
func Instructions(role Role) string {
	var b strings.Builder
	b.WriteString("## What you must deliver\n\n")
	switch role {
	case RoleWriter:
		b.WriteString(`You write the hidden acceptance tests for the issue above. An implementer who never sees them will
change the code until they pass; a grader runs them with pytest against the implementer's tree.

- /workspace holds the repository at the base commit. Read it; do not change it: your edits there are thrown away.
- Write the tests as pytest files under /out/tests/ (for example /out/tests/test_issue.py). Import the code
  as the repository's own tests do. Each test must fail on the base as it is and pass once the issue is done.
- Write /out/criteria.json: a JSON object that maps each acceptance criterion of the issue, in a few words,
  to the ids of the tests that check it, e.g. {"parses empty input": ["tests/test_issue.py::test_empty"]}.
- Optionally write /out/reference.patch: a unified diff against the base (git diff format) that makes
  every test pass. It is checked against your tests and never shown to the implementer.
- Run your tests in /workspace (python3 -m pytest) to see them fail on the base.
- Finish with /out/RESULT.md: what you tested and why, in a few lines.
`)
	case RoleImplementer:
		b.WriteString(`You implement the issue above. Hidden acceptance tests, which you cannot see, decide whether you did.

- /workspace is a git repository at the base commit. Change the files there: testfirst takes the diff
  against the base (.git excluded) and opens the pull request itself. Do not commit, push or add remotes.
- If /task/task.json has feedback, it is the last grade: counts and the ids of hidden tests that failed.
- Write or update the repository's own tests as a careful engineer would, and run them (python3 -m pytest).
- Finish with /out/RESULT.md: what you changed and why, in a few lines.
`)
	}
	b.WriteString(`
You have no credentials, and the network is closed but for the model API and the package index through
the proxy in HTTP_PROXY. GitHub is not reachable.
`)
	return b.String()
}

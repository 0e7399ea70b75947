package agent

import (
	"fmt"
	"strings"
)

// ProxyURL is where a sandbox reaches the egress proxy: the relay to its
// unix socket. The model API is below it, at /model/<name>.
const ProxyURL = "http://127.0.0.1:3128"

// NPMTarball is one npm package tarball a preset's image installs, pinned
// by version and by the sha512 integrity the registry published for it.
type NPMTarball struct {
	// Spec is name@version, as npm pack takes it.
	Spec string `json:"spec"`
	// Integrity is the tarball's "sha512-<base64>", as the registry's
	// dist.integrity: a tarball that does not match fails the build.
	Integrity string `json:"integrity"`
	// Arch, when set, is the Node.js process.arch ("x64", "arm64") the
	// tarball is for: a build on another machine skips it.
	Arch string `json:"arch,omitempty"`
}

// CLI is the agent command line a harness preset runs: the npm package
// its image installs and the headless command it runs. Its Preset is how
// the SandboxRunner runs it.
type CLI struct {
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
	// env is the CLI's own environment, beside what every agent gets
	// (HOME=/tmp, the proxy, NO_PROXY for the relay, the model URL and a
	// placeholder key): the switches that keep it from calling home or
	// updating itself.
	env []string
}

// claudeCodeVersion is the pinned @anthropic-ai/claude-code. 2.1.112 is
// the last release that ships the CLI as JavaScript (cli.js) for Node.js
// 18, which is what Debian bookworm's nodejs is (18.20.4); later ones are
// a native binary, and from 2.1.198 ask for Node.js 22.
const claudeCodeVersion = "2.1.112"

// codexVersion is the pinned @openai/codex: a Node.js launcher (engines
// node >= 16) and, from the same package name, the platform's binary
// (linux-x64 or linux-arm64, whichever the engine runs).
const codexVersion = "0.171.0"

// ClaudeCode is the claude-code preset: Anthropic's CLI in print mode,
// every tool allowed (the sandbox is the boundary), its transcript as
// stream-json on stdout.
var ClaudeCode = CLI{
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
	env: []string{
		// --dangerously-skip-permissions refuses root unless told it runs
		// in a sandbox, which it does (the runner runs it as a fresh
		// unprivileged uid; a plain run may not).
		"IS_SANDBOX=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	},
}

// Codex is the codex preset: OpenAI's CLI as codex exec, its own sandbox
// and approvals off (the agent sandbox is the boundary), JSON events on
// stdout.
var Codex = CLI{
	Name: PresetCodex,
	Tarballs: []NPMTarball{
		{Spec: "@openai/codex@" + codexVersion, Integrity: "sha512-1IOFzL2Xg86tLdw6kDo3GoKbkQENgQi7TI6rlEvN132R7ngSw7SNOIQoTcnKzSZZ8kf9N9GynCweSoaFbqk2Eg=="},
		{Spec: "@openai/codex@" + codexVersion + "-linux-x64", Integrity: "sha512-l66NZkQgdk2C3pbcfULDz42yEUB581MVA6I+Y43Wp4OIqEy73HCdmZ0GTjeAHY2ycuH4N00d9VsLrwT1jxshTw==", Arch: "x64"},
		{Spec: "@openai/codex@" + codexVersion + "-linux-arm64", Integrity: "sha512-9z17t4bbUJ9UCIb49O4PoA+ki+45q3rd8nZ8PeH6sYnlKkBld/Xpo/OS3h3Ti954+foshX4o7k5TCU8N7zzqQA==", Arch: "arm64"},
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
	// codex's switches are on its command line (-c).
	env: nil,
}

// CLIFor returns the CLI of the preset named name; ok is false for the
// command preset and any unknown name.
func CLIFor(name string) (c CLI, ok bool) {
	switch name {
	case PresetClaudeCode:
		return ClaudeCode, true
	case PresetCodex:
		return Codex, true
	}
	return CLI{}, false
}

// ModelURL is where a sandbox reaches the model API named name through
// the egress proxy.
func ModelURL(name string) string { return ProxyURL + "/model/" + name }

// Command is the command line that runs the CLI headless on the task of
// role, against the model API named modelAPI.
func (c CLI) Command(role Role, modelAPI string) []string {
	return c.command(Prompt(role), ModelURL(modelAPI))
}

// Env is what the CLI's environment adds to every agent's.
func (c CLI) Env() []string { return append([]string(nil), c.env...) }

// Prompt is what a preset's CLI is started with: TASK.md holds the issue
// and what the role delivers; this says how to work, as nobody will
// answer.
func Prompt(role Role) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the %s agent of testfirst, running headless in a sandbox: nobody will answer questions, so decide and do the work. "+
		"Read /task/TASK.md and /task/task.json first and do exactly what TASK.md asks. ", role)
	switch role {
	case RoleWriter:
		b.WriteString("Read the code in /workspace but do not change it: only what you write to /out counts. " +
			"Write pytest tests under /out/tests/ that fail on the base as it is (run them against /workspace with python3 -m pytest to see that) and pass once the issue is done, " +
			"map each acceptance criterion to its test ids in /out/criteria.json, and finish with /out/RESULT.md.")
	case RoleImplementer:
		b.WriteString("Change the files in /workspace so the issue is done; do not commit, push or add remotes: testfirst takes the diff. " +
			"Hidden tests you cannot see grade it; if task.json has feedback, it names the hidden tests that failed last round. " +
			"Run the repository's own tests (python3 -m pytest), and finish with /out/RESULT.md.")
	}
	return b.String()
}

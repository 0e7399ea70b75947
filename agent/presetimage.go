package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
)

// AgentBaseRecipe is the Debian base of every preset's image: what an
// agent CLI and the work it does need (Node.js and npm for the CLI, git
// for /workspace, Python and pytest for the repository's tests).
var AgentBaseRecipe = sandbox.DebianRecipe{
	Name:     "testfirst-agent-base",
	Suite:    "bookworm",
	Variant:  "apt",
	Packages: []string{"nodejs", "npm", "git", "python3", "python3-pytest", "ca-certificates"},
}

// NPMRegistry is the host a preset image's build may reach through the
// egress proxy, and nothing else.
const NPMRegistry = "registry.npmjs.org:443"

// PresetImageName prefixes the name of a preset's image; the preset's
// name follows, and the tag is a hash of the recipe.
const PresetImageName = "testfirst-agent-"

// Paths of a preset image's build.
const (
	installScriptPath = "/opt/testfirst/npm-install.js"
	buildCAPath       = "/opt/testfirst/build-ca.pem"
)

// Labels of a preset image.
const (
	labelPreset   = "app.testfirst.preset"
	labelPackages = "app.testfirst.npm"
	labelVersion  = "app.testfirst.cli_version"
)

// presetBuildTimeout bounds one preset image's npm install.
const presetBuildTimeout = 10 * time.Minute

//go:embed preset_npm_install.js
var installScript []byte

// ImageEngine is what building a preset's image needs of the sandbox
// engine; sandbox/docker's Engine implements it. Each method fails only
// when the engine does.
type ImageEngine interface {
	// EnsureDebianImage returns the id of the recipe's image, building it
	// when missing.
	EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error)
	// FindImage returns an image's id and labels; found is false when the
	// engine does not have it.
	FindImage(ctx context.Context, ref string) (id string, labels map[string]string, found bool, err error)
	// Build runs a build and commits its container when Keep says so.
	Build(ctx context.Context, b sandbox.Build) (sandbox.Result, string, error)
}

// ImageBuild is how a preset's image is built.
type ImageBuild struct {
	// ProxySocket is the host path of an egress proxy's unix socket that
	// allows NPMRegistry only: the build sandbox's one way out.
	ProxySocket string
	// ExtraCA, when set, is PEM certificates npm trusts beside Debian's
	// for the registry (a TLS-intercepting proxy on the way to it). It is
	// used by the build only and removed before the image is committed.
	ExtraCA []byte
	// Progress receives the build's progress; nil discards it.
	Progress io.Writer
}

// installPlan is the JSON the install script reads.
type installPlan struct {
	Tarballs     []NPMTarball `json:"tarballs"`
	OmitOptional bool         `json:"omit_optional"`
	Check        []string     `json:"check"`
}

func (p CLI) plan() installPlan {
	return installPlan{Tarballs: p.Tarballs, OmitOptional: p.OmitOptional, Check: p.Version}
}

// ImageRef is the reference of p's image on the base image baseID: a hash
// of the base, the install script and the pinned tarballs, so a new pin or
// a new Debian base is a new image and an unchanged one is reused.
func (p CLI) ImageRef(baseID string) string {
	plan, _ := json.Marshal(p.plan())
	sum := sha256.Sum256(installScript)
	h := sha256.New()
	fmt.Fprintf(h, "base\x00%s\x00script\x00%x\x00plan\x00%s", baseID, sum, plan)
	return PresetImageName + p.Name + ":" + hex.EncodeToString(h.Sum(nil))[:16]
}

// EnsureImage returns the reference and id of p's image, building it when
// the engine does not have it: AgentBaseRecipe from Debian's packages,
// then the pinned npm tarballs, fetched in a build sandbox through the
// egress proxy and installed there. Nothing is installed when an agent
// runs.
func (p CLI) EnsureImage(ctx context.Context, eng ImageEngine, b ImageBuild) (ref, id string, err error) {
	if len(p.Tarballs) == 0 || len(p.Version) == 0 {
		return "", "", fmt.Errorf("preset %q installs no CLI: it has no image", p.Name)
	}
	progress := b.Progress
	if progress == nil {
		progress = io.Discard
	}
	baseID, err := eng.EnsureDebianImage(ctx, AgentBaseRecipe, progress)
	if err != nil {
		return "", "", fmt.Errorf("agent image %s: %w", p.Name, err)
	}
	ref = p.ImageRef(baseID)
	if id, _, found, err := eng.FindImage(ctx, ref); err != nil || found {
		return ref, id, err
	}
	if b.ProxySocket == "" {
		return "", "", fmt.Errorf("agent image %s: building it needs the egress proxy's socket, allowing %s only", ref, NPMRegistry)
	}
	plan, err := json.Marshal(p.plan())
	if err != nil {
		return "", "", err
	}
	files := []sandbox.LayerFile{{Path: installScriptPath, Mode: 0o644, Data: installScript}}
	if len(b.ExtraCA) > 0 {
		files = append(files, sandbox.LayerFile{Path: buildCAPath, Mode: 0o644, Data: b.ExtraCA})
	}
	limits := sandbox.DefaultLimits
	limits.Memory, limits.Pids, limits.TmpSize = 2<<30, 512, 1<<30
	fmt.Fprintf(progress, "building agent image %s (npm install of %s)...\n", ref, p.Tarballs[0].Spec)
	res, imageID, err := eng.Build(ctx, sandbox.Build{
		Spec: sandbox.Spec{
			Image:       baseID,
			Entrypoint:  []string{"/usr/bin/node", installScriptPath, string(plan)},
			Timeout:     presetBuildTimeout,
			Limits:      limits,
			ProxySocket: b.ProxySocket,
			StdoutLimit: 64 << 10,
			StderrLimit: 1 << 20,
			Labels:      map[string]string{labelPreset: p.Name},
		},
		Ref:   ref,
		Files: files,
		Keep: func(r sandbox.Result) (map[string]string, bool) {
			return map[string]string{labelPreset: p.Name, labelPackages: tarballSpecs(p.Tarballs), labelVersion: strings.TrimSpace(string(r.Stdout))},
				r.ExitCode == 0 && !r.TimedOut && !r.OOMKilled
		},
	})
	if err != nil {
		return "", "", fmt.Errorf("agent image %s: %w", ref, err)
	}
	if imageID == "" {
		return "", "", fmt.Errorf("agent image %s: the npm install failed (exit %d%s): %s", ref, res.ExitCode, buildEnding(res), stderrTail(res.Stderr, 4<<10))
	}
	fmt.Fprintf(progress, "built agent image %s: %s\n", ref, bytes.TrimSpace(res.Stdout))
	return ref, imageID, nil
}

// Preset is how the SandboxRunner runs p's harnesses: its image built on
// first use (the runner keeps the id) through a proxy of its own that
// allows NPMRegistry only, with extraCA as ImageBuild's; the command line
// for the harness's role and model API; the CLI's environment.
func (p CLI) Preset(eng ImageEngine, proxy EgressProxy, extraCA []byte, progress io.Writer) Preset {
	return Preset{
		Image: func(ctx context.Context) (string, error) {
			sess, err := proxy.Serve(EgressPolicy{Allow: []string{NPMRegistry}, MaxRequestBytes: maxRequestBytes, MaxTunnelBytes: maxTunnelBytes})
			if err != nil {
				return "", fmt.Errorf("agent image %s: egress proxy: %w", p.Name, err)
			}
			_, id, err := p.EnsureImage(ctx, eng, ImageBuild{ProxySocket: sess.Socket(), ExtraCA: extraCA, Progress: progress})
			if cerr := sess.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("agent image %s: egress proxy: %w", p.Name, cerr)
			}
			return id, err
		},
		Command: func(h Harness, t Task) []string { return p.Command(t.Role, h.ModelAPI) },
		Env:     p.Env(),
	}
}

// WithCLIs makes the claude-code and codex presets runnable: each CLI's
// Preset on eng, its image built through proxy (extraCA and progress as
// Preset takes them).
func WithCLIs(eng ImageEngine, proxy EgressProxy, extraCA []byte, progress io.Writer) Option {
	return func(r *SandboxRunner) {
		for _, c := range []CLI{ClaudeCode, Codex} {
			r.presets[c.Name] = c.Preset(eng, proxy, extraCA, progress)
		}
	}
}

func tarballSpecs(ts []NPMTarball) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Spec)
	}
	return strings.Join(s, " ")
}

func buildEnding(r sandbox.Result) string {
	switch {
	case r.TimedOut:
		return ", timed out"
	case r.OOMKilled:
		return ", out of memory"
	}
	return ""
}

// stderrTail is the last n bytes of b, as text.
func stderrTail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

package report

import (
	"fmt"
	"strings"
)

// Environment is the dependency environment a grade ran in: the base
// tree's declarations installed with pip from the operator's package index.
type Environment struct {
	// Image is the environment image's reference (the grader image is
	// built on it).
	Image string `json:"image"`
	// Python is the Python version ("3.11").
	Python string `json:"python"`
	// PythonFrom says why Python was chosen when the grade asked for
	// none: the base's requires-python ("pyproject.toml requires-python
	// \">=3.12\""), or why it could not be followed.
	PythonFrom string `json:"python_from,omitempty"`
	// Packages are what pip installed, as "name==version".
	Packages []string `json:"packages"`
	// BuiltFrom are the base tree's declaration files it was built from.
	BuiltFrom []string `json:"built_from"`
	// Cached is true when the image existed already and nothing was built.
	Cached bool `json:"cached"`
	// BuildSeconds is how long this grade spent building it.
	BuildSeconds float64 `json:"build_seconds"`
	// IndexURL is the package index it was built from.
	IndexURL string `json:"index_url,omitempty"`
	// SetAside are requirements the base declares that were not
	// installed, each "requirement (why)": a pin on the grader's own
	// pytest or pluggy, a development group's lint, docs or packaging
	// tool.
	SetAside []string `json:"set_aside,omitempty"`
	// Unavailable are requirements that could not be installed, each
	// "requirement: why"; the rest were, and the grade went on.
	Unavailable []string `json:"unavailable,omitempty"`
	// IgnoredChanges are declaration files the tree under test changed
	// against the base: the grade used the base's environment regardless.
	IgnoredChanges []string `json:"ignored_changes,omitempty"`
	// Error says why the environment could not be built; the grade is
	// then an error and graded nothing.
	Error string `json:"error,omitempty"`
}

// Network values of a report.
const (
	// NetworkNone: the grade had no network at all.
	NetworkNone = "none"
	// NetworkMirror: the grade could read (GET, HEAD) the package index
	// through the egress proxy, and nothing else.
	NetworkMirror = "mirror"
)

// ErrorReport is the report of a grade that ran nothing, for reason: its
// verdict is error; trust is what the grade would have had; output, for
// the requester only, says what failed (a dependency build's pip output).
func ErrorReport(trust Trust, reason, output string) *Report {
	rep := &Report{Verdict: VerdictError, Trust: trust, Reasons: []string{reason}, Output: output, Sentinels: "none"}
	rep.Normalize()
	return rep
}

// EnvironmentLine says in one line what a grade ran in, for the check run,
// the card and the text report: "python 3.11 · image testfirst-env:…
// (cached) · 2 packages: attrs==23.1, six==1.16 · built from
// requirements.txt · network: none". Empty when the report has no
// environment and no network.
func EnvironmentLine(env *Environment, network string) string {
	var parts []string
	if env != nil {
		py := "python " + env.Python
		if env.PythonFrom != "" {
			py += " (" + env.PythonFrom + ")"
		}
		parts = append(parts, py)
		img := "image " + env.Image
		switch {
		case env.Error != "":
			img += " (not built)"
		case env.Cached:
			img += " (cached)"
		default:
			img += fmt.Sprintf(" (built in %.1fs)", env.BuildSeconds)
		}
		parts = append(parts, img)
		switch n := len(env.Packages); {
		case n == 0:
			parts = append(parts, "no packages")
		case n <= 10:
			parts = append(parts, fmt.Sprintf("%d package(s): %s", n, strings.Join(env.Packages, ", ")))
		default:
			parts = append(parts, fmt.Sprintf("%d packages: %s, …", n, strings.Join(env.Packages[:10], ", ")))
		}
		if len(env.BuiltFrom) > 0 {
			parts = append(parts, "built from "+strings.Join(env.BuiltFrom, ", ")+" of the base")
		}
		if len(env.Unavailable) > 0 {
			parts = append(parts, "not installed: "+strings.Join(env.Unavailable, ", "))
		}
		if len(env.SetAside) > 0 {
			parts = append(parts, "set aside: "+strings.Join(env.SetAside, ", "))
		}
		if len(env.IgnoredChanges) > 0 {
			parts = append(parts, "changes to "+strings.Join(env.IgnoredChanges, ", ")+" not used")
		}
	}
	if network != "" {
		parts = append(parts, "network: "+network)
	}
	return strings.Join(parts, " · ")
}

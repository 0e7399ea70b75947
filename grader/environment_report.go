package grader

import (
	"fmt"
	"slices"

	"github.com/testfirst-app/testfirst/sandbox"
)

// DefaultPython is the Python a grade runs when the repository picks none:
// Debian bookworm's.
const DefaultPython = "3.11"

// pythonSuites maps each Python version a grade may pick to the Debian
// suite whose python3 it is.
var pythonSuites = map[string]string{"3.11": "bookworm", "3.13": "trixie"}

// PythonVersions are the Python versions a grade may pick, in order.
func PythonVersions() []string {
	var vs []string
	for v := range pythonSuites {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// BaseRecipeFor is the grader's base image for a Python version: BaseRecipe
// for DefaultPython, the same packages from another Debian suite for
// another version. An unknown version is an error that lists the known
// ones.
func BaseRecipeFor(python string) (sandbox.DebianRecipe, error) {
	suite, ok := pythonSuites[python]
	if !ok {
		return sandbox.DebianRecipe{}, fmt.Errorf("python %q: pick one of %q (Debian's python3 of bookworm or trixie)", python, PythonVersions())
	}
	r := BaseRecipe
	r.Suite = suite
	r.Packages = slices.Clone(BaseRecipe.Packages)
	return r, nil
}

// Environment is the dependency environment a grade ran in: the base
// tree's declarations installed with pip from the operator's package index.
type Environment struct {
	// Image is the environment image's reference (the grader image is
	// built on it).
	Image string `json:"image"`
	// Python is the Python version ("3.11").
	Python string `json:"python"`
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
	rep.normalize()
	return rep
}

package grader

import (
	"context"
	"fmt"
	"slices"

	"github.com/testfirst-app/testfirst/report"
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

// EnvironmentSource prepares the dependency environment of a grade
// (grader/environment implements it).
type EnvironmentSource interface {
	// Prepare returns the grader image to grade req in. A build that
	// failed is a Prepared with Failure set, not an error; an error is bad
	// input or the engine's.
	Prepare(ctx context.Context, req Request) (Prepared, error)
}

// Prepared is the environment a grade runs in.
type Prepared struct {
	// Image and ImageID are the grader image built on the environment.
	Image, ImageID string
	// Environment is what the report says of it.
	Environment *report.Environment
	// ProxySocket is the read-only egress proxy's socket, for a mirror
	// grade.
	ProxySocket string
	// Failure, when set, says why the environment could not be built:
	// the grade is an error and runs nothing. FailureOutput, for the
	// requester only, is the build's output.
	Failure       string
	FailureOutput string
}

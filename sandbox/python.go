package sandbox

import (
	"fmt"
	"slices"
)

// PythonRecipe is the grader's base image: Debian's python3 and pytest, built
// locally because no image registry is needed.
var PythonRecipe = DebianRecipe{
	Name:     "testfirst-python",
	Suite:    "bookworm",
	Variant:  "apt",
	Packages: []string{"python3", "python3-pytest"},
}

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

// PythonRecipeFor is the grader's base image for a Python version: PythonRecipe
// for DefaultPython, the same packages from another Debian suite for
// another version. An unknown version is an error that lists the known
// ones.
func PythonRecipeFor(python string) (DebianRecipe, error) {
	suite, ok := pythonSuites[python]
	if !ok {
		return DebianRecipe{}, fmt.Errorf("python %q: pick one of %q (Debian's python3 of bookworm or trixie)", python, PythonVersions())
	}
	r := PythonRecipe
	r.Suite = suite
	r.Packages = slices.Clone(PythonRecipe.Packages)
	return r, nil
}

package wrapper

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// collectedIDs returns the node ids pytest collects from dir, as the
// grader runs it (no conftest, no ini file, dir as rootdir).
func collectedIDs(t *testing.T, dir string, path ...string) []string {
	t.Helper()
	cmd := exec.Command(hostPython, "-m", "pytest", "--collect-only", "-q", "--noconftest", "-c", "/dev/null", "--rootdir", dir, "-p", "no:cacheprovider", dir)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH="+strings.Join(path, ":"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pytest --collect-only: %v\n%s", err, out)
	}
	var ids []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "::") && !strings.HasPrefix(line, " ") {
			ids = append(ids, strings.TrimSpace(line))
		}
	}
	slices.Sort(ids)
	return ids
}

// TestListingAgreesWithPytest: the syntax-tree listing names exactly the
// tests pytest collects from hidden files in the styles real suites use:
// unittest classes of any name and their subclasses across modules, mixin
// and base-class methods, nested classes, __test__ = False, tests in both
// branches of an if, parametrize ids (stacked, ids=, pytest.param, non-ASCII,
// duplicates, class marks). A test whose cases cannot be known from the
// syntax is listed with CasesUnknown and its cases are left out of the
// comparison.
func TestListingAgreesWithPytest(t *testing.T) {
	needPytest(t)
	dirs := []string{filepath.Join("testdata", "collect")}
	styles, _ := filepath.Glob(filepath.Join("..", "test", "testdata", "styles", "*", "hidden"))
	for _, d := range styles {
		// A style graded with the trusted collection holds what the
		// listing cannot know.
		var c struct {
			TrustedCollection bool `json:"trusted_collection"`
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(d), "case.json"))
		if err != nil || json.Unmarshal(data, &c) != nil {
			t.Fatalf("%s: case.json: %v", d, err)
		}
		if !c.TrustedCollection {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			dir, err := filepath.Abs(d)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			copyDir(t, dir, tmp)
			expected, _ := listHidden(t, tmp)
			var listed []string
			unknown := map[string]bool{}
			for _, e := range expected {
				switch {
				case e.CasesUnknown:
					unknown[e.nodeID()] = true
				case len(e.Cases) > 0:
					for _, c := range e.Cases {
						listed = append(listed, e.nodeID()+"["+c+"]")
					}
				default:
					listed = append(listed, e.nodeID())
				}
			}
			slices.Sort(listed)
			var collected []string
			seenUnknown := map[string]bool{}
			// A style's hidden tests import its pull request's tree.
			pr := filepath.Join(filepath.Dir(dir), "pr")
			for _, id := range collectedIDs(t, tmp, pr, filepath.Join(pr, "src")) {
				fn, _, _ := strings.Cut(id, "[")
				if unknown[fn] {
					seenUnknown[fn] = true
					continue
				}
				collected = append(collected, id)
			}
			if diff := cmp.Diff(collected, listed); diff != "" {
				t.Errorf("listing (+) and pytest's collection (-) differ:\n%s", diff)
			}
			for fn := range unknown {
				if !seenUnknown[fn] {
					t.Errorf("%s is listed with unknown cases, pytest collects none", fn)
				}
			}
		})
	}
}

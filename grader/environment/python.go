package environment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
)

// debianPython is the full version of each Python the grader has
// (sandbox.PythonVersions): Debian bookworm's and trixie's python3, as
// `python3 --version` in the grader's images says.
var debianPython = map[string]string{"3.11": "3.11.2", "3.13": "3.13.5"}

// debianPytest is the pytest each of the grader's Pythons runs the hidden
// tests with (Debian's python3-pytest of that suite), as `python3 -m
// pytest --version` in the grader's images says.
var debianPytest = map[string]string{"3.11": "7.2.1", "3.13": "8.3.5"}

// ChoosePython picks the Python a grade of base runs when none was asked
// for, by what the base allows (choosePythonAllowed); then, when the
// base's declarations ask for a pytest that Python's pytest does not
// meet (pins: Declared.PytestPins; pytest>=8 is common) and another
// Python the base allows has one that does, that Python. why says so for
// the report; "" when the base says nothing that moves the choice from
// the default.
func ChoosePython(base *tree.Tree, pins []string) (python, why string) {
	python, why = choosePythonAllowed(base)
	if len(pins) == 0 || pytestMeets(pins, debianPytest[python]) {
		return python, why
	}
	for _, v := range sandbox.PythonVersions() {
		if v == python || !pytestMeets(pins, debianPytest[v]) || !baseAllows(base, v) {
			continue
		}
		return v, fmt.Sprintf("the base's declarations ask for %s, which Python %s's pytest %s meets and Python %s's pytest %s does not",
			strings.Join(pins, ", "), v, debianPytest[v], python, debianPytest[python])
	}
	return python, why
}

// pytestMeets reports whether pytest version v meets every requirement of
// pins ("pytest>=8", "pytest[testing] >= 7.4; python_version >= '3.8'"):
// a requirement whose version part does not parse is met (it is set
// aside anyway, and must not move the choice).
func pytestMeets(pins []string, v string) bool {
	for _, req := range pins {
		req, _, _ = strings.Cut(req, ";")
		i := strings.IndexAny(req, "<>=!~")
		if i < 0 {
			continue // any pytest
		}
		ok, err := allows(strings.Trim(strings.TrimSpace(req[i:]), "()"), v)
		if err == nil && !ok {
			return false
		}
	}
	return true
}

// baseAllows reports whether the base allows Python v: its requires-python
// does, or it has none and its classifiers name no Python version or name
// v.
func baseAllows(base *tree.Tree, v string) bool {
	if spec, _ := requiresPython(base); spec != "" {
		ok, err := allows(spec, cmpOr(debianPython[v], v))
		return err == nil && ok
	}
	named, _ := classifierVersions(base)
	return len(named) == 0 || slices.Contains(named, v)
}

// choosePythonAllowed picks the Python a grade of base runs by what the
// base allows: sandbox.DefaultPython when the base's requires-python
// (pyproject.toml's [project], else setup.cfg's python_requires) allows
// it or says nothing, else the first of the grader's Pythons it allows;
// without requires-python, the Python versions its classifiers name
// decide alike. why says so for the report; "" when the base says
// nothing that moves the choice from the default.
func choosePythonAllowed(base *tree.Tree) (python, why string) {
	spec, from := requiresPython(base)
	if spec == "" {
		return fromClassifiers(base)
	}
	versions := sandbox.PythonVersions()
	slices.SortStableFunc(versions, func(a, b string) int {
		switch sandbox.DefaultPython {
		case a:
			return -1
		case b:
			return 1
		}
		return 0
	})
	for _, v := range versions {
		ok, err := allows(spec, cmpOr(debianPython[v], v))
		if err != nil {
			return sandbox.DefaultPython, fmt.Sprintf("%s %q does not parse (%v): graded with %s", from, spec, err, sandbox.DefaultPython)
		}
		if ok {
			return v, fmt.Sprintf("%s %q", from, spec)
		}
	}
	return sandbox.DefaultPython, fmt.Sprintf("%s %q allows none of the grader's Pythons (%s): graded with %s", from, spec, strings.Join(sandbox.PythonVersions(), ", "), sandbox.DefaultPython)
}

// classifierPrefix starts the trove classifiers that name a Python
// version.
const classifierPrefix = "Programming Language :: Python :: "

// fromClassifiers picks, for a base without requires-python, among the
// Python versions its classifiers (pyproject.toml's [project], else
// setup.cfg's [metadata]) name: the default when it is named or none is,
// else the first of the grader's that is.
func fromClassifiers(base *tree.Tree) (python, why string) {
	named, from := classifierVersions(base)
	if len(named) == 0 || slices.Contains(named, sandbox.DefaultPython) {
		return sandbox.DefaultPython, ""
	}
	for _, v := range sandbox.PythonVersions() {
		if slices.Contains(named, v) {
			return v, fmt.Sprintf("%s name Python %s", from, strings.Join(named, ", "))
		}
	}
	return sandbox.DefaultPython, fmt.Sprintf("%s name Python %s, none of the grader's (%s): graded with %s", from, strings.Join(named, ", "), strings.Join(sandbox.PythonVersions(), ", "), sandbox.DefaultPython)
}

// classifierVersions are the Python versions (3.x) the base's trove
// classifiers name, from pyproject.toml's [project], else setup.cfg's
// [metadata], and which of the two named them.
func classifierVersions(base *tree.Tree) (named []string, from string) {
	if f, ok := base.Lookup("pyproject.toml"); ok && !f.IsSymlink() {
		var doc struct {
			Project struct {
				Classifiers []string `toml:"classifiers"`
			} `toml:"project"`
		}
		if _, err := toml.Decode(string(f.Data), &doc); err == nil {
			for _, c := range doc.Project.Classifiers {
				if v, ok := strings.CutPrefix(strings.TrimSpace(c), classifierPrefix); ok && strings.Count(v, ".") == 1 {
					named, from = append(named, v), "pyproject.toml classifiers"
				}
			}
		}
	}
	if f, ok := base.Lookup("setup.cfg"); ok && !f.IsSymlink() && len(named) == 0 {
		for _, v := range detect.SetupCfgValues(string(f.Data)) {
			if ver, ok := strings.CutPrefix(v.Line, classifierPrefix); ok && v.Section == "metadata" && v.Key == "classifiers" && strings.Count(ver, ".") == 1 {
				named, from = append(named, strings.TrimSpace(ver)), "setup.cfg classifiers"
			}
		}
	}
	return named, from
}

// requiresPython is the base's Python requirement and where it says so.
func requiresPython(base *tree.Tree) (spec, from string) {
	if f, ok := base.Lookup("pyproject.toml"); ok && !f.IsSymlink() {
		var doc struct {
			Project struct {
				RequiresPython string `toml:"requires-python"`
			} `toml:"project"`
		}
		if _, err := toml.Decode(string(f.Data), &doc); err == nil && strings.TrimSpace(doc.Project.RequiresPython) != "" {
			return strings.TrimSpace(doc.Project.RequiresPython), "pyproject.toml requires-python"
		}
	}
	if f, ok := base.Lookup("setup.cfg"); ok && !f.IsSymlink() {
		for _, v := range detect.SetupCfgValues(string(f.Data)) {
			if v.Section == "options" && v.Key == "python_requires" {
				return strings.TrimSpace(v.Line), "setup.cfg python_requires"
			}
		}
	}
	return "", ""
}

// allows reports whether the PEP 440 specifier set spec allows the
// release version v ("3.11.2").
func allows(spec, v string) (bool, error) {
	have, err := release(v)
	if err != nil {
		return false, err
	}
	for _, clause := range strings.Split(spec, ",") {
		clause = strings.TrimSpace(clause)
		if clause == "" {
			continue
		}
		i := strings.IndexAny(clause, "0123456789")
		if i <= 0 {
			return false, fmt.Errorf("clause %q: want an operator and a version", clause)
		}
		op, ver := strings.TrimSpace(clause[:i]), strings.TrimSpace(clause[i:])
		wild := strings.HasSuffix(ver, ".*")
		want, err := release(strings.TrimSuffix(ver, ".*"))
		if err != nil {
			return false, fmt.Errorf("clause %q: %w", clause, err)
		}
		c := cmpRelease(have, want)
		var ok bool
		switch op {
		case ">=":
			ok = c >= 0
		case ">":
			ok = c > 0
		case "<=":
			ok = c <= 0
		case "<":
			ok = c < 0
		case "==", "===":
			ok = c == 0
			if wild {
				ok = hasPrefix(have, want)
			}
		case "!=":
			ok = c != 0
			if wild {
				ok = !hasPrefix(have, want)
			}
		case "~=":
			if len(want) < 2 {
				return false, fmt.Errorf("clause %q: ~= needs two parts at least", clause)
			}
			ok = c >= 0 && hasPrefix(have, want[:len(want)-1])
		default:
			return false, fmt.Errorf("clause %q: unknown operator %q", clause, op)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// release reads "3.11.2" as its numbers; anything after them (a
// pre-release or local tag) is refused.
func release(v string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("version %q: want numbers such as 3.11", v)
		}
		out = append(out, n)
	}
	return out, nil
}

// cmpRelease compares releases, missing parts as zero.
func cmpRelease(a, b []int) int {
	for i := range max(len(a), len(b)) {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func hasPrefix(v, prefix []int) bool {
	for i, p := range prefix {
		x := 0
		if i < len(v) {
			x = v[i]
		}
		if x != p {
			return false
		}
	}
	return true
}

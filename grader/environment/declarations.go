package environment

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/tree"
)

// Declared is what a tree declares it needs to run its tests.
type Declared struct {
	// Files are the declaration files read, in order.
	Files []string
	// Requirements are pip requirement specifiers, in the order read,
	// without duplicates.
	Requirements []string
	// Ignored are lines of requirements files that are not requirements
	// (options such as --index-url or -e, which the operator's settings
	// decide), each as "file: line".
	Ignored []string
	// SetAside are requirements declared and not installed, each as
	// "requirement (why)": a pin on the grader's runner (pytest, pluggy),
	// or a development group's tooling.
	SetAside []string
	// PytestPins are the declared requirements on pytest, as declared
	// (set aside too): ChoosePython prefers a Python whose pytest meets
	// them.
	PytestPins []string
}

// testGroups are the optional dependency groups of pyproject.toml, its
// PEP 735 dependency groups and the extras of setup.cfg that a grade
// installs as declared.
var testGroups = []string{"test", "tests", "testing"}

// devGroup is the group, and requirements-dev.txt the file, a grade
// installs without its tooling (isTooling): projects keep test
// dependencies there as often as linters, so dropping it would lose
// what the tests import, and installing all of it would sink grades on
// tools nobody's tests import (flit, mypy, sphinx).
const devGroup = "dev"

// runnerDists are the distributions that are the grader's runner: a
// requirement on them is set aside, never installed over it.
var runnerDists = []string{"pytest", "pluggy"}

// toolingNames are the lint, type-checking, docs, packaging and release
// tools a development group's entries are set aside for; toolingPrefixes
// the families of them. coverage and pytest-cov are not among them: a
// repository's pytest options (addopts = --cov) need pytest-cov to start.
var toolingNames = map[string]bool{
	"mypy": true, "ruff": true, "flake8": true, "black": true, "isort": true, "pre-commit": true,
	"pylint": true, "pyright": true, "basedpyright": true, "pytype": true, "pyre-check": true,
	"pydocstyle": true, "pycodestyle": true, "pyflakes": true, "autopep8": true, "yapf": true,
	"autoflake": true, "pyupgrade": true, "codespell": true, "bandit": true, "vulture": true,
	"blacken-docs": true, "docformatter": true, "doc8": true, "furo": true, "myst-parser": true,
	"build": true, "twine": true, "flit": true, "flit-core": true, "hatch": true, "hatchling": true,
	"poetry": true, "pdm": true, "setuptools-scm": true, "wheel": true, "check-manifest": true,
	"readme-renderer": true, "pyroma": true, "bump2version": true, "bumpversion": true,
	"bump-my-version": true, "bumpver": true, "towncrier": true, "commitizen": true, "tox": true,
	"nox": true, "pip-tools": true, "uv": true, "ipython": true, "ipdb": true, "pdbpp": true,
	"jupyter": true, "mccabe": true, "pep8": true, "pep8-naming": true, "pip-audit": true, "safety": true,
	"interrogate": true, "darglint": true, "rstcheck": true, "restructuredtext-lint": true, "mdformat": true,
	"cibuildwheel": true, "auditwheel": true, "delocate": true, "zest-releaser": true, "scriv": true,
}

var toolingPrefixes = []string{"sphinx", "mkdocs", "flake8-", "pylint-", "types-", "mypy-boto3", "tox-", "pre-commit-"}

// requirementName is the normalized distribution name of a requirement
// specifier (PEP 503: lower case, runs of -_. as -), "" when the line is
// no requirement by name (a URL, a path).
func requirementName(req string) string {
	i := strings.IndexFunc(req, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	})
	if i < 0 {
		i = len(req)
	}
	name := strings.ToLower(req[:i])
	if name == "" || (i < len(req) && (req[i] == '/' || req[i] == ':')) {
		return ""
	}
	var b strings.Builder
	dash := false
	for _, r := range name {
		if r == '-' || r == '_' || r == '.' {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// isTooling reports whether the distribution name (normalized) is a
// lint, type-checking, docs, packaging or release tool.
func isTooling(name string) bool {
	if toolingNames[name] || strings.HasSuffix(name, "-stubs") {
		return true
	}
	for _, p := range toolingPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// IsDeclaration reports whether p, a path in a tree, is a file the
// environment is built from: requirements.txt, the test requirements
// files (requirements*test*.txt, test-requirements.txt,
// test_requirements.txt, tests/requirements.txt, requirements/*test*.txt
// and the runtime ones requirements/ holds), the development ones
// (requirements-dev.txt, dev-requirements.txt, requirements/dev.txt),
// pyproject.toml, setup.cfg and tox.ini. Docs, lint and typing
// requirements files are not.
func IsDeclaration(p string) bool {
	_, ok := declKind(p)
	return ok
}

// kinds of requirements files.
const (
	kindRuntime = iota
	kindTest
	kindDev
)

// declKind says what kind of requirements p is, ok false when it is no
// declaration file.
func declKind(p string) (kind int, ok bool) {
	dir, name := path.Split(p)
	if dir == "" && (name == "pyproject.toml" || name == "setup.cfg" || name == "tox.ini") {
		return kindRuntime, true
	}
	if !strings.HasSuffix(name, ".txt") {
		return 0, false
	}
	stem := strings.TrimSuffix(name, ".txt")
	switch dir {
	case "":
		switch {
		case stem == "requirements":
			return kindRuntime, true
		case slices.Contains([]string{"requirements-dev", "requirements_dev", "dev-requirements", "dev_requirements"}, stem):
			return kindDev, true
		case strings.HasPrefix(stem, "requirements") && strings.Contains(stem, "test"),
			slices.Contains([]string{"test-requirements", "test_requirements", "tests-requirements", "tests_requirements"}, stem):
			return kindTest, true
		}
	case "tests/", "test/", "testing/":
		if stem == "requirements" {
			return kindTest, true
		}
	case "requirements/":
		switch {
		case strings.Contains(stem, "test"):
			return kindTest, true
		case slices.Contains([]string{"dev", "develop", "development"}, stem):
			return kindDev, true
		case slices.Contains([]string{"base", "main", "prod", "production", "runtime", "install", "common", "requirements"}, stem):
			return kindRuntime, true
		}
	}
	return 0, false
}

// Declarations reads what t declares: requirements.txt, the test and
// development requirements files (IsDeclaration) and the files their -r
// lines name; pyproject.toml's [project] dependencies, its optional
// dependencies and PEP 735 [dependency-groups] named test, tests or
// testing, and dev's without its tooling; setup.cfg's install_requires
// and those extras; tox.ini's [testenv] deps, extras and
// dependency_groups. Requirements on the grader's runner (pytest,
// pluggy) are set aside. A file that does not parse is an error that
// names it.
func Declarations(t *tree.Tree) (Declared, error) {
	var d Declared
	seen := map[string]bool{}
	add := func(req string, kind int, from string) {
		req = strings.TrimSpace(req)
		if req == "" || seen[req] {
			return
		}
		seen[req] = true
		name := requirementName(req)
		switch {
		case slices.Contains(runnerDists, name):
			d.SetAside = append(d.SetAside, req+" (the grader's own "+name+" runs the hidden tests)")
			if name == "pytest" {
				d.PytestPins = append(d.PytestPins, req)
			}
		case kind == kindDev && isTooling(name):
			d.SetAside = append(d.SetAside, req+" (tooling in "+from+")")
		default:
			d.Requirements = append(d.Requirements, req)
		}
	}
	var names []string
	for _, f := range t.Files {
		if !f.IsSymlink() && IsDeclaration(f.Path) {
			names = append(names, f.Path)
		}
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if c := cmpDecl(a) - cmpDecl(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	read := map[string]bool{}
	// readReqs reads a requirements file and those its -r lines name, in
	// the tree, each once. A file is of the kind its name says wherever it
	// is named from (tox.ini's test env naming requirements-dev.txt keeps
	// it a development file, its tooling set aside); a file whose name
	// says nothing is of the kind of the file that names it.
	var readReqs func(name string, kind int, depth int)
	readReqs = func(name string, kind int, depth int) {
		f, ok := t.Lookup(name)
		if !ok || f.IsSymlink() || read[name] || depth > 8 {
			return
		}
		if own, ok := declKind(name); ok {
			kind = own
		}
		read[name] = true
		d.Files = append(d.Files, name)
		reqs, ignored := requirementsLines(f.Data)
		for _, r := range reqs {
			add(r, kind, name)
		}
		for _, l := range ignored {
			if inc, ok := includedFile(l); ok {
				readReqs(path.Join(path.Dir(name), inc), kind, depth+1)
				continue
			}
			d.Ignored = append(d.Ignored, name+": "+l)
		}
	}
	// extras are the extras and dependency groups tox.ini's test env
	// names, read from pyproject.toml and setup.cfg as test groups.
	extras := slices.Clone(testGroups)
	if f, ok := t.Lookup("tox.ini"); ok && !f.IsSymlink() {
		deps, reqFiles, more := toxTestEnv(f.Data)
		read["tox.ini"] = true
		d.Files = append(d.Files, "tox.ini")
		for _, r := range deps {
			add(r, kindTest, "tox.ini")
		}
		for _, rf := range reqFiles {
			readReqs(path.Clean(rf), kindTest, 1)
		}
		for _, x := range more {
			if !slices.Contains(extras, x) && x != devGroup {
				extras = append(extras, x)
			}
		}
	}
	for _, name := range names {
		if read[name] {
			continue
		}
		f, _ := t.Lookup(name)
		var reqs, dev []string
		switch name {
		case "pyproject.toml":
			var err error
			if reqs, dev, err = pyprojectRequirements(f.Data, extras); err != nil {
				return d, fmt.Errorf("%s: %w", name, err)
			}
		case "setup.cfg":
			reqs, dev = setupCfgRequirements(f.Data, extras)
		default:
			kind, _ := declKind(name)
			readReqs(name, kind, 0)
			continue
		}
		read[name] = true
		d.Files = append(d.Files, name)
		for _, r := range reqs {
			add(r, kindTest, name)
		}
		for _, r := range dev {
			add(r, kindDev, name+" ["+devGroup+"]")
		}
	}
	return d, nil
}

// includedFile returns the file a requirements file's -r (--requirement)
// line names.
func includedFile(line string) (string, bool) {
	for _, opt := range []string{"--requirement=", "--requirement ", "-r ", "-r"} {
		if rest, ok := strings.CutPrefix(line, opt); ok {
			rest = strings.TrimSpace(rest)
			return rest, rest != "" && !strings.Contains(rest, "://")
		}
	}
	return "", false
}

// toxFactor is a tox.ini deps line that holds for some factors only
// ("py38: mock").
var toxFactor = regexp.MustCompile(`^[A-Za-z0-9_.,!-]+:\s`)

// toxTestEnv reads tox.ini's [testenv] (the default test environment):
// its deps (without factor-conditional lines and {[section]key}
// references, which other environments choose), the requirements files
// its -r lines name (relative to the tree's root, {toxinidir} dropped), and
// the extras and dependency groups it installs the project with.
func toxTestEnv(data []byte) (deps, reqFiles, extras []string) {
	for _, v := range detect.SetupCfgValues(string(data)) {
		if v.Section != "testenv" {
			continue
		}
		line := strings.TrimSpace(strings.ReplaceAll(v.Line, "{toxinidir}/", ""))
		switch v.Key {
		case "extras", "dependency_groups":
			for _, x := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' }) {
				extras = append(extras, strings.ToLower(x))
			}
		case "deps":
			if i := strings.Index(line, " #"); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			switch {
			case line == "" || strings.HasPrefix(line, "#") || toxFactor.MatchString(line) || strings.Contains(line, "{"):
			case strings.HasPrefix(line, "-"):
				if f, ok := includedFile(line); ok {
					reqFiles = append(reqFiles, f)
				}
			case strings.HasPrefix(line, ".["):
				// The project itself with extras: read as test groups.
				in, _, _ := strings.Cut(strings.TrimPrefix(line, ".["), "]")
				for _, x := range strings.Split(in, ",") {
					extras = append(extras, strings.ToLower(strings.TrimSpace(x)))
				}
			case line == "." || strings.HasPrefix(line, "./") || strings.Contains(line, "/"):
			default:
				deps = append(deps, line)
			}
		}
	}
	return deps, reqFiles, extras
}

// cmpDecl orders declaration files: requirements files, then tox.ini,
// pyproject.toml and setup.cfg.
func cmpDecl(p string) int {
	switch p {
	case "tox.ini":
		return 1
	case "pyproject.toml":
		return 2
	case "setup.cfg":
		return 3
	}
	return 0
}

// requirementsLines returns the requirement specifiers of a requirements
// file, and the option lines it leaves out. Options (-r, -c, -e,
// --index-url, ...) are not followed: every requirements file of the tree
// is read anyway, and where packages come from is the operator's setting.
func requirementsLines(data []byte) (reqs, ignored []string) {
	s := bufio.NewScanner(bytes.NewReader(data))
	var cont string
	for s.Scan() {
		line := cont + s.Text()
		cont = ""
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "-"):
			ignored = append(ignored, line)
		default:
			reqs = append(reqs, line)
		}
	}
	return reqs, ignored
}

// pyprojectRequirements reads pyproject.toml's dependencies and the
// optional dependencies and dependency groups named in groups, and apart
// from them the dev group's.
func pyprojectRequirements(data []byte, groups []string) (reqs, dev []string, err error) {
	var doc struct {
		Project struct {
			Dependencies         []string            `toml:"dependencies"`
			OptionalDependencies map[string][]string `toml:"optional-dependencies"`
		} `toml:"project"`
		DependencyGroups map[string][]any `toml:"dependency-groups"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, nil, fmt.Errorf("does not parse as TOML: %w", err)
	}
	reqs = slices.Clone(doc.Project.Dependencies)
	for _, g := range groups {
		reqs = append(reqs, doc.Project.OptionalDependencies[g]...)
	}
	dev = slices.Clone(doc.Project.OptionalDependencies[devGroup])
	var group func(to *[]string, name string, depth int) error
	group = func(to *[]string, name string, depth int) error {
		if depth > 8 {
			return fmt.Errorf("[dependency-groups] %s: include-group nests too deep", name)
		}
		for _, e := range doc.DependencyGroups[name] {
			switch v := e.(type) {
			case string:
				*to = append(*to, v)
			case map[string]any:
				inc, ok := v["include-group"].(string)
				if !ok {
					return fmt.Errorf("[dependency-groups] %s: a table entry needs include-group", name)
				}
				if err := group(to, inc, depth+1); err != nil {
					return err
				}
			default:
				return fmt.Errorf("[dependency-groups] %s: entry %v is neither a requirement nor an include-group", name, e)
			}
		}
		return nil
	}
	for _, g := range groups {
		if err := group(&reqs, g, 0); err != nil {
			return nil, nil, err
		}
	}
	if err := group(&dev, devGroup, 0); err != nil {
		return nil, nil, err
	}
	return reqs, dev, nil
}

// setupCfgRequirements reads setup.cfg's [options] install_requires and
// [options.extras_require] groups, and apart from them the dev extra:
// INI values, one requirement per line (a semicolon starts an
// environment marker, as in any requirement).
func setupCfgRequirements(data []byte, groups []string) (reqs, dev []string) {
	for _, v := range detect.SetupCfgValues(string(data)) {
		switch {
		case (v.Section == "options" && v.Key == "install_requires") ||
			(v.Section == "options.extras_require" && slices.Contains(groups, v.Key)):
			reqs = append(reqs, v.Line)
		case v.Section == "options.extras_require" && v.Key == devGroup:
			dev = append(dev, v.Line)
		}
	}
	return reqs, dev
}

// ChangedDeclarations lists the declaration files that differ between base
// and head: the pull request changed them, and its grade still uses the
// base's environment.
func ChangedDeclarations(base, head *tree.Tree) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range []*tree.Tree{base, head} {
		for _, f := range t.Files {
			if !IsDeclaration(f.Path) || seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			a, aok := base.Lookup(f.Path)
			b, bok := head.Lookup(f.Path)
			if aok != bok || (aok && !bytes.Equal(a.Data, b.Data)) {
				out = append(out, f.Path)
			}
		}
	}
	slices.Sort(out)
	return out
}

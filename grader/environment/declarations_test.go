package environment

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/tree"
)

func treeOf(t *testing.T, files map[string]string) *tree.Tree {
	t.Helper()
	var fs []tree.File
	for p, d := range files {
		fs = append(fs, tree.File{Path: p, Mode: 0o644, Data: []byte(d)})
	}
	tr, err := tree.New(fs)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestDeclarations(t *testing.T) {
	tr := treeOf(t, map[string]string{
		"requirements.txt":       "# pinned\nattrs==23.1 # for tests\n--index-url https://elsewhere.example/simple\n-e .\nsix\\\n>=1.16\n",
		"requirements-dev.txt":   "attrs==23.1\nhypothesis\nmypy==1.8\nflake8-bugbear\ntypes-requests\n",
		"requirements/test.txt":  "-r base.txt\npytest-timeout\npytest>=8\n",
		"requirements/base.txt":  "idna\n",
		"requirements/docs.txt":  "sphinx\n",
		"requirements/lint.txt":  "ruff\n",
		"docs/requirements.txt":  "sphinx\n",
		"test-requirements.txt":  "freezegun\n",
		"tests/requirements.txt": "responses\n",
		"pyproject.toml": `[project]
name = "x"
dependencies = ["idna>=3"]
[project.optional-dependencies]
test = ["coverage"]
docs = ["mkdocs"]
typing = ["mypy"]
integration = ["requests-mock"]
[dependency-groups]
base = ["packaging"]
dev = [{include-group = "base"}, "tomli; python_version < '3.11'", "Flit_Core>=3", "pre-commit"]
lint = ["ruff"]
`,
		"setup.cfg":           "[metadata]\nname = x\n[options]\ninstall_requires =\n    certifi\n    charset-normalizer>=2\n[options.extras_require]\ntesting =\n    mock\n    pluggy>=1.5\nspeedups = cchardet\n",
		"tox.ini":             "[tox]\nenvlist = py3\n[testenv]\nextras = integration\ndeps =\n    -r{toxinidir}/requirements-ci.txt\n    trustme\n    py38: backports.zoneinfo\n    {[base]deps}\ncommands = pytest\n[testenv:lint]\ndeps = black\n",
		"requirements-ci.txt": "pytest-xdist\n",
		"src/x.py":            "",
	})
	d, err := Declarations(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := Declared{
		Files: []string{"tox.ini", "requirements-ci.txt", "requirements-dev.txt", "requirements.txt", "requirements/base.txt", "requirements/test.txt", "test-requirements.txt", "tests/requirements.txt", "pyproject.toml", "setup.cfg"},
		Requirements: []string{"trustme", "pytest-xdist", "attrs==23.1", "hypothesis", "six>=1.16", "idna", "pytest-timeout", "freezegun", "responses",
			"idna>=3", "coverage", "requests-mock", "packaging", "tomli; python_version < '3.11'", "certifi", "charset-normalizer>=2", "mock"},
		Ignored: []string{"requirements.txt: --index-url https://elsewhere.example/simple", "requirements.txt: -e ."},
		SetAside: []string{"mypy==1.8 (tooling in requirements-dev.txt)", "flake8-bugbear (tooling in requirements-dev.txt)", "types-requests (tooling in requirements-dev.txt)",
			"pytest>=8 (the grader's own pytest runs the hidden tests)", "Flit_Core>=3 (tooling in pyproject.toml [dev])", "pre-commit (tooling in pyproject.toml [dev])",
			"pluggy>=1.5 (the grader's own pluggy runs the hidden tests)"},
		PytestPins: []string{"pytest>=8"},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Declarations (-want +got):\n%s", diff)
	}
	for _, p := range []string{"requirements/docs.txt", "requirements/lint.txt", "docs/requirements.txt", "requirements-docs.txt"} {
		if IsDeclaration(p) {
			t.Errorf("%s is read: docs and lint requirements are not installed", p)
		}
	}
}

func TestDeclarationsBadTOML(t *testing.T) {
	_, err := Declarations(treeOf(t, map[string]string{"pyproject.toml": "[project\n"}))
	if err == nil || !strings.HasPrefix(err.Error(), "pyproject.toml: does not parse as TOML") {
		t.Errorf("bad pyproject.toml: %v", err)
	}
}

func TestChangedDeclarations(t *testing.T) {
	base := treeOf(t, map[string]string{"requirements.txt": "attrs\n", "setup.cfg": "[x]\n", "a.py": "1"})
	head := treeOf(t, map[string]string{"requirements.txt": "attrs\nsix\n", "pyproject.toml": "", "setup.cfg": "[x]\n", "a.py": "2"})
	if got := ChangedDeclarations(base, head); cmp.Diff([]string{"pyproject.toml", "requirements.txt"}, got) != "" {
		t.Errorf("ChangedDeclarations = %q", got)
	}
}

// TestDeclarationsDevFileThroughTox reads a test env whose deps name the
// development requirements file, as bleach's tox.ini does: the file is
// what its name says wherever it is read from, so its lint, type-checking,
// docs and packaging tools are set aside, and what the tests import from
// it (pytest-timeout, hypothesis, a name nobody knows as tooling) is kept.
func TestDeclarationsDevFileThroughTox(t *testing.T) {
	tr := treeOf(t, map[string]string{
		"tox.ini": "[tox]\nenvlist = py3\n[testenv]\ndeps =\n    -rrequirements-dev.txt\n    -r requirements/ci.txt\ncommands = pytest\n",
		"requirements-dev.txt": "-e .\nblack==23.9.1; implementation_name == 'cpython'\nbuild==1.0.3\nflake8==6.1.0\nmypy==1.5.1\n" +
			"Sphinx==7.2.6\nsphinx-rtd-theme\ntox-gh-actions==3.1.3\ntwine==4.0.2\nhypothesis\npytest-timeout\nwebencodings-extra\n" +
			"-r requirements-test.txt\n",
		"requirements-test.txt": "freezegun\nmypy\n",
		"requirements/ci.txt":   "pytest-xdist\nblack\n",
		"bleachish/__init__.py": "",
	})
	d, err := Declarations(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := Declared{
		Files:        []string{"tox.ini", "requirements-dev.txt", "requirements-test.txt", "requirements/ci.txt"},
		Requirements: []string{"hypothesis", "pytest-timeout", "webencodings-extra", "freezegun", "mypy", "pytest-xdist", "black"},
		Ignored:      []string{"requirements-dev.txt: -e ."},
		SetAside: []string{
			"black==23.9.1; implementation_name == 'cpython' (tooling in requirements-dev.txt)",
			"build==1.0.3 (tooling in requirements-dev.txt)", "flake8==6.1.0 (tooling in requirements-dev.txt)",
			"mypy==1.5.1 (tooling in requirements-dev.txt)", "Sphinx==7.2.6 (tooling in requirements-dev.txt)",
			"sphinx-rtd-theme (tooling in requirements-dev.txt)", "tox-gh-actions==3.1.3 (tooling in requirements-dev.txt)",
			"twine==4.0.2 (tooling in requirements-dev.txt)",
		},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Declarations (-want +got):\n%s", diff)
	}
}

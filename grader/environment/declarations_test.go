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
		"requirements.txt":      "# pinned\nattrs==23.1 # for tests\n--index-url https://elsewhere.example/simple\n-e .\nsix\\\n>=1.16\n",
		"requirements-dev.txt":  "attrs==23.1\nhypothesis\n",
		"requirements/test.txt": "pytest-timeout\n",
		"docs/requirements.txt": "sphinx\n",
		"pyproject.toml": `[project]
name = "x"
dependencies = ["idna>=3"]
[project.optional-dependencies]
test = ["coverage"]
docs = ["mkdocs"]
[dependency-groups]
base = ["packaging"]
dev = [{include-group = "base"}, "tomli; python_version < '3.11'"]
`,
		"setup.cfg": "[metadata]\nname = x\n[options]\ninstall_requires =\n    certifi\n    charset-normalizer>=2\n[options.extras_require]\ntesting =\n    mock\nspeedups = cchardet\n",
		"src/x.py":  "",
	})
	d, err := Declarations(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := Declared{
		Files:        []string{"requirements-dev.txt", "requirements.txt", "requirements/test.txt", "pyproject.toml", "setup.cfg"},
		Requirements: []string{"attrs==23.1", "hypothesis", "six>=1.16", "pytest-timeout", "idna>=3", "coverage", "packaging", "tomli; python_version < '3.11'", "certifi", "charset-normalizer>=2", "mock"},
		Ignored:      []string{"requirements.txt: --index-url https://elsewhere.example/simple", "requirements.txt: -e ."},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Declarations (-want +got):\n%s", diff)
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

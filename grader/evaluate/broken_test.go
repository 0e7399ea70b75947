package evaluate

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/tree"
)

// brokenOutput is what pytest printed for a hidden set with a module that
// cannot import a helper, one with a relative import and a test whose
// fixture does not exist.
const brokenOutput = `==================================== ERRORS ====================================
_______________________ ERROR collecting test_helper.py ________________________
ImportError while importing test module '/hidden/test_helper.py'.
Traceback:
/hidden/test_helper.py:2: in <module>
    from helpers import make_thing
E   ModuleNotFoundError: No module named 'helpers'
_______________________ ERROR collecting test_rel.py ________________________
/hidden/test_rel.py:1: in <module>
    from .utils import x
E   ImportError: attempted relative import with no known parent package
_________________________ ERROR at setup of test_loads _________________________
file /hidden/test_fixture.py, line 2
  def test_loads(load_file):
E       fixture 'load_file' not found
>       available fixtures: capfd, capsys
=========================== short test summary info ============================
`

func TestBrokenHidden(t *testing.T) {
	hidden := mustTree(t, tree.File{Path: "test_helper.py", Mode: 0o644}, tree.File{Path: "test_rel.py", Mode: 0o644}, tree.File{Path: "test_fixture.py", Mode: 0o644})
	base := mustTree(t, tree.File{Path: "calc.py", Mode: 0o644}, tree.File{Path: "tests/helpers.py", Mode: 0o644})
	withHelpers := mustTree(t, tree.File{Path: "calc.py", Mode: 0o644}, tree.File{Path: "helpers/__init__.py", Mode: 0o644})
	failed := []string{"test_helper.py", "test_rel.py"}
	broken := func() *Evaluation {
		ev := &Evaluation{}
		ev.importErrors, ev.missingFixtures = errorSections(brokenOutput, failed)
		return ev
	}
	fine := &Evaluation{}

	got := BrokenHidden([]*Evaluation{broken(), broken()}, []*tree.Tree{base, base}, hidden)
	want := []string{
		"hidden module test_helper.py fails to import on the base and on the tree under test: No module named 'helpers' (the repository has tests/helpers.py, which the hidden tests cannot import: add it to the hidden tests)",
		"hidden module test_rel.py fails to import on the base and on the tree under test: a relative import with no package around it (add the helper and an __init__.py to the hidden tests)",
		"fixture 'load_file' not found (asked for in test_fixture.py on the base and on the tree under test): put it in the hidden conftest.py",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("broken on base and tree (-want +got):\n%s", diff)
	}
	for _, r := range got {
		if strings.Contains(r, "make_thing") || strings.Contains(r, "capsys") {
			t.Errorf("reason %q carries text of the hidden test or the runner", r)
		}
	}
	if got := BrokenHidden([]*Evaluation{fine, broken()}, []*tree.Tree{base, base}, hidden); len(got) != 0 {
		t.Errorf("broken only on the tree under test: %q, want nothing (it is the pull request's failure)", got)
	}
	if got := BrokenHidden([]*Evaluation{broken(), broken(), fine}, []*tree.Tree{base, base, base}, hidden); len(got) != 0 {
		t.Errorf("the reference runs them: %q, want nothing", got)
	}
	// A module the tree under test provides is not missing by the task's
	// fault, whatever the runner printed.
	got = BrokenHidden([]*Evaluation{broken(), broken()}, []*tree.Tree{base, withHelpers}, hidden)
	if len(got) != 2 || strings.Contains(strings.Join(got, "\n"), "helpers'") {
		t.Errorf("the tree has helpers/: %q, want only the relative import and the fixture", got)
	}
	// A name a tree lacks is the pull request's to add.
	lacks := "_____ ERROR collecting test_helper.py _____\nE   ImportError: cannot import name 'new_function' from 'calc' (/repo/calc.py)\n"
	ev := &Evaluation{}
	ev.importErrors, ev.missingFixtures = errorSections(lacks, failed)
	if got := BrokenHidden([]*Evaluation{ev, ev}, []*tree.Tree{base, base}, hidden); len(got) != 0 {
		t.Errorf("a name the pull request must add: %q, want nothing", got)
	}
	// A module no tree has anywhere may be the new module the task asks
	// for: without a reference run, the base and an unfinished pull
	// request fail on it; a reference run that lacks it too says the
	// hidden set does.
	bare := mustTree(t, tree.File{Path: "calc.py", Mode: 0o644})
	helperOnly := func() *Evaluation {
		ev := &Evaluation{}
		ev.importErrors, ev.missingFixtures = errorSections(brokenOutput, []string{"test_helper.py"})
		return ev
	}
	if got := BrokenHidden([]*Evaluation{helperOnly(), helperOnly()}, []*tree.Tree{bare, bare}, hidden); slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "helpers'") }) {
		t.Errorf("a module no tree has, no reference: %q, want it left to the grade", got)
	}
	got = BrokenHidden([]*Evaluation{helperOnly(), helperOnly(), helperOnly()}, []*tree.Tree{bare, bare, bare}, hidden)
	if !slices.Contains(got, "hidden module test_helper.py fails to import on the base and on the tree under test: No module named 'helpers' (no tree nor the hidden set has it: add it to the hidden tests)") {
		t.Errorf("a module the reference lacks too: %q, want it named broken", got)
	}
	// Only modules the report says failed are read.
	ev = &Evaluation{}
	ev.importErrors, _ = errorSections(brokenOutput, nil)
	if len(ev.importErrors) != 0 {
		t.Errorf("sections of modules the report does not say failed: %v", ev.importErrors)
	}
}

// mustTree builds a tree of files, failing t on a bad one.
func mustTree(t *testing.T, files ...tree.File) *tree.Tree {
	t.Helper()
	tr, err := tree.New(files)
	if err != nil {
		t.Fatalf("tree.New: %v", err)
	}
	return tr
}

func TestImportFailureReasons(t *testing.T) {
	section := func(line string) string {
		return "ImportError while importing test module '/hidden/test_api.py'.\nTraceback:\n" + line + "\n"
	}
	notInstalled := section("E   ModuleNotFoundError: No module named 'yaml_helpers'")
	lacking := section("E   ImportError: cannot import name 'multiply' from 'calc' (/repo/calc/__init__.py)")
	repo, err := tree.New([]tree.File{{Path: "greet/core.py", Mode: 0o644, Data: []byte("import yaml_helpers\n")}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		pr, base map[string]string
		want     []string
	}{
		{
			name: "a module the tree imports is not installed",
			pr:   map[string]string{"test_api.py": notInstalled},
			want: []string{"hidden module test_api.py failed to import: ModuleNotFoundError: No module named 'yaml_helpers'"},
		},
		{
			name: "a name the tree lacks, the same on the base",
			pr:   map[string]string{"test_api.py": lacking}, base: map[string]string{"test_api.py": lacking},
			want: []string{"hidden module test_api.py failed to import: ImportError: cannot import name 'multiply' from 'calc'"},
		},
		{
			// Names the tree does not write and the base did not print
			// could be anything the run read: they are not echoed.
			name: "a cause only the run under test printed, in words the tree does not write",
			pr:   map[string]string{"test_api.py": lacking},
		},
		{
			name: "no cause in identifiers",
			pr:   map[string]string{"test_api.py": section("E   RuntimeError: boom")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base *Evaluation
			if tt.base != nil {
				base = &Evaluation{importErrors: tt.base}
			}
			got := ImportFailureReasons(&Evaluation{importErrors: tt.pr}, base, repo)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissingModules: the one spelling of Python's "No module named" both
// readers use. MissingModules finds it wherever a run says it, once per
// module; noModuleRe (a hidden module's import failure) only on the line
// of the exception pytest reports. Both take the same names.
func TestMissingModules(t *testing.T) {
	const output = "E   ModuleNotFoundError: No module named 'nosuchpkg'\n" +
		"FAILED tests/hidden/test_a.py::test_a - ModuleNotFoundError: No module named 'nosuchpkg'\n" +
		"E       ImportError: No module named 'yaml.cyaml'\n" +
		"Traceback (most recent call last):\nModuleNotFoundError: No module named 'from_a_subprocess'\n" +
		"ModuleNotFoundError: No module named 'not an identifier'\n"
	if diff := cmp.Diff([]string{"nosuchpkg", "yaml.cyaml", "from_a_subprocess"}, MissingModules(output)); diff != "" {
		t.Errorf("MissingModules (-want +got):\n%s", diff)
	}
	var reported []string
	for _, m := range noModuleRe.FindAllStringSubmatch(output, -1) {
		reported = append(reported, m[1])
	}
	if diff := cmp.Diff([]string{"nosuchpkg", "yaml.cyaml"}, reported); diff != "" {
		t.Errorf("noModuleRe (-want +got):\n%s", diff)
	}
	for _, name := range reported {
		if !slices.Contains(MissingModules(output), name) {
			t.Errorf("noModuleRe takes %q, MissingModules does not", name)
		}
	}
	if got := MissingModules("assert 1 == 2\nE   ImportError: cannot import name 'f' from 'm'\n"); len(got) != 0 {
		t.Errorf("MissingModules of a run without the message: %q", got)
	}
}

package grader

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/tree"
)

// The base's test context: conftest files above a hidden file, everything
// of its test directory but test modules, never a hidden path, a symlink,
// bytecode or a file past the bound.
func TestTestContextOf(t *testing.T) {
	f := func(p, data string) tree.File { return tree.File{Path: p, Mode: 0o644, Data: []byte(data)} }
	base := mustTree(t,
		f("conftest.py", "root"),
		f("setup.py", "no"),
		f("src/pkg/__init__.py", "no: the package under test"),
		f("src/pkg/core.py", "no"),
		f("src/pkg/conftest.py", "yes: above a hidden file"),
		f("src/pkg/tests/__init__.py", ""),
		f("src/pkg/tests/helpers.py", "yes"),
		f("src/pkg/tests/test_old.py", "no: a test module"),
		f("src/pkg/tests/old_test.py", "no: a test module"),
		f("src/pkg/tests/data/big.bin", strings.Repeat("x", 4000)),
		f("src/pkg/tests/data/small.json", "{}"),
		f("src/pkg/tests/__pycache__/helpers.cpython-311.pyc", "no"),
		f("src/pkg/tests/.hypothesis/db", "no"),
		f("src/pkg/tests/conftest.py", "replaced by the hidden one"),
		tree.File{Path: "src/pkg/tests/link.py", Mode: fs.ModeSymlink | 0o777, Link: "../core.py"},
		f("docs/conftest.py", "no: beside no hidden file"),
		f("testing/helpers.py", "no: no hidden file below"),
	)
	hidden := mustTree(t,
		f("src/pkg/tests/test_new.py", "hidden"),
		f("src/pkg/tests/conftest.py", "hidden"),
	)
	c := TestContextOf(base, hidden, 5*tarHeaderSize+100)
	want := []string{"conftest.py", "src/pkg/conftest.py", "src/pkg/tests/__init__.py", "src/pkg/tests/data/small.json", "src/pkg/tests/helpers.py"}
	if diff := cmp.Diff(want, c.Paths()); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"src/pkg/tests/data/big.bin"}, c.LeftOut); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	if c := TestContextOf(nil, hidden, 1<<20); len(c.Files) != 0 {
		t.Errorf("no base, context %v", c.Paths())
	}
}

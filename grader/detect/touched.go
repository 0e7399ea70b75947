package detect

import (
	"bytes"
	"path"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/tree"
)

// IsTestFile reports whether the slash-separated path p is a test file by
// pytest's conventions: test_*.py, *_test.py, conftest.py, or any file under
// a directory named tests or test at any depth.
func IsTestFile(p string) bool {
	base := path.Base(p)
	if base == "conftest.py" || IsTestModule(base) {
		return true
	}
	for _, d := range dirNames(p) {
		if d == "tests" || d == "test" {
			return true
		}
	}
	return false
}

// IsTestModule reports whether a file named name is a test module by
// pytest's default names: test_*.py or *_test.py.
func IsTestModule(name string) bool {
	return strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py"))
}

// TouchedTests returns the sorted paths of existing test files (by
// IsTestFile) of base that head changed or removed. A change is one of
// content, mode, kind (file or symlink) or symlink target. Test files that
// head adds are the implementer's own tests and are not listed. It returns
// nil when no test file was touched; a nil tree is treated as empty.
func TouchedTests(base, head *tree.Tree) []string {
	before := filesByPath(base)
	after := filesByPath(head)
	var touched []string
	for p, b := range before {
		if !IsTestFile(p) {
			continue
		}
		if h, ok := after[p]; !ok || !sameFile(b, h) {
			touched = append(touched, p)
		}
	}
	slices.Sort(touched)
	return touched
}

func filesByPath(t *tree.Tree) map[string]*tree.File {
	if t == nil {
		return nil
	}
	m := make(map[string]*tree.File, len(t.Files))
	for i := range t.Files {
		m[t.Files[i].Path] = &t.Files[i]
	}
	return m
}

// sameFile reports whether a and b have the same kind, mode, content and
// symlink target.
func sameFile(a, b *tree.File) bool {
	return a.Mode == b.Mode && a.Link == b.Link && bytes.Equal(a.Data, b.Data)
}

package grader

import (
	"cmp"
	"github.com/testfirst-app/testfirst/grader/detect"
	"path"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/tree"
)

// testDirNames are the names of the directories a repository keeps its
// tests in: the topmost one above a hidden file is its test directory.
var testDirNames = []string{"tests", "test", "testing"}

// tarHeaderSize is what one file costs in the input archive beside its
// data, counted against the context's bound.
const tarHeaderSize = 512

// TestContext is the base's own test support that a grade lays beside the
// hidden tests: the hidden files are written for the repository as it is,
// so its test helpers, fixtures and data must be there.
type TestContext struct {
	// Files are the base files laid in the hidden directory, by path.
	Files []tree.File
	// LeftOut are the base files that belong to the context but did not
	// fit in its bound, largest first kept out.
	LeftOut []string
}

// Paths lists the context's files.
func (c TestContext) Paths() []string {
	var ps []string
	for _, f := range c.Files {
		ps = append(ps, f.Path)
	}
	return ps
}

// TestContextOf is the base's test support for the hidden set, always
// from the base and never from the tree under test, so that nothing a
// pull request changes can hook the run:
//
//   - every conftest.py of a directory above or beside a hidden file, up
//     to the root of the repository;
//   - every other file under the test directory of a hidden file (the
//     topmost directory named tests, test or testing above it): packages,
//     helper modules, data files;
//
// but never a test module (test_*.py, *_test.py: only hidden tests are
// graded), a path the hidden set has (a hidden file replaces the base's),
// a symlink (it could point into the tree under test), bytecode or a file
// under a hidden directory (.git, .tox). The files are kept smallest first
// within limit bytes (archive headers counted); the rest are LeftOut.
func TestContextOf(base, hidden *tree.Tree, limit int64) TestContext {
	var c TestContext
	if base == nil || hidden == nil {
		return c
	}
	ancestors := map[string]bool{}
	var roots []string
	for _, f := range hidden.Files {
		dir := path.Dir(f.Path)
		for d := dir; ; d = path.Dir(d) {
			ancestors[d] = true
			if d == "." {
				break
			}
		}
		if root := testRoot(dir); root != "" && !slices.Contains(roots, root) {
			roots = append(roots, root)
		}
	}
	var picked []tree.File
	for _, f := range base.Files {
		if f.IsSymlink() || excludedFromContext(f.Path) {
			continue
		}
		if _, ok := hidden.Lookup(f.Path); ok {
			continue
		}
		dir, name := path.Split(f.Path)
		dir = cmp.Or(strings.TrimSuffix(dir, "/"), ".")
		inRoot := slices.ContainsFunc(roots, func(r string) bool { return strings.HasPrefix(f.Path, r+"/") })
		if (name == "conftest.py" && ancestors[dir]) || inRoot {
			picked = append(picked, f)
		}
	}
	slices.SortStableFunc(picked, func(a, b tree.File) int {
		return cmp.Or(cmp.Compare(len(a.Data), len(b.Data)), strings.Compare(a.Path, b.Path))
	})
	var used int64
	for _, f := range picked {
		size := int64(len(f.Data)) + tarHeaderSize
		if used+size > limit {
			c.LeftOut = append(c.LeftOut, f.Path)
			continue
		}
		used += size
		c.Files = append(c.Files, f)
	}
	slices.SortFunc(c.Files, func(a, b tree.File) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(c.LeftOut)
	return c
}

// testRoot is the topmost directory named like a test directory in dir,
// or "" when none is.
func testRoot(dir string) string {
	parts := strings.Split(dir, "/")
	for i, p := range parts {
		if slices.Contains(testDirNames, p) {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return ""
}

// excludedFromContext reports whether a base file never joins the
// context: test modules, bytecode, files under dot or cache directories.
func excludedFromContext(p string) bool {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		if strings.HasPrefix(d, ".") || d == "__pycache__" || d == "node_modules" {
			return true
		}
	}
	name := parts[len(parts)-1]
	return detect.IsTestModule(name) || strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".pyo")
}

// withContext is hidden with the context's files beside it: the tree the
// sandbox's hidden directory holds.
func withContext(hidden *tree.Tree, c TestContext) (*tree.Tree, error) {
	if len(c.Files) == 0 {
		return hidden, nil
	}
	return tree.New(slices.Concat(hidden.Files, c.Files))
}

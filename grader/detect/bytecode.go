package detect

import (
	"path"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/tree"
)

// WithoutBytecode returns a copy of t without compiled Python files: *.pyc,
// *.pyo and anything under a __pycache__ directory. It also returns the
// removed paths, sorted. The grader grades the sources a reviewer can read,
// never compiled files that could hide other code.
//
// The copy shares file contents with t; trees are never written to. A nil t
// is treated as an empty tree.
func WithoutBytecode(t *tree.Tree) (*tree.Tree, []string) {
	out := &tree.Tree{}
	if t == nil {
		return out, nil
	}
	out.Skipped = slices.Clone(t.Skipped)
	var removed []string
	for _, f := range t.Files {
		if isBytecode(f.Path) {
			removed = append(removed, f.Path)
			continue
		}
		out.Files = append(out.Files, f)
	}
	slices.Sort(removed)
	return out, removed
}

// isBytecode reports whether p is a compiled Python file or lies under a
// __pycache__ directory.
func isBytecode(p string) bool {
	return isCompiledPython(p) || underPycache(p)
}

// isCompiledPython reports whether p names a *.pyc or *.pyo file.
func isCompiledPython(p string) bool {
	ext := path.Ext(p)
	return ext == ".pyc" || ext == ".pyo"
}

// underPycache reports whether any directory on p is named __pycache__.
func underPycache(p string) bool {
	return slices.Contains(dirNames(p), "__pycache__")
}

// dirNames returns the directory components of the slash-separated path p,
// without its last element: "a/b/c.py" gives ["a", "b"].
func dirNames(p string) []string {
	dir := path.Dir(p)
	if dir == "." || dir == "/" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(dir, "/"), "/")
}

package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/tree"
)

// WriteTree writes tree below dir, symlinks as symlinks.
func WriteTree(dir string, tree *tree.Tree) error {
	for _, f := range tree.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if f.IsSymlink() {
			if err := os.Symlink(f.Link, p); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(p, f.Data, f.Mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// SampleHidden loads hidden tests from dir without their canary lines. The
// samples carry fixed canaries for grading without a store; a writer hands
// the store files without them, and the store adds its own.
func SampleHidden(t testing.TB, dir string) *tree.Tree {
	t.Helper()
	src, err := tree.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range src.Files {
		var kept []string
		for _, line := range strings.SplitAfter(string(f.Data), "\n") {
			if !strings.HasPrefix(line, "# testfirst-canary:") {
				kept = append(kept, line)
			}
		}
		src.Files[i].Data = []byte(strings.Join(kept, ""))
	}
	return src
}

package detect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/tree"
)

func TestWithoutBytecode(t *testing.T) {
	tests := []struct {
		name        string
		files       []tree.File
		wantPaths   []string
		wantRemoved []string
	}{
		{
			name:      "no bytecode",
			files:     []tree.File{detectorFile("pkg/mod.py", ""), detectorFile("README.md", "")},
			wantPaths: []string{"README.md", "pkg/mod.py"},
		},
		{
			name: "compiled files and caches",
			files: []tree.File{
				detectorFile("pkg/mod.py", ""),
				detectorFile("pkg/mod.pyc", ""),
				detectorFile("legacy.pyo", ""),
				detectorFile("pkg/__pycache__/mod.cpython-312.pyc", ""),
				detectorFile("pkg/__pycache__/stray.py", ""),
				detectorLink("__pycache__/link", "../pkg/mod.py"),
				detectorFile("pyc.py", ""),
				detectorFile("pkg/__pycache__.py", ""),
			},
			wantPaths:   []string{"pkg/__pycache__.py", "pkg/mod.py", "pyc.py"},
			wantRemoved: []string{"__pycache__/link", "legacy.pyo", "pkg/__pycache__/mod.cpython-312.pyc", "pkg/__pycache__/stray.py", "pkg/mod.pyc"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := detectorTree(t, tt.files...)
			before := in.Digest()
			got, removed := WithoutBytecode(in)
			if diff := cmp.Diff(tt.wantPaths, pathsOf(got.Files)); diff != "" {
				t.Errorf("kept paths mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRemoved, removed); diff != "" {
				t.Errorf("removed mismatch (-want +got):\n%s", diff)
			}
			if in.Digest() != before {
				t.Error("WithoutBytecode changed its input")
			}
		})
	}
}

func TestWithoutBytecodeKeepsSkipped(t *testing.T) {
	in := &tree.Tree{Files: []tree.File{detectorFile("a.pyc", "")}, Skipped: []string{".git"}}
	got, _ := WithoutBytecode(in)
	if diff := cmp.Diff([]string{".git"}, got.Skipped); diff != "" {
		t.Errorf("Skipped mismatch (-want +got):\n%s", diff)
	}
	got.Skipped[0] = "changed"
	if in.Skipped[0] != ".git" {
		t.Error("the copy shares Skipped with its input")
	}
}

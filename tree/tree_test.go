package tree

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadTree(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeTestFile(t, outside, "outside content\n", 0o644)

	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "calc.py"), "X = 1\n", 0o644)
	writeTestFile(t, filepath.Join(dir, "bin/run"), "#!/bin/sh\n", 0o755)
	writeTestFile(t, filepath.Join(dir, "private.txt"), "p\n", 0o600)
	writeTestFile(t, filepath.Join(dir, ".git/HEAD"), "ref: refs/heads/main\n", 0o644)
	writeTestFile(t, filepath.Join(dir, ".git/objects/ab/cdef"), "blob", 0o444)
	writeTestFile(t, filepath.Join(dir, "vendor/lib/.git"), "gitdir: ../../.git/modules/lib\n", 0o644)
	writeTestFile(t, filepath.Join(dir, "vendor/lib/lib.py"), "LIB = 1\n", 0o644)
	writeTestFile(t, filepath.Join(dir, ".gitignore"), "*.pyc\n", 0o644)
	if err := os.MkdirAll(filepath.Join(dir, "empty/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A socket is neither a file nor a symlink: it is skipped.
	sock, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	for link, target := range map[string]string{
		"alias.py":     "calc.py",
		"leak.txt":     outside,
		"dangling":     "no/such/file",
		"vendor/up.py": "../calc.py",
		"bindir":       "bin",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}

	got, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	link := fs.ModeSymlink | 0o777
	want := &Tree{
		Files: []File{
			{Path: ".gitignore", Mode: 0o644, Data: []byte("*.pyc\n")},
			{Path: "alias.py", Mode: link, Link: "calc.py"},
			{Path: "bin/run", Mode: 0o755, Data: []byte("#!/bin/sh\n")},
			{Path: "bindir", Mode: link, Link: "bin"},
			{Path: "calc.py", Mode: 0o644, Data: []byte("X = 1\n")},
			{Path: "dangling", Mode: link, Link: "no/such/file"},
			{Path: "leak.txt", Mode: link, Link: outside},
			{Path: "private.txt", Mode: 0o600, Data: []byte("p\n")},
			{Path: "vendor/lib/lib.py", Mode: 0o644, Data: []byte("LIB = 1\n")},
			{Path: "vendor/up.py", Mode: link, Link: "../calc.py"},
		},
		Skipped: []string{".git", "sock", "vendor/lib/.git"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	if f, ok := got.Lookup("leak.txt"); !ok || len(f.Data) != 0 {
		t.Errorf("the symlink to a file outside the tree was read: %+v", f)
	}
}

func TestLoadTreeRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	writeTestFile(t, file, "x", 0o644)
	for _, tt := range []struct {
		name    string
		dir     string
		wantErr string
	}{
		{name: "a file", dir: file, wantErr: "not a directory"},
		{name: "a missing directory", dir: filepath.Join(dir, "missing"), wantErr: "no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.dir) {
				t.Errorf("Load(%s) = %v, %v, want an error naming it and containing %q", tt.dir, got, err, tt.wantErr)
			}
		})
	}
}

// TestLoadTreeSymlinkRoot: a root that is a symlink to a directory passes
// the os.Stat check, so it must be read as that directory or refused, never
// read as an empty tree.
func TestLoadTreeSymlinkRoot(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "real/calc.py"), "X = 1\n", 0o644)
	root := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "real"), root); err != nil {
		t.Fatal(err)
	}
	got, err := Load(root)
	if err == nil && len(got.Files) == 0 {
		t.Errorf("Load(symlink to a directory) = an empty tree, no error")
	}
}

func TestNewTree(t *testing.T) {
	tests := []struct {
		name    string
		paths   []string
		wantErr string
	}{
		{name: "clean relative paths", paths: []string{"b.py", "a/c.py", "a/b/..x"}},
		{name: "empty", paths: []string{""}, wantErr: "empty path"},
		{name: "dot", paths: []string{"."}, wantErr: "empty path"},
		{name: "absolute", paths: []string{"/etc/passwd"}, wantErr: "is absolute"},
		{name: "dot dot", paths: []string{".."}, wantErr: "leaves the tree"},
		{name: "leaves the tree", paths: []string{"../x.py"}, wantErr: "leaves the tree"},
		{name: "dot dot inside", paths: []string{"a/../../x.py"}, wantErr: "not clean"},
		{name: "dot dot that stays", paths: []string{"a/../x.py"}, wantErr: "not clean"},
		{name: "dot segment", paths: []string{"./x.py"}, wantErr: "not clean"},
		{name: "double slash", paths: []string{"a//x.py"}, wantErr: "not clean"},
		{name: "trailing slash", paths: []string{"a/"}, wantErr: "not clean"},
		{name: "duplicate", paths: []string{"a.py", "b.py", "a.py"}, wantErr: `path "a.py" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files []File
			for _, p := range tt.paths {
				files = append(files, File{Path: p, Mode: 0o644, Data: []byte(p)})
			}
			got, err := New(files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%q) = %v, %v, want an error containing %q", tt.paths, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q): %v", tt.paths, err)
			}
			var paths []string
			for _, f := range got.Files {
				paths = append(paths, f.Path)
			}
			want := slices.Sorted(slices.Values(tt.paths))
			if diff := cmp.Diff(want, paths); diff != "" {
				t.Errorf("New paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewTreeDoesNotKeepTheCallersSlice(t *testing.T) {
	files := []File{{Path: "b.py", Mode: 0o644}, {Path: "a.py", Mode: 0o644}}
	tree, err := New(files)
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Path != "b.py" {
		t.Errorf("New sorted its caller's slice: %v", files)
	}
	files[1].Path = "z.py"
	if _, ok := tree.Lookup("a.py"); !ok {
		t.Errorf("a change to the caller's slice reached the tree")
	}
}

func TestTreeDigest(t *testing.T) {
	files := func() []File {
		return []File{
			{Path: "a.py", Mode: 0o644, Data: []byte("A = 1\n")},
			{Path: "b/c.py", Mode: 0o755, Data: []byte("C = 1\n")},
			{Path: "l", Mode: fs.ModeSymlink | 0o777, Link: "a.py"},
		}
	}
	base := mustTree(t, files()...).Digest()
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("Digest = %q, want sha256:<64 hex>", base)
	}
	reversed := files()
	slices.Reverse(reversed)
	if got := mustTree(t, reversed...).Digest(); got != base {
		t.Errorf("Digest depends on the order files were given: %s != %s", got, base)
	}

	edits := []struct {
		name string
		edit func([]File) []File
	}{
		{"one byte of content", func(f []File) []File { f[0].Data = []byte("A = 2\n"); return f }},
		{"a mode", func(f []File) []File { f[1].Mode = 0o644; return f }},
		{"a symlink target", func(f []File) []File { f[2].Link = "b/c.py"; return f }},
		{"a path", func(f []File) []File { f[0].Path = "a2.py"; return f }},
		{"a file removed", func(f []File) []File { return f[1:] }},
		{"a file added", func(f []File) []File { return append(f, File{Path: "d.py", Mode: 0o644}) }},
		{"a symlink made a file holding its target", func(f []File) []File {
			f[2] = File{Path: "l", Mode: 0o777, Data: []byte("a.py")}
			return f
		}},
		{"content moved between files", func(f []File) []File {
			f[0].Data, f[1].Data = []byte("A = 1\nC"), []byte(" = 1\n")
			return f
		}},
	}
	seen := map[string]string{base: "the base"}
	for _, e := range edits {
		got := mustTree(t, e.edit(files())...).Digest()
		if prev, ok := seen[got]; ok {
			t.Errorf("Digest after %s = %s, the same as after %s", e.name, got, prev)
		}
		seen[got] = e.name
	}
}

func TestTreeDigestOfLoadedTree(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a.py"), "A = 1\n", 0o644)
	writeTestFile(t, filepath.Join(dir, "b/c.py"), "C = 1\n", 0o755)
	if err := os.Symlink("a.py", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	built := mustTree(t,
		File{Path: "l", Mode: fs.ModeSymlink | 0o777, Link: "a.py"},
		File{Path: "b/c.py", Mode: 0o755, Data: []byte("C = 1\n")},
		File{Path: "a.py", Mode: 0o644, Data: []byte("A = 1\n")},
	)
	if loaded.Digest() != built.Digest() {
		t.Errorf("a loaded tree's digest %s differs from the same tree built in memory %s", loaded.Digest(), built.Digest())
	}
	if loaded.Size() != int64(len("A = 1\nC = 1\n")) {
		t.Errorf("Size = %d, want %d", loaded.Size(), len("A = 1\nC = 1\n"))
	}
}

func TestTreeLookup(t *testing.T) {
	tree := mustTree(t,
		File{Path: "pkg/mod.py", Mode: 0o644, Data: []byte("M")},
		File{Path: "a.py", Mode: 0o644, Data: []byte("A")},
		File{Path: "pkg/sub/x.py", Mode: 0o644, Data: []byte("X")},
		File{Path: "z", Mode: fs.ModeSymlink | 0o777, Link: "a.py"},
	)
	for _, tt := range []struct {
		path string
		want string // Data or Link; "" when absent
	}{
		{"a.py", "A"},
		{"pkg/mod.py", "M"},
		{"pkg/sub/x.py", "X"},
		{"z", "a.py"},
		{"pkg", ""},
		{"pkg/sub", ""},
		{"b.py", ""},
		{"", ""},
	} {
		f, ok := tree.Lookup(tt.path)
		switch {
		case tt.want == "" && ok:
			t.Errorf("Lookup(%q) = %+v, want none", tt.path, f)
		case tt.want != "" && !ok:
			t.Errorf("Lookup(%q) found nothing, want %q", tt.path, tt.want)
		case ok && f.Path != tt.path:
			t.Errorf("Lookup(%q) = %q", tt.path, f.Path)
		case ok && string(f.Data)+f.Link != tt.want:
			t.Errorf("Lookup(%q) = %q, want %q", tt.path, string(f.Data)+f.Link, tt.want)
		}
	}
}

func writeTestFile(t *testing.T, p, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

package tree

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// patchBase is the base tree the literal patches of TestApplyPatch apply to.
func patchBase(t *testing.T) *Tree {
	t.Helper()
	return mustTree(t,
		File{Path: "calc.py", Mode: 0o644, Data: []byte("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")},
		File{Path: "old.py", Mode: 0o644, Data: []byte("OLD = True\n")},
		File{Path: "run.sh", Mode: 0o644, Data: []byte("#!/bin/sh\nexit 0\n")},
		File{Path: "link.py", Mode: fs.ModeSymlink | 0o777, Link: "calc.py"},
	)
}

// patchedFiles is patchBase's files with edits: a File with a nil Data and
// no Link removes the path, any other replaces or adds it.
func patchedFiles(t *testing.T, edits ...File) []File {
	t.Helper()
	byPath := map[string]File{}
	for _, f := range patchBase(t).Files {
		byPath[f.Path] = f
	}
	for _, e := range edits {
		if e.Data == nil && e.Link == "" {
			delete(byPath, e.Path)
			continue
		}
		byPath[e.Path] = e
	}
	var files []File
	for _, f := range byPath {
		files = append(files, f)
	}
	return mustTree(t, files...).Files
}

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name    string
		patch   string
		want    []File
		wantErr []string
	}{
		{
			name: "modify",
			patch: `diff --git a/calc.py b/calc.py
index 3b18e51..8c1d6a2 100644
--- a/calc.py
+++ b/calc.py
@@ -1,5 +1,5 @@
 def add(a, b):
-    return a - b
+    return a + b
 
 
 def sub(a, b):
`,
			want: patchedFiles(t, File{Path: "calc.py", Mode: 0o644, Data: []byte("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")}),
		},
		{
			name: "add an executable",
			patch: `diff --git a/bin/tool b/bin/tool
new file mode 100755
index 0000000..1d2f3a4
--- /dev/null
+++ b/bin/tool
@@ -0,0 +1,2 @@
+#!/bin/sh
+echo tool
`,
			want: patchedFiles(t, File{Path: "bin/tool", Mode: 0o755, Data: []byte("#!/bin/sh\necho tool\n")}),
		},
		{
			name: "add an empty file",
			patch: `diff --git a/pkg/__init__.py b/pkg/__init__.py
new file mode 100644
index 0000000..e69de29
`,
			want: patchedFiles(t, File{Path: "pkg/__init__.py", Mode: 0o644, Data: []byte{}}),
		},
		{
			name: "delete",
			patch: `diff --git a/old.py b/old.py
deleted file mode 100644
index 0f3c5a1..0000000
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-OLD = True
`,
			want: patchedFiles(t, File{Path: "old.py"}),
		},
		{
			name: "rename",
			patch: `diff --git a/old.py b/pkg/new.py
similarity index 100%
rename from old.py
rename to pkg/new.py
`,
			want: patchedFiles(t, File{Path: "old.py"}, File{Path: "pkg/new.py", Mode: 0o644, Data: []byte("OLD = True\n")}),
		},
		{
			name: "rename with a change",
			patch: `diff --git a/old.py b/new.py
similarity index 60%
rename from old.py
rename to new.py
index 0f3c5a1..5d1e2b3 100644
--- a/old.py
+++ b/new.py
@@ -1 +1 @@
-OLD = True
+OLD = False
`,
			want: patchedFiles(t, File{Path: "old.py"}, File{Path: "new.py", Mode: 0o644, Data: []byte("OLD = False\n")}),
		},
		{
			name: "mode change",
			patch: `diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
`,
			want: patchedFiles(t, File{Path: "run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\nexit 0\n")}),
		},
		{
			name: "conflict",
			patch: `diff --git a/calc.py b/calc.py
index 3b18e51..8c1d6a2 100644
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a * b
+    return a + b
`,
			wantErr: []string{"apply patch to calc.py"},
		},
		{
			name: "a file the base does not have",
			patch: `diff --git a/nope.py b/nope.py
index 3b18e51..8c1d6a2 100644
--- a/nope.py
+++ b/nope.py
@@ -1 +1 @@
-a
+b
`,
			wantErr: []string{"apply patch to nope.py: no such file in the base tree"},
		},
		{
			name:    "not a patch",
			patch:   "Please make add() add.\n",
			wantErr: []string{"parse patch: no file changes found"},
		},
		{
			name:    "empty",
			patch:   "",
			wantErr: []string{"parse patch: no file changes found"},
		},
		{
			name: "malformed header",
			patch: `diff --git a/run.sh b/run.sh
old mode banana
new mode 100755
`,
			wantErr: []string{"parse patch"},
		},
		{
			name: "a symlink",
			patch: `diff --git a/link.py b/link.py
index 1d2f3a4..5e6f7a8 120000
--- a/link.py
+++ b/link.py
@@ -1 +1 @@
-calc.py
\ No newline at end of file
+/etc/passwd
\ No newline at end of file
`,
			wantErr: []string{"apply patch to link.py: ", "symlink"},
		},
		{
			name: "binary",
			patch: `diff --git a/calc.py b/calc.py
index 3b18e51..8c1d6a2 100644
Binary files a/calc.py and b/calc.py differ
`,
			wantErr: []string{"apply patch to calc.py: binary patches are not supported"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := patchBase(t)
			before := base.Digest()
			got, err := ApplyPatch(base, []byte(tt.patch))
			if base.Digest() != before {
				t.Errorf("ApplyPatch changed its base tree")
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("ApplyPatch = %+v, want an error", got.Files)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("ApplyPatch error = %q, want it to contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyPatch: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Files, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("patched files (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyPatchGitDiff applies what git diff writes for a commit that
// modifies, adds, deletes, renames and chmods files, and checks the result
// against the tree git left on disk.
func TestApplyPatchGitDiff(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; TestApplyPatch covers the same changes with literal patches")
	}
	dir := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
			"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	write := func(p, data string, mode fs.FileMode) { writeTestFile(t, filepath.Join(dir, p), data, mode) }
	long := strings.Repeat("# a comment line that makes rename detection sure\n", 20)

	write("calc.py", "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n", 0o644)
	write("old.py", "OLD = True\n", 0o644)
	write("moved.py", long+"MOVED = 1\n", 0o644)
	write("edited.py", long+"EDITED = 1\n", 0o644)
	write("run.sh", "#!/bin/sh\nexit 0\n", 0o644)
	if err := os.Symlink("calc.py", filepath.Join(dir, "link.py")); err != nil {
		t.Fatal(err)
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	base, err := Load(dir)
	if err != nil {
		t.Fatalf("Load base: %v", err)
	}

	write("calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n", 0o644)
	write("bin/tool", "#!/bin/sh\necho tool\n", 0o755)
	write("pkg/new.py", "NEW = 1\n", 0o644)
	if err := os.Remove(filepath.Join(dir, "old.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "moved.py"), filepath.Join(dir, "pkg/moved.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "edited.py")); err != nil {
		t.Fatal(err)
	}
	write("pkg/edited.py", long+"EDITED = 2\n", 0o644)
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	patch := run("diff", "--cached", "-M", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/")
	for _, want := range []string{"rename from moved.py", "rename from edited.py", "new file mode 100755", "deleted file mode", "new mode 100755"} {
		if !strings.Contains(string(patch), want) {
			t.Fatalf("git diff has no %q; the test needs it:\n%s", want, patch)
		}
	}
	want, err := Load(dir)
	if err != nil {
		t.Fatalf("Load head: %v", err)
	}

	got, err := ApplyPatch(base, patch)
	if err != nil {
		t.Fatalf("ApplyPatch: %v\n%s", err, patch)
	}
	if diff := cmp.Diff(want.Files, got.Files, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("patched tree (-git's +ApplyPatch's):\n%s", diff)
	}
	if got.Digest() != want.Digest() {
		t.Errorf("patched tree digest = %s, want git's %s", got.Digest(), want.Digest())
	}
}

// TestApplyPatchNewFileOverExisting: git apply refuses to create a file that
// already exists; ApplyPatch must not silently replace it.
func TestApplyPatchNewFileOverExisting(t *testing.T) {
	patch := `diff --git a/old.py b/old.py
new file mode 100644
index 0000000..1d2f3a4
--- /dev/null
+++ b/old.py
@@ -0,0 +1 @@
+NEW = True
`
	got, err := ApplyPatch(patchBase(t), []byte(patch))
	if err == nil || !strings.Contains(err.Error(), "old.py") {
		t.Errorf("ApplyPatch = %v, %v, want an error naming old.py", got, err)
	}
}

// TestApplyPatchNewSymlink: a patch that adds a symlink (mode 120000) must
// give a symlink or an error, not a regular file holding the target.
func TestApplyPatchNewSymlink(t *testing.T) {
	patch := `diff --git a/alias.py b/alias.py
new file mode 120000
index 0000000..1d2f3a4
--- /dev/null
+++ b/alias.py
@@ -0,0 +1 @@
+calc.py
\ No newline at end of file
`
	got, err := ApplyPatch(patchBase(t), []byte(patch))
	if err != nil {
		return // refusing the symlink is fine
	}
	f, ok := got.Lookup("alias.py")
	if !ok || !f.IsSymlink() || f.Link != "calc.py" {
		t.Errorf("alias.py = %+v, want a symlink to calc.py", f)
	}
}

func mustTree(t *testing.T, files ...File) *Tree {
	t.Helper()
	tr, err := New(files)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tr
}

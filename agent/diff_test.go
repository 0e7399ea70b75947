package agent

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/tree"
)

// TestUnifiedDiffApplies: the patch of a set of changes, applied to the
// base by git apply, gives the changed tree: edits at the start, middle and
// end of files, files added, deleted, made executable, without a final
// newline, binary, and a symlink.
func TestUnifiedDiffApplies(t *testing.T) {
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprintf("line %d", i))
	}
	longText := strings.Join(long, "\n") + "\n"
	edited := strings.Replace(strings.Replace(strings.Replace(longText, "line 0\n", "first\n", 1), "line 20\n", "middle\nmore\n", 1), "line 39\n", "", 1)
	base, err := tree.New([]tree.File{
		{Path: "long.txt", Mode: 0o644, Data: []byte(longText)},
		{Path: "gone.py", Mode: 0o644, Data: []byte("x = 1\n")},
		{Path: "run.sh", Mode: 0o644, Data: []byte("echo hi\n")},
		{Path: "nonl.txt", Mode: 0o644, Data: []byte("a\nb")},
		{Path: "same.txt", Mode: 0o644, Data: []byte("same\n")},
		{Path: "bin.dat", Mode: 0o644, Data: []byte("\x00\x01")},
	})
	if err != nil {
		t.Fatal(err)
	}
	changes := []Change{
		{Path: "bin.dat", Content: []byte("\x00\x02")},
		{Path: "gone.py", Deleted: true},
		{Path: "link", Content: []byte("long.txt"), Symlink: true},
		{Path: "long.txt", Content: []byte(edited)},
		{Path: "new/mod.py", Content: []byte("def f():\n    return 2\n")},
		{Path: "nonl.txt", Content: []byte("a\nc")},
		{Path: "run.sh", Content: []byte("echo hi\n"), Executable: true},
	}
	patch := unifiedDiff(base, changes)
	dir := t.TempDir()
	for _, f := range base.Files {
		p := filepath.Join(dir, f.Path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
			t.Fatal(err)
		}
	}
	// Binary hunks need git's binary patches; leave that file out of the
	// check and expect only its marker.
	if !bytes.Contains(patch, []byte("Binary files a/bin.dat and b/bin.dat differ\n")) {
		t.Errorf("binary change not marked:\n%s", patch)
	}
	text := patch[:bytes.Index(patch, []byte("diff --git a/gone.py"))]
	text = append(bytes.TrimPrefix(patch, text), nil...)
	cmd := exec.Command("git", "apply", "--verbose", "-")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(text)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, text)
	}
	got, err := tree.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bin.dat": "\x00\x01", "long.txt": edited, "new/mod.py": "def f():\n    return 2\n", "nonl.txt": "a\nc", "run.sh": "echo hi\n", "same.txt": "same\n", "link": "->long.txt"}
	for _, f := range got.Files {
		data := string(f.Data)
		if f.IsSymlink() {
			data = "->" + f.Link
		}
		if want[f.Path] != data {
			t.Errorf("%s after git apply = %q, want %q", f.Path, data, want[f.Path])
		}
		if f.Path == "run.sh" && f.Mode&0o111 == 0 {
			t.Error("run.sh not made executable")
		}
		delete(want, f.Path)
	}
	if len(want) > 0 {
		t.Errorf("missing after git apply: %v", want)
	}
	if bytes.Contains(patch, []byte("same.txt")) {
		t.Error("an unchanged file is in the patch")
	}
	if n := bytes.Count(patch, []byte("\n@@ ")); n != 7 {
		t.Errorf("%d hunks, want 3 in long.txt, 1 each in gone.py, link, new/mod.py and nonl.txt:\n%s", n, patch)
	}
	if !bytes.Contains(patch, []byte("@@ -1,4 +1,4 @@\n-line 0\n+first\n")) {
		t.Errorf("removed lines come before added ones, as git writes them:\n%s", patch)
	}
}

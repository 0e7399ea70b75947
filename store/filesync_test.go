package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// syncChildEnv makes TestFileStoreSyncsItsDirectories's child create one
// object in the directory it names.
const syncChildEnv = "TESTFIRST_STORE_SYNC_CHILD"

// TestFileStoreSyncsItsDirectories: an object is durable once Create
// returns, also across a power loss: its file is synced before it is
// linked, and after the link the directory that holds the new name, and
// every directory Create made on the way and their parents, are synced
// too (a name lives in its directory, which fsync of the file does not
// write). Watched with strace on a child process creating one object.
func TestFileStoreSyncsItsDirectories(t *testing.T) {
	if dir := os.Getenv(syncChildEnv); dir != "" {
		b, err := NewFileBlobs(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Create(context.Background(), "o/r/12/v1/tests.age", []byte("sealed")); err != nil {
			t.Fatal(err)
		}
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: the directory syncs cannot be watched (apt-get install strace)")
	}
	root := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "o"), 0o700); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,link,linkat", "-o", trace,
		os.Args[0], "-test.run=^TestFileStoreSyncsItsDirectories$", "-test.count=1")
	cmd.Env = append(os.Environ(), syncChildEnv+"="+root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace: %v\n%s", err, out)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var synced []string
	linked := false
	sync := regexp.MustCompile(`f(?:data)?sync\(\d+<([^>]*)>\)\s*=\s*0`)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "link") && strings.Contains(line, "tests.age") && strings.HasSuffix(strings.TrimSpace(line), "= 0") {
			linked = true
			continue
		}
		if m := sync.FindStringSubmatch(line); m != nil && linked {
			synced = append(synced, m[1])
		}
	}
	if !linked {
		t.Fatalf("no link of the object in the trace:\n%s", data)
	}
	// o existed; r, 12 and v1 were made by Create.
	for _, dir := range []string{"o/r/12/v1", "o/r/12", "o/r", "o"} {
		want := filepath.Join(root, filepath.FromSlash(dir))
		found := false
		for _, s := range synced {
			found = found || s == want
		}
		if !found {
			t.Errorf("%s is not synced after the link (synced after it: %q)", dir, synced)
		}
	}
}

package wrapper

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirRuleInspect checks what the wrapper reports of a directory: its
// owner and mode against the rule, and for the hidden tests' directory
// every entry below it.
func TestDirRuleInspect(t *testing.T) {
	uid := os.Getuid()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "test_x.py"), []byte("def test_x(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rule := dirRule{path: dir, owners: []ownerMode{{uid, 0o755}}}
	if d := rule.inspect(true); !d.Sealed || d.Mode != "0755" || d.UID != uid || len(d.Problems) != 0 {
		t.Fatalf("a sealed directory: %+v", d)
	}

	// The kubelet's emptyDir: mode 0777, no sticky bit.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	d := rule.inspect(true)
	if d.Sealed || d.Mode != "0777" || len(d.Problems) != 1 || !strings.Contains(d.Problems[0], "mode 0777") {
		t.Errorf("a directory of mode 0777: %+v", d)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// Sticky and setgid bits count: 1755 is not 0755.
	if err := os.Chmod(dir, 0o755|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if d := rule.inspect(false); d.Sealed || d.Mode != "1755" {
		t.Errorf("a directory of mode 1755: %+v", d)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// An entry the test uid could write: a group-writable file, then a
	// world-writable directory.
	if err := os.Chmod(filepath.Join(dir, "pkg", "test_x.py"), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "pkg"), 0o777); err != nil {
		t.Fatal(err)
	}
	d = rule.inspect(true)
	if d.Sealed || len(d.Problems) != 2 || !strings.Contains(d.Problems[0], "pkg: ") || !strings.Contains(d.Problems[1], "test_x.py: ") {
		t.Errorf("writable entries: %+v", d)
	}
	if d := rule.inspect(false); !d.Sealed {
		t.Errorf("without entries, the directory alone is sealed: %+v", d)
	}

	// Two owners allowed (the tree's directory under the uid split).
	repo := dirRule{path: dir, owners: []ownerMode{{uid + 1, 0o755}, {uid, 0o1777}}}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if d := repo.inspect(false); !d.Sealed || d.Want != fmt.Sprintf("owner %d, mode 0755, or owner %d, mode 1777", uid+1, uid) {
		t.Errorf("root-owned 1777 where it may be: %+v", d)
	}

	missing := dirRule{path: filepath.Join(dir, "absent"), owners: []ownerMode{{uid, 0o755}}}
	if d := missing.inspect(false); d.Sealed || len(d.Problems) == 0 {
		t.Errorf("a missing directory: %+v", d)
	}
}

// TestDirRules pins what the wrapper wants of its directories.
func TestDirRules(t *testing.T) {
	wants := func(id identity) map[string]string {
		m := map[string]string{}
		for _, r := range dirRules(id) {
			m[r.path] = r.want()
		}
		return m
	}
	split := wants(identity{split: true, uid: 123456})
	if split[HiddenDir] != "owner 0, mode 0755" || split[TmpDir] != "owner 0, mode 1777" ||
		split[RepoDir] != "owner 123456, mode 0755, or owner 0, mode 1777" {
		t.Errorf("under the uid split: %v", split)
	}
	if none := wants(identity{}); none[RepoDir] != "owner 0, mode 0755" {
		t.Errorf("without the uid split: %v", none)
	}
}

package store

import (
	"context"
	"os"
	"testing"
)

// The canaries of a rejected version are found beside the approved
// one's: an implementer that hands back either is contaminated.
func TestReaderCanariesOfEveryVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := NewFileBlobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, r := openStore(t, b, newKeys(t))
	v1, err := w.Push(ctx, ticket, draft("writer:our-writer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Reject(ctx, ticket, 1, v1.Digest, "alice", "too weak"); err != nil {
		t.Fatal(err)
	}
	v2, err := w.Push(ctx, ticket, draft("writer:our-writer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Approve(ctx, ticket, 2, v2.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	c2, _, err := r.Open(ctx, ticket, v2.Digest)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.Canaries(ctx, ticket)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, c := range cs {
		files[c.HiddenFile] = c.Token
	}
	if len(cs) != 4 || files["tests/test_calc.py (v1)"] == "" || files["tests/test_script.py (v2)"] != c2.Canary() ||
		files["tests/test_calc.py (v1)"] == c2.Canary() {
		t.Errorf("canaries %+v; want both Python files of v1 and of v2, each version its own token", cs)
	}
}

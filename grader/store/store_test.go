package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"
)

// backend is a Blobs under test plus a way to change a stored object
// behind the store's back, as someone with write access to the bucket
// could.
type backend struct {
	blobs  Blobs
	tamper func(t *testing.T, name string, change func([]byte) []byte)
}

type keys struct {
	grader, card     *age.X25519Identity
	graderR, cardR   []age.Recipient
	graderID, cardID []age.Identity
}

func newKeys(t *testing.T) keys {
	t.Helper()
	g, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	c, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return keys{grader: g, card: c, graderR: []age.Recipient{g.Recipient()}, cardR: []age.Recipient{c.Recipient()},
		graderID: []age.Identity{g}, cardID: []age.Identity{c}}
}

func openStore(t *testing.T, b Blobs, k keys) (*Writer, *Reader) {
	t.Helper()
	w, err := NewWriter(b, k.graderR, k.cardR, k.cardID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(b, k.graderID)
	if err != nil {
		t.Fatal(err)
	}
	return w, r
}

const testBody = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

func draft(author string) Draft {
	return Draft{
		Files: []File{
			{Path: "tests/test_calc.py", Data: []byte(testBody)},
			{Path: "tests/data/cases.json", Data: []byte(`{"a": 1}`)},
			{Path: "tests/test_script.py", Data: []byte("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\ndef test_x():\n    pass\n")},
		},
		Criteria:  map[string][]string{"adds numbers": {"tests/test_calc.py::test_add"}},
		Reference: []byte("--- a/calc.py\n+++ b/calc.py\n"),
		Author:    author,
	}
}

var ticket = Ticket{Installation: 42, Owner: "octo-org", Repo: "widgets", Issue: 12}

// testStoreContract runs the store's behaviour against one backend.
func testStoreContract(t *testing.T, open func(t *testing.T) backend) {
	ctx := context.Background()

	t.Run("push adds canaries and binds a digest", func(t *testing.T) {
		b := open(t)
		k := newKeys(t)
		w, r := openStore(t, b.blobs, k)
		v, err := w.Push(ctx, ticket, draft("alice"))
		if err != nil {
			t.Fatal(err)
		}
		if v.Number != 1 || v.State != StatePending || !strings.HasPrefix(v.Digest, "sha256:") || len(v.Digest) != 71 || !strings.HasPrefix(v.Canary, "tfc-") {
			t.Errorf("version = %+v", v)
		}
		if _, err := w.Approve(ctx, ticket, 1, v.Digest, "alice"); err != nil {
			t.Fatal(err)
		}
		c, got, err := r.Open(ctx, ticket, v.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if got.Number != 1 || got.State != StateApproved {
			t.Errorf("opened %+v", got)
		}
		if c.Digest() != v.Digest {
			t.Errorf("recomputed digest %s, stored %s", c.Digest(), v.Digest)
		}
		line := canaryPrefix + v.Canary + "\n"
		for _, f := range c.Files {
			has := bytes.Contains(f.Data, []byte(line))
			if strings.HasSuffix(f.Path, ".py") != has {
				t.Errorf("%s: canary line present = %v", f.Path, has)
			}
		}
		script := string(fileData(t, c.Files, "tests/test_script.py"))
		if !strings.HasPrefix(script, "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n"+line) {
			t.Errorf("shebang and coding line must stay first:\n%s", script)
		}
		if string(c.Reference) != string(draft("").Reference) || len(c.Criteria["adds numbers"]) != 1 {
			t.Errorf("content lost the reference or criteria: %+v", c)
		}
	})

	t.Run("the card copy is masked", func(t *testing.T) {
		b := open(t)
		w, _ := openStore(t, b.blobs, newKeys(t))
		v, err := w.Push(ctx, ticket, draft("alice"))
		if err != nil {
			t.Fatal(err)
		}
		card, err := w.Card(ctx, ticket, v.Number)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(card)
		if bytes.Contains(data, []byte(v.Canary)) {
			t.Error("the card copy carries the canary token")
		}
		body := string(fileData(t, card.Files, "tests/test_calc.py"))
		if !strings.Contains(body, canaryPrefix+CanaryMask) || !strings.Contains(body, "def test_add") {
			t.Errorf("card file = %q, want the body with the masked canary", body)
		}
	})

	t.Run("decisions", func(t *testing.T) {
		b := open(t)
		k := newKeys(t)
		w, r := openStore(t, b.blobs, k)
		v1, err := w.Push(ctx, ticket, draft("writer-bot"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Open(ctx, ticket, v1.Digest); err == nil || !strings.Contains(err.Error(), "pending") {
			t.Errorf("open of a pending version: %v", err)
		}
		if _, err := w.Approve(ctx, ticket, 1, "sha256:"+strings.Repeat("0", 64), "alice"); err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("approve with a wrong digest: %v", err)
		}
		if _, err := w.Reject(ctx, ticket, 1, v1.Digest, "alice", " "); err == nil || !strings.Contains(err.Error(), "reason is required") {
			t.Errorf("reject without a reason: %v", err)
		}
		rej, err := w.Reject(ctx, ticket, 1, v1.Digest, "alice", "test_add checks nothing about overflow")
		if err != nil {
			t.Fatal(err)
		}
		if rej.State != StateRejected || rej.Decision.Reason == "" {
			t.Errorf("rejected version = %+v", rej)
		}
		if _, err := w.Approve(ctx, ticket, 1, v1.Digest, "alice"); err == nil || !strings.Contains(err.Error(), "already rejected") {
			t.Errorf("approve after reject: %v", err)
		}
		if _, _, err := r.Open(ctx, ticket, v1.Digest); err == nil || !strings.Contains(err.Error(), "rejected") {
			t.Errorf("open of a rejected version: %v", err)
		}
		v2, err := w.Push(ctx, ticket, draft("writer-bot"))
		if err != nil {
			t.Fatal(err)
		}
		if v2.Number != 2 || v2.Digest == v1.Digest || v2.Canary == v1.Canary {
			t.Errorf("second version %+v must differ from the first", v2)
		}
		v3, err := w.Push(ctx, ticket, draft("writer-bot"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Approve(ctx, ticket, 2, v2.Digest, "alice"); err == nil || !strings.Contains(err.Error(), "newer version v3") {
			t.Errorf("approve of an older version: %v", err)
		}
		if _, err := w.Approve(ctx, ticket, 3, v3.Digest, "alice"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Open(ctx, ticket, v3.Digest); err != nil {
			t.Errorf("open of the approved version: %v", err)
		}
		if _, _, err := r.Open(ctx, ticket, v2.Digest); err == nil || !strings.Contains(err.Error(), "superseded") {
			t.Errorf("open of a superseded version: %v", err)
		}
		vs, err := w.Versions(ctx, ticket)
		if err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, v := range vs {
			states = append(states, fmt.Sprintf("v%d %s", v.Number, v.State))
		}
		if got := strings.Join(states, ", "); got != "v1 rejected, v2 superseded, v3 approved" {
			t.Errorf("states: %s", got)
		}
		// Reopening: a new version supersedes the approval until approved.
		v4, err := w.Push(ctx, ticket, draft("writer-bot"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Open(ctx, ticket, v3.Digest); err == nil || !strings.Contains(err.Error(), "superseded") {
			t.Errorf("open of an approval that a new version reopened: %v", err)
		}
		if _, err := w.Approve(ctx, ticket, 4, v4.Digest, "bob"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("tampering makes the grader refuse", func(t *testing.T) {
		for _, obj := range []string{testsObject, metaObject} {
			t.Run(obj, func(t *testing.T) {
				b := open(t)
				w, r := openStore(t, b.blobs, newKeys(t))
				v, err := w.Push(ctx, ticket, draft("alice"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Approve(ctx, ticket, 1, v.Digest, "alice"); err != nil {
					t.Fatal(err)
				}
				b.tamper(t, versionPrefix(ticket, 1)+obj, func(data []byte) []byte {
					out := bytes.Clone(data)
					if obj == metaObject {
						// One hex digit of the digest.
						i := bytes.Index(out, []byte(`"digest":"sha256:`)) + len(`"digest":"sha256:`)
						out[i] ^= 1
					} else {
						out[len(out)-20] ^= 1
					}
					return out
				})
				_, _, err = r.Open(ctx, ticket, v.Digest)
				if err == nil || !strings.Contains(err.Error(), "refusing to grade") {
					t.Errorf("open after changing one byte of %s: %v, want a refusal", obj, err)
				}
			})
		}
	})

	t.Run("versions are never replaced", func(t *testing.T) {
		b := open(t)
		w, _ := openStore(t, b.blobs, newKeys(t))
		if _, err := w.Push(ctx, ticket, draft("alice")); err != nil {
			t.Fatal(err)
		}
		err := b.blobs.Create(ctx, versionPrefix(ticket, 1)+testsObject, []byte("replacement"))
		if !errors.Is(err, ErrExists) {
			t.Errorf("replacing a stored object: %v, want ErrExists", err)
		}
	})

	t.Run("concurrent pushes get distinct numbers", func(t *testing.T) {
		b := open(t)
		w, _ := openStore(t, b.blobs, newKeys(t))
		var wg sync.WaitGroup
		nums := make([]int, 6)
		for i := range nums {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := w.Push(ctx, ticket, draft("alice"))
				if err != nil {
					t.Error(err)
					return
				}
				nums[i] = v.Number
			}()
		}
		wg.Wait()
		seen := map[int]bool{}
		for _, n := range nums {
			if seen[n] {
				t.Errorf("version number %d given twice: %v", n, nums)
			}
			seen[n] = true
		}
		vs, err := w.Versions(ctx, ticket)
		if err != nil || len(vs) != len(nums) {
			t.Errorf("versions: %d, %v", len(vs), err)
		}
	})

	t.Run("key rotation: several grader recipients", func(t *testing.T) {
		b := open(t)
		old, next := newKeys(t), newKeys(t)
		w, err := NewWriter(b.blobs, []age.Recipient{old.grader.Recipient(), next.grader.Recipient()}, old.cardR, old.cardID)
		if err != nil {
			t.Fatal(err)
		}
		v, err := w.Push(ctx, ticket, draft("alice"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Approve(ctx, ticket, 1, v.Digest, "alice"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []*age.X25519Identity{old.grader, next.grader} {
			r, _ := NewReader(b.blobs, []age.Identity{id})
			if _, _, err := r.Open(ctx, ticket, v.Digest); err != nil {
				t.Errorf("identity %s cannot open: %v", id.Recipient(), err)
			}
		}
		stranger, _ := NewReader(b.blobs, newKeys(t).graderID)
		if _, _, err := stranger.Open(ctx, ticket, v.Digest); err == nil || !strings.Contains(err.Error(), "refusing to grade") {
			t.Errorf("a foreign identity opened the tests: %v", err)
		}
	})

	t.Run("tickets are kept apart", func(t *testing.T) {
		b := open(t)
		w, _ := openStore(t, b.blobs, newKeys(t))
		other := ticket
		other.Issue = 13
		if _, err := w.Push(ctx, ticket, draft("alice")); err != nil {
			t.Fatal(err)
		}
		vs, err := w.Versions(ctx, other)
		if err != nil || len(vs) != 0 {
			t.Errorf("other ticket sees %d versions, %v", len(vs), err)
		}
	})

	t.Run("bad drafts say what to fix", func(t *testing.T) {
		b := open(t)
		w, _ := openStore(t, b.blobs, newKeys(t))
		tests := []struct {
			name string
			d    Draft
			want string
		}{
			{"no files", Draft{Author: "a"}, "at least one test file"},
			{"no author", Draft{Files: []File{{Path: "test_a.py", Data: []byte("x")}}}, "needs an author"},
			{"absolute path", Draft{Author: "a", Files: []File{{Path: "/etc/test_a.py"}}}, "clean and relative"},
			{"escaping path", Draft{Author: "a", Files: []File{{Path: "../test_a.py"}}}, "clean and relative"},
			{"no python", Draft{Author: "a", Files: []File{{Path: "data.json"}}}, "Python test file"},
			{"own canary", Draft{Author: "a", Files: []File{{Path: "test_a.py", Data: []byte("# testfirst-canary: x\n")}}}, "adds the canary itself"},
			{"empty criterion", Draft{Author: "a", Files: []File{{Path: "test_a.py"}}, Criteria: map[string][]string{"c": nil}}, "maps to no tests"},
		}
		for _, tt := range tests {
			if _, err := w.Push(ctx, ticket, tt.d); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
			}
		}
	})
}

func fileData(t *testing.T, files []File, path string) []byte {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			return f.Data
		}
	}
	t.Fatalf("no file %s", path)
	return nil
}

// fileBackend is a FileBlobs in a temporary directory; tampering rewrites
// the file in place.
func fileBackend(t *testing.T) backend {
	dir := filepath.Join(t.TempDir(), "hidden")
	b, err := NewFileBlobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return backend{blobs: b, tamper: func(t *testing.T, name string, change func([]byte) []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, change(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}}
}

func TestFileStore(t *testing.T) {
	testStoreContract(t, fileBackend)
}

// TestFileStoreSealed: no test body, canary or card text is readable in
// the store directory.
func TestFileStoreSealed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hidden")
	b, err := NewFileBlobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := openStore(t, b, newKeys(t))
	v, err := w.Push(context.Background(), ticket, draft("alice"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, secret := range []string{"def test_add", "assert add(2, 3)", canaryPrefix + v.Canary} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %q in the clear", p, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// contentType is the type that carries canaried bodies.
var contentType = reflect.TypeOf(Content{})

// carries reports whether values of type t can hold a Content.
func carries(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == contentType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return carries(t.Elem(), seen)
	case reflect.Map:
		return carries(t.Key(), seen) || carries(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if carries(t.Field(i).Type, seen) {
				return true
			}
		}
	case reflect.Interface:
		return t.NumMethod() == 0 // an any could hold anything
	}
	return false
}

// TestWriterCannotReturnBodies: no method of *Writer has a result that can
// hold a Content, the only type that carries canaried bodies. The Writer
// holds no grader identity, so it could not decrypt one either.
func TestWriterCannotReturnBodies(t *testing.T) {
	wt := reflect.TypeOf(&Writer{})
	for i := range wt.NumMethod() {
		m := wt.Method(i)
		for j := range m.Type.NumOut() {
			if out := m.Type.Out(j); carries(out, map[reflect.Type]bool{}) {
				t.Errorf("Writer.%s returns %s, which can carry a canaried body", m.Name, out)
			}
		}
	}
	for i := range reflect.TypeOf(Writer{}).NumField() {
		if f := reflect.TypeOf(Writer{}).Field(i); f.Name == "ids" {
			t.Errorf("Writer has a field %s: it must hold no grader identity", f.Name)
		}
	}
	// The Reader does return it: the check above would catch a Writer.
	rt := reflect.TypeOf(&Reader{})
	open, _ := rt.MethodByName("Open")
	if !carries(open.Type.Out(0), map[reflect.Type]bool{}) {
		t.Error("carries misses Reader.Open's *Content: the check is blind")
	}
}

func TestContentDigest(t *testing.T) {
	c := &Content{
		Files:     []File{{Path: "b.py", Data: []byte("b")}, {Path: "a.py", Data: []byte("a")}},
		Criteria:  map[string][]string{"x": {"a.py::t", "b.py::t"}, "y": {"b.py::u"}},
		Reference: []byte("patch"),
	}
	d := c.Digest()
	back, err := decodeContent(c.encode())
	if err != nil {
		t.Fatal(err)
	}
	if back.Digest() != d {
		t.Errorf("decode(encode(c)) digest %s, want %s", back.Digest(), d)
	}
	// File order does not matter; every byte does.
	reordered := &Content{Files: []File{c.Files[1], c.Files[0]}, Criteria: c.Criteria, Reference: c.Reference}
	if reordered.Digest() != d {
		t.Error("digest depends on file order")
	}
	enc := c.encode()
	for i := len(encodingMagic); i < len(enc); i++ {
		mutated := bytes.Clone(enc)
		mutated[i] ^= 0x01
		m, err := decodeContent(mutated)
		if err != nil {
			continue // no longer a valid encoding: refused
		}
		if m.Digest() == d {
			t.Fatalf("changing byte %d kept the digest", i)
		}
	}
	// Moving bytes between fields changes it too (length prefixes).
	shifted := &Content{Files: []File{{Path: "a.py", Data: []byte("ab")}, {Path: "b.py", Data: nil}}, Criteria: c.Criteria, Reference: c.Reference}
	if shifted.Digest() == d {
		t.Error("moving a byte between files kept the digest")
	}
	if _, err := decodeContent(append(enc, 0)); err == nil {
		t.Error("trailing bytes accepted")
	}
}

func TestParseTicket(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"octo-org/widgets#12", "octo-org/widgets#12"},
		{" a/b.c_d-e#1 ", "a/b.c_d-e#1"},
	} {
		got, err := ParseTicket(tt.in)
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseTicket(%q) = %v, %v", tt.in, got, err)
		}
	}
	for _, bad := range []string{"", "widgets#12", "a/b", "a/b#0", "a/b#x", "a/../b#1", "a/..#1", "-a/b#1", "a/b#12#3"} {
		if _, err := ParseTicket(bad); err == nil || !strings.Contains(err.Error(), "want owner/repo#N") {
			t.Errorf("ParseTicket(%q) = %v, want an error saying the form", bad, err)
		}
	}
}

func TestInitIdentity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "var", "grader-identity.txt")
	r1, created, err := InitIdentity(path)
	if err != nil || !created || !strings.HasPrefix(r1, "age1") {
		t.Fatalf("InitIdentity = %q, %v, %v", r1, created, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("identity mode %v, %v; want 0600", info.Mode().Perm(), err)
	}
	r2, created, err := InitIdentity(path)
	if err != nil || created || r2 != r1 {
		t.Errorf("second InitIdentity = %q, %v, %v; want the same recipient, not created", r2, created, err)
	}
	pub, err := os.ReadFile(RecipientPath(path))
	if err != nil || strings.TrimSpace(string(pub)) != r1 {
		t.Errorf("recipient file %q, %v", pub, err)
	}
	rs, err := ParseRecipients(string(pub))
	if err != nil || len(rs) != 1 {
		t.Errorf("ParseRecipients: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadIdentities(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable identity was accepted: %v", err)
	}
	if _, err := ParseRecipients("age1notakey"); err == nil || !strings.Contains(err.Error(), "want an age X25519 recipient") {
		t.Errorf("bad recipient: %v", err)
	}
}

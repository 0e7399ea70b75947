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
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/testfirst-app/testfirst/grader/detect"
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
		if v.Number != 1 || v.State != StatePending || !strings.HasPrefix(v.Digest, "sha256:") || len(v.Digest) != 71 {
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
		token := c.Canary()
		if !canaryToken.MatchString(token) {
			t.Fatalf("Content.Canary() = %q, want tfc-<32 hex>", token)
		}
		line := canaryPrefix + token + "\n"
		for _, f := range c.Files {
			has := bytes.Contains(f.Data, []byte(line))
			if strings.HasSuffix(f.Path, ".py") != has {
				t.Errorf("%s: canary line present = %v", f.Path, has)
			}
			if n := len(detect.CanaryLine.FindAll(f.Data, -1)); n != 0 && n != 1 {
				t.Errorf("%s: %d canary lines, want one", f.Path, n)
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
		k := newKeys(t)
		w, _ := openStore(t, b.blobs, k)
		v, err := w.Push(ctx, ticket, draft("alice"))
		if err != nil {
			t.Fatal(err)
		}
		card, err := w.Card(ctx, ticket, v.Number)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(card)
		if bytes.Contains(data, []byte(sealedToken(t, b.blobs, k.graderID, ticket, v.Number))) {
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
		// The base check opens a pending version, by its exact digest.
		if c, got, err := r.OpenForCheck(ctx, ticket, 1, v1.Digest); err != nil || got.Number != 1 || c.Digest() != v1.Digest {
			t.Errorf("OpenForCheck(v1) = %v, %+v, %v; want v1's content", c, got, err)
		}
		if _, _, err := r.OpenForCheck(ctx, ticket, 1, "sha256:"+strings.Repeat("0", 64)); err == nil || !strings.Contains(err.Error(), "its digest is") {
			t.Errorf("OpenForCheck with a wrong digest: %v", err)
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
		if _, _, err := r.OpenForCheck(ctx, ticket, 1, v1.Digest); err == nil || !strings.Contains(err.Error(), "rejected, not pending") {
			t.Errorf("OpenForCheck of a rejected version: %v", err)
		}
		v2, err := w.Push(ctx, ticket, draft("writer-bot"))
		if err != nil {
			t.Fatal(err)
		}
		if v2.Number != 2 || v2.Digest == v1.Digest || sealedToken(t, b.blobs, k.graderID, ticket, 2) == sealedToken(t, b.blobs, k.graderID, ticket, 1) {
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
		// A grade against v3 can be reproduced after v4 superseded it;
		// versions never approved were never graded.
		if c, v, err := r.OpenGraded(ctx, ticket, v3.Digest); err != nil || v.Number != 3 || c.Digest() != v3.Digest {
			t.Errorf("open of a superseded approved version for a regrade: v%d, %v", v.Number, err)
		}
		for _, d := range []string{v1.Digest, v2.Digest} {
			if _, _, err := r.OpenGraded(ctx, ticket, d); err == nil || !strings.Contains(err.Error(), "never approved") {
				t.Errorf("open of a never-approved version for a regrade: %v", err)
			}
		}
		if _, _, err := r.OpenGraded(ctx, ticket, "sha256:"+strings.Repeat("1", 64)); !errors.Is(err, ErrNotFound) {
			t.Errorf("open of an unknown digest for a regrade: %v", err)
		}
	})

	t.Run("tampering makes the grader refuse", func(t *testing.T) {
		for _, obj := range []string{testsObject, cardObject, metaObject} {
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
	t.Run("tampering makes the base check refuse", func(t *testing.T) {
		for _, obj := range []string{testsObject, cardObject, metaObject} {
			t.Run(obj, func(t *testing.T) {
				b := open(t)
				w, r := openStore(t, b.blobs, newKeys(t))
				v, err := w.Push(ctx, ticket, draft("alice"))
				if err != nil {
					t.Fatal(err)
				}
				b.tamper(t, versionPrefix(ticket, 1)+obj, func(data []byte) []byte {
					out := bytes.Clone(data)
					out[len(out)-20] ^= 1
					if obj == metaObject {
						out = bytes.Replace(data, []byte(v.Digest[:20]), []byte("sha256:0000000000000"), 1)
					}
					return out
				})
				if _, _, err := r.OpenForCheck(ctx, ticket, 1, v.Digest); err == nil {
					t.Errorf("base check opened v1 after one change to %s", obj)
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
			{"own canary, not in Python", Draft{Author: "a", Files: []File{{Path: "test_a.py"}, {Path: "notes.txt", Data: []byte("# testfirst-canary: x\n")}}}, "adds the canary itself"},
			{"empty criterion", Draft{Author: "a", Files: []File{{Path: "test_a.py"}}, Criteria: map[string][]string{"c": nil}}, "maps to no tests"},
		}
		for _, tt := range tests {
			if _, err := w.Push(ctx, ticket, tt.d); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
			}
		}
	})

	t.Run("a draft holds no line the grader takes for a canary", func(t *testing.T) {
		b := open(t)
		w, _ := openStore(t, b.blobs, newKeys(t))
		// Every spelling the grader's pattern accepts, in files of any kind:
		// the grader reads canaries from every hidden file.
		spellings := []string{
			"#testfirst-canary: requests",
			"# testfirst-canary: requests",
			"#testfirst-canary:requests",
			"   #\ttestfirst-canary:   requests",
			"\t# testfirst-canary: tfc-0123456789abcdef",
			"#  testfirst-canary: some_token-1",
			"# testfirst-canary:\tREQUESTS_requests",
		}
		paths := []string{"tests/test_b.py", "tests/conftest.py", "tests/data/notes.txt", "README.md", "tests/cases.json", "Makefile", "setup.cfg"}
		for i, line := range spellings {
			if !detect.CanaryLine.MatchString(line) {
				t.Fatalf("%q is not a canary line for the grader: the case tests nothing", line)
			}
			p := paths[i%len(paths)]
			for _, where := range []string{"first", "middle"} {
				data := line + "\n" + testBody
				if where == "middle" {
					data = testBody + line + "\nx = 1\n"
				}
				d := draft("alice")
				d.Files = append(d.Files, File{Path: p, Data: []byte(data)})
				_, err := w.Push(ctx, ticket, d)
				if err == nil || !strings.Contains(err.Error(), "adds the canary itself") || !strings.Contains(err.Error(), p) {
					t.Errorf("%q as the %s line of %s: %v, want a refusal naming the file", line, where, p, err)
				}
			}
		}
		// What the grader does not take for a canary is accepted.
		d := draft("alice")
		d.Files = append(d.Files, File{Path: "tests/test_doc.py", Data: []byte("NOTE = 'testfirst-canary: requests'\n")})
		if _, err := w.Push(ctx, ticket, d); err != nil {
			t.Errorf("a file mentioning testfirst-canary outside a comment line: %v", err)
		}
	})

	t.Run("no Writer result carries the canary token", func(t *testing.T) {
		checkWriterHidesToken(t, open(t))
	})

	t.Run("the grader checks the card copy the requester reviewed", func(t *testing.T) {
		both := func(k keys) []age.Recipient { return append(slices.Clone(k.cardR), k.graderR...) }
		cardOnly := func(k keys) []age.Recipient { return k.cardR }
		tests := []struct {
			name       string
			change     func(cc *cardCopy)
			recipients func(k keys) []age.Recipient
			want       string // "" when the grader must accept
		}{
			{"the same card, sealed again", func(cc *cardCopy) {}, both, ""},
			{"the same files in another order", func(cc *cardCopy) { slices.Reverse(cc.Files) }, both, ""},
			{"other files", func(cc *cardCopy) {
				for i, f := range cc.Files {
					cc.Files[i].Data = bytes.ReplaceAll(f.Data, []byte("assert add(2, 3) == 5"), []byte("assert add(2, 3) is not None"))
				}
			}, both, "does not match the tests"},
			{"a file left out", func(cc *cardCopy) { cc.Files = cc.Files[1:] }, both, "does not match the tests"},
			{"a file added", func(cc *cardCopy) {
				cc.Files = append(cc.Files, File{Path: "tests/test_more.py", Data: []byte("def test_more():\n    pass\n")})
			}, both, "does not match the tests"},
			{"other criteria", func(cc *cardCopy) {
				cc.Criteria = map[string][]string{"adds numbers": {"tests/test_script.py::test_x"}}
			}, both, "does not match the tests"},
			{"another reference", func(cc *cardCopy) { cc.Reference = []byte("--- a/other.py\n+++ b/other.py\n") }, both, "does not match the tests"},
			{"another digest", func(cc *cardCopy) { cc.Digest = "sha256:" + strings.Repeat("0", 64) }, both, "does not match the tests"},
			{"sealed to the card only", func(cc *cardCopy) {}, cardOnly, "cannot be opened"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				b := open(t)
				k := newKeys(t)
				w, r := openStore(t, b.blobs, k)
				v, err := w.Push(ctx, ticket, draft("alice"))
				if err != nil {
					t.Fatal(err)
				}
				card, err := w.Card(ctx, ticket, 1)
				if err != nil {
					t.Fatal(err)
				}
				cc := cardCopy{Digest: v.Digest, Card: *card}
				tt.change(&cc)
				plain, err := json.Marshal(cc)
				if err != nil {
					t.Fatal(err)
				}
				forged, err := seal(plain, tt.recipients(k))
				if err != nil {
					t.Fatal(err)
				}
				b.tamper(t, versionPrefix(ticket, 1)+cardObject, func([]byte) []byte { return forged })
				if cc.Digest == v.Digest {
					// The requester reviews the forged card and approves.
					seen, err := w.Card(ctx, ticket, 1)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(*seen, cc.Card) {
						t.Fatalf("the requester sees %+v, not the forged card", seen)
					}
				}
				if _, err := w.Approve(ctx, ticket, 1, v.Digest, "alice"); err != nil {
					t.Fatal(err)
				}
				_, _, err = r.Open(ctx, ticket, v.Digest)
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("open: %v", err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), "refusing to grade") || !strings.Contains(err.Error(), "card copy the requester reviewed") || !strings.Contains(err.Error(), tt.want)):
					t.Errorf("open: %v, want a refusal saying %q", err, tt.want)
				}
			})
		}
	})

	t.Run("stray version names cannot hang the store", func(t *testing.T) {
		b := open(t)
		counted := &countingBlobs{Blobs: b.blobs}
		w, _ := openStore(t, counted, newKeys(t))
		stray := []string{
			"v9223372036854775807", "v99999999999999999999", "v1000000", "v500000x",
			"v0", "v01", "v-1", "v+1", "v 1", "V2", "v", "vv3", "v1.5", "v٣",
		}
		for _, dir := range stray {
			if err := b.blobs.Create(ctx, ticket.prefix()+dir+"/"+claimObject, nil); err != nil {
				t.Fatal(err)
			}
		}
		// A claimed number without meta.json costs no read.
		if err := b.blobs.Create(ctx, versionPrefix(ticket, 500000)+claimObject, nil); err != nil {
			t.Fatal(err)
		}
		within(t, 30*time.Second, func() {
			v, err := w.Push(ctx, ticket, draft("alice"))
			if err != nil {
				t.Error(err)
				return
			}
			if v.Number != 500001 {
				t.Errorf("pushed v%d, want v500001 (after the claimed v500000, ignoring the rest)", v.Number)
			}
			counted.reads.Store(0)
			vs, err := w.Versions(ctx, ticket)
			if err != nil {
				t.Error(err)
				return
			}
			if len(vs) != 1 || vs[0].Number != 500001 {
				t.Errorf("versions: %+v, want v500001 alone", vs)
			}
			if n := counted.reads.Load(); n > 2 {
				t.Errorf("Versions made %d reads, want at most 2 (meta.json and decision.json of v500001)", n)
			}
		})
		// The last number: claim refuses past it.
		if err := b.blobs.Create(ctx, versionPrefix(ticket, maxVersion)+claimObject, nil); err != nil {
			t.Fatal(err)
		}
		within(t, 30*time.Second, func() {
			_, err := w.Push(ctx, ticket, draft("alice"))
			if err == nil || !strings.Contains(err.Error(), "no version number left") || !strings.Contains(err.Error(), "v999999") {
				t.Errorf("push past v999999: %v, want a refusal naming the last number", err)
			}
			names, err := b.blobs.List(ctx, ticket.prefix())
			if err != nil {
				t.Error(err)
				return
			}
			known := append([]string{"v500000", "v500001", "v999999"}, stray...)
			for _, n := range names {
				dir, _, _ := strings.Cut(strings.TrimPrefix(n, ticket.prefix()), "/")
				if !slices.Contains(known, dir) {
					t.Errorf("the refused push wrote %s", n)
				}
			}
			vs, err := w.Versions(ctx, ticket)
			if err != nil || len(vs) != 1 {
				t.Errorf("versions after the refusal: %d, %v", len(vs), err)
			}
		})
	})
}

// within runs f, which must not call t.Fatal, and fails the test if it
// takes longer than d: code that loops forever must not hang the test
// binary.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// countingBlobs counts reads.
type countingBlobs struct {
	Blobs
	reads atomic.Int64
}

func (c *countingBlobs) Read(ctx context.Context, name string) ([]byte, error) {
	c.reads.Add(1)
	return c.Blobs.Read(ctx, name)
}

// canaryToken is the form of the tokens the store makes.
var canaryToken = regexp.MustCompile(`^tfc-[0-9a-f]{32}$`)

// sealedToken opens version n's sealed tests as the grader would, without
// needing the version to be approved, and returns its canary token.
func sealedToken(t *testing.T, b Blobs, ids []age.Identity, tk Ticket, n int) string {
	t.Helper()
	data, err := b.Read(t.Context(), versionPrefix(tk, n)+testsObject)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := unseal(data, ids)
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeContent(plain)
	if err != nil {
		t.Fatal(err)
	}
	token := c.Canary()
	if !canaryToken.MatchString(token) {
		t.Fatalf("v%d: Content.Canary() = %q, want tfc-<32 hex>", n, token)
	}
	return token
}

// checkWriterHidesToken calls every exported method of a Writer, both on
// success and on failure, and fails if any result or error, marshalled to
// JSON or printed, holds a version's canary token (read back through a
// Reader), or if any object the Writer may read (everything but tests.age)
// holds it. A Writer method that this does not call fails the check too.
func checkWriterHidesToken(t *testing.T, b backend) {
	t.Helper()
	ctx := t.Context()
	k := newKeys(t)
	w, r := openStore(t, b.blobs, k)
	results := map[string][]any{}
	record := func(method string, out ...any) {
		for _, o := range out {
			if err, ok := o.(error); ok && err != nil {
				o = err.Error()
			}
			results[method] = append(results[method], o)
		}
	}

	v1, err := w.Push(ctx, ticket, draft("alice"))
	if err != nil {
		t.Fatal(err)
	}
	record("Push", v1, err)
	card, err := w.Card(ctx, ticket, 1)
	record("Card", card, err)
	vs, err := w.Versions(ctx, ticket)
	record("Versions", vs, err)
	v, err := w.Version(ctx, ticket, 1)
	record("Version", v, err)
	approved, err := w.Approve(ctx, ticket, 1, v1.Digest, "alice")
	record("Approve", approved, err)
	c, _, err := r.Open(ctx, ticket, v1.Digest)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{c.Canary(), ""}
	v2, err := w.Push(ctx, ticket, draft("alice"))
	if err != nil {
		t.Fatal(err)
	}
	record("Push", v2, err)
	tokens[1] = sealedToken(t, b.blobs, k.graderID, ticket, 2)
	rejected, err := w.Reject(ctx, ticket, 2, v2.Digest, "bob", "weak")
	record("Reject", rejected, err)
	card, err = w.Card(ctx, ticket, 2)
	record("Card", card, err)
	vs, err = w.Versions(ctx, ticket)
	record("Versions", vs, err)
	// Failures: their errors must not carry the token either.
	v, err = w.Approve(ctx, ticket, 2, v2.Digest, "alice")
	record("Approve", v, err)
	v, err = w.Reject(ctx, ticket, 1, v1.Digest, "bob", "late")
	record("Reject", v, err)
	v, err = w.Version(ctx, ticket, 9)
	record("Version", v, err)
	card, err = w.Card(ctx, ticket, 9)
	record("Card", card, err)
	v, err = w.Push(ctx, ticket, Draft{Author: "alice", Files: []File{{Path: "test_a.py", Data: []byte(canaryPrefix + tokens[0] + "\n")}}})
	record("Push", v, err)

	for _, tok := range tokens {
		if !canaryToken.MatchString(tok) {
			t.Fatalf("token %q: the check would test nothing", tok)
		}
	}
	wt := reflect.TypeOf(w)
	for i := range wt.NumMethod() {
		if name := wt.Method(i).Name; len(results[name]) == 0 {
			t.Errorf("Writer.%s is not called here: add it, so that its results are checked for the token", name)
		}
	}
	for method, outs := range results {
		for _, o := range outs {
			data, err := json.Marshal(o)
			if err != nil {
				t.Fatalf("marshal a result of Writer.%s: %v", method, err)
			}
			for _, tok := range tokens {
				for _, form := range []string{string(data), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o)} {
					if strings.Contains(form, tok) {
						t.Errorf("a result of Writer.%s carries the canary token: %s", method, form)
					}
				}
			}
		}
	}
	names, err := b.blobs.List(ctx, ticket.prefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, "/"+testsObject) {
			continue
		}
		data, err := b.blobs.Read(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			if bytes.Contains(data, []byte(tok)) {
				t.Errorf("%s, which the Writer may read, holds the canary token in the clear", n)
			}
		}
	}
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
	k := newKeys(t)
	w, _ := openStore(t, b, k)
	v, err := w.Push(context.Background(), ticket, draft("alice"))
	if err != nil {
		t.Fatal(err)
	}
	token := sealedToken(t, b, k.graderID, ticket, v.Number)
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, secret := range []string{"def test_add", "assert add(2, 3)", token} {
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
// hold a Content, the only type that carries canaried bodies, and no result
// of any of its methods holds a version's canary token (with the masked
// card copy, the token gives back the canaried body byte for byte). The
// Writer holds no grader identity, so it could not decrypt one either.
// checkWriterHidesToken runs on both backends in testStoreContract too.
func TestWriterCannotReturnBodies(t *testing.T) {
	checkWriterHidesToken(t, fileBackend(t))

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
	// A Secret in a pod with an fsGroup: root's, group-readable by a
	// group of this process, and nothing else.
	if err := os.Chmod(path, 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 0, os.Getegid()); err != nil {
		t.Skipf("chown needs root: %v", err)
	}
	if _, err := ReadIdentities(path); err != nil {
		t.Errorf("a root-owned identity readable by our group was refused: %v", err)
	}
	for _, c := range []struct {
		mode     os.FileMode
		uid, gid int
	}{
		{0o460, 0, os.Getegid()},     // group-writable
		{0o444, 0, os.Getegid()},     // readable by others
		{0o440, 0, 54321},            // a group this process is not in
		{0o440, 54321, os.Getegid()}, // not root's
	} {
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, c.uid, c.gid); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadIdentities(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %o owner %d:%d accepted: %v", c.mode, c.uid, c.gid, err)
		}
	}
	if _, err := ParseRecipients("age1notakey"); err == nil || !strings.Contains(err.Error(), "want an age X25519 recipient") {
		t.Errorf("bad recipient: %v", err)
	}
}

// TestCriteriaNameTheDraftsTests: a criteria map whose test ids do not name
// the draft's files and names is refused before anything is stored, each
// mistake named; the shapes pytest prints for real tests are accepted.
func TestCriteriaNameTheDraftsTests(t *testing.T) {
	files := []File{
		{Path: "tests/hidden/test_totals.py", Data: []byte("import pytest\n\nclass TestSums:\n    def test_whole(self):\n        pass\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_each(n):\n    pass\n\ndef test_größe():\n    pass\n")},
		{Path: "tests/hidden/data/table.txt", Data: []byte("1 2\n")},
		{Path: "tests/hidden/base.py", Data: []byte("class Base:\n    def test_inherited(self):\n        pass\n")},
		{Path: "tests/hidden/test_b.py", Data: []byte("from .base import Base\n\nclass TestChild(Base):\n    pass\n")},
		{Path: "tests/hidden/test_c.py", Data: []byte("from tests.shared import *\n")},
	}
	for _, ok := range [][]string{
		{"tests/hidden/test_totals.py::TestSums::test_whole"},
		{"tests/hidden/test_totals.py::test_each[1]", "tests/hidden/test_totals.py::test_each"},
		{"tests/hidden/test_totals.py"},
		{"tests/hidden"},
		{"tests/hidden/test_totals.py::test_größe"},
		// Methods a class inherits, names from a star import, brackets
		// holding "::".
		{"tests/hidden/test_b.py::TestChild::test_inherited"},
		{"tests/hidden/test_c.py::test_shared"},
		{"tests/hidden/test_totals.py::test_each[GET::users::list]"},
	} {
		d := Draft{Author: "writer-bot", Files: files, Criteria: map[string][]string{"AC1": ok}}
		if err := d.validate(); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	d := Draft{Author: "writer-bot", Files: files, Criteria: map[string][]string{
		"AC1": {"tests/hidden/test_totals.py::test_whol"},
		"AC2": {"tests/hidden/test_total.py::test_each"},
		"AC3": {"tests/hidden/test_totals.py::TestSum::test_whole"},
	}}
	err := d.validate()
	for _, want := range []string{
		`AC1 names "tests/hidden/test_totals.py::test_whol", but tests/hidden/test_totals.py has no test_whol`,
		`AC2 names "tests/hidden/test_total.py::test_each", but no file tests/hidden/test_total.py is among the tests`,
		`AC3 names "tests/hidden/test_totals.py::TestSum::test_whole", but tests/hidden/test_totals.py has no TestSum`,
		"nothing was stored",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("mistyped ids: %v; want it to say %q", err, want)
		}
	}
}

// TestCardKept: the files kept after a pass are the draft's, byte for
// byte (a shebang and a coding line stay first, a data file as it is), and
// none holds a canary line; a card whose canary line was moved or dropped
// is refused, never kept with a canary or with a line missing.
func TestCardKept(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t)
	w, r := openStore(t, fileBackend(t).blobs, k)
	ticket := Ticket{Owner: "o", Repo: "r", Issue: 3}
	files := []File{
		{Path: "tests/test_a.py", Data: []byte(testBody)},
		{Path: "tests/test_b.py", Data: []byte("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n" + testBody)},
		{Path: "tests/data/words.txt", Data: []byte("one two\n")},
	}
	v, err := w.Push(ctx, ticket, Draft{Author: "alice", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	card, err := w.Card(ctx, ticket, v.Number)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := card.Kept()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range files {
		want[f.Path] = string(f.Data)
	}
	got := map[string]string{}
	for _, f := range kept {
		got[f.Path] = string(f.Data)
		if bytes.Contains(f.Data, []byte("testfirst-canary")) {
			t.Errorf("kept %s holds a canary line:\n%s", f.Path, f.Data)
		}
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("kept files %q, want the draft's %q", got, want)
	}
	// The grader's copy, canary removed the same way, is the same.
	if _, err := w.Approve(ctx, ticket, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	c, _, err := r.Open(ctx, ticket, v.Digest)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range c.Files {
		if plain := strings.Replace(string(f.Data), canaryPrefix+c.Canary()+"\n", "", 1); plain != got[f.Path] {
			t.Errorf("%s: kept %q, the approved tests without their canary %q", f.Path, got[f.Path], plain)
		}
	}

	for name, edit := range map[string]func(string) string{
		"canary line dropped": func(s string) string { return strings.Replace(s, canaryPrefix+CanaryMask+"\n", "", 1) },
		"canary line moved": func(s string) string {
			return strings.Replace(s, canaryPrefix+CanaryMask+"\n", "", 1) + canaryPrefix + CanaryMask + "\n"
		},
		"second canary line": func(s string) string { return s + "# testfirst-canary: abcdefgh12\n" },
	} {
		bad := &Card{Files: slices.Clone(card.Files)}
		bad.Files[0].Data = []byte(edit(string(bad.Files[0].Data)))
		if _, err := bad.Kept(); err == nil {
			t.Errorf("%s: kept", name)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/store"
)

func TestParseTestsTicket(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "octo-org/widgets#12", want: "octo-org/widgets#12"},
		{in: " octo-org/widgets#12 ", want: "octo-org/widgets#12"},
		{in: "widgets", wantErr: "want owner/repo#N"},
		{in: "octo-org/widgets#0", wantErr: "want owner/repo#N"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tf := ticketFlags{ticket: tt.in, format: "text"}
			got, err := tf.parse()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parse(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Errorf("parse(%q) = %+v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestReadTestsDraftRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test_a.py"), []byte("def test_a(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := readDraft(dir, "writer-bot")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.File{{Path: "test_a.py", Data: []byte("def test_a(): pass\n")}}
	if diff := cmp.Diff(want, d.Files); diff != "" || d.Author != "writer-bot" {
		t.Errorf("draft author %q, files (-want +got):\n%s", d.Author, diff)
	}
	if err := os.Symlink("test_a.py", filepath.Join(dir, "test_b.py")); err != nil {
		t.Fatal(err)
	}
	if _, err := readDraft(dir, "writer-bot"); err == nil || !strings.Contains(err.Error(), "test_b.py is a symlink") {
		t.Errorf("draft with a symlink: %v, want it refused", err)
	}
}

func TestTestsVersionsOutput(t *testing.T) {
	created := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	decided := []store.Version{
		{Number: 1, Digest: "sha256:aa", State: store.StateRejected, Author: "writer-bot", Created: created,
			Decision: &store.Decision{By: "alice", Reason: "edge cases untested", Digest: "sha256:aa", At: created}},
		{Number: 2, Digest: "sha256:bb", State: store.StateApproved, Author: "writer-bot", Created: created,
			Decision: &store.Decision{Approved: true, By: "alice", Digest: "sha256:bb", At: created}},
		{Number: 3, Digest: "sha256:cc", State: store.StatePending, Author: "writer-bot", Created: created},
	}
	tests := []struct {
		name     string
		versions []store.Version
		json     bool
		want     string
	}{
		{name: "no versions as JSON", json: true, want: "[]\n"},
		{name: "no versions as text", want: "version  state  digest  author  created  decision\n"},
		{name: "decided as text", versions: decided, want: "" +
			"version  state     digest     author      created           decision\n" +
			"v1       rejected  sha256:aa  writer-bot  2025-03-04 05:06  by alice: edge cases untested\n" +
			"v2       approved  sha256:bb  writer-bot  2025-03-04 05:06  by alice\n" +
			"v3       pending   sha256:cc  writer-bot  2025-03-04 05:06  \n"},
		{name: "one as JSON", versions: decided[2:], json: true, want: `[{"number":3,"digest":"sha256:cc","state":"pending",` +
			`"author":"writer-bot","created":"2025-03-04T05:06:07Z","files":null,"criteria":null,"has_reference":false}]` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			write := writeVersionsText
			if tt.json {
				write = writeVersionsJSON
			}
			if err := write(&buf, tt.versions); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTestsStoreRoundTrip pushes, lists and decides versions in a real
// file store with keys made by app.InitKeys, as the tests commands do, and
// sees the installation keep tickets of the same name apart.
func TestTestsStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	graderID, cardID := filepath.Join(dir, "grader-identity.txt"), filepath.Join(dir, "card-identity.txt")
	graderR, cardR, _, err := app.InitKeys(graderID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(app.EnvGraderRecipients, graderR)
	t.Setenv(app.EnvGraderIdentity, graderID)
	t.Setenv(app.EnvCardRecipients, cardR)
	t.Setenv(app.EnvCardIdentity, cardID)
	tests := filepath.Join(dir, "tests")
	if err := os.MkdirAll(tests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tests, "test_a.py"), []byte("def test_a():\n    assert 'secret body'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s, closeStore, err := app.OpenStoreWriter(ctx, "file://"+filepath.Join(dir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	tk, err := (&ticketFlags{ticket: "octo-org/widgets#12", format: "text"}).parse()
	if err != nil {
		t.Fatal(err)
	}
	tk.Installation = 7
	push := func() store.Version {
		t.Helper()
		d, err := readDraft(tests, "writer-bot")
		if err != nil {
			t.Fatal(err)
		}
		d.Criteria = map[string][]string{"counts": {"test_a.py::test_a"}}
		v, err := s.Push(ctx, tk, d)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := push()
	if v1.Number != 1 || v1.State != "pending" || !strings.HasPrefix(v1.Digest, "sha256:") {
		t.Fatalf("first push: %+v", v1)
	}
	if _, err := s.Reject(ctx, tk, 1, v1.Digest, "alice", ""); err == nil {
		t.Error("reject without a reason succeeded")
	}
	if got, err := s.Reject(ctx, tk, 1, v1.Digest, "alice", "too few tests"); err != nil || got.State != store.StateRejected {
		t.Fatalf("reject v1: %+v %v", got, err)
	}
	v2 := push()
	if _, err := s.Approve(ctx, tk, 2, v1.Digest, "alice"); err == nil {
		t.Error("approve with v1's digest succeeded")
	}
	got, err := s.Approve(ctx, tk, 2, v2.Digest, "alice")
	if diff := cmp.Diff(struct {
		Number int
		Digest string
		State  store.State
	}{2, v2.Digest, store.StateApproved}, struct {
		Number int
		Digest string
		State  store.State
	}{got.Number, got.Digest, got.State}); diff != "" || err != nil {
		t.Fatalf("approve v2: %v (-want +got):\n%s", err, diff)
	}

	vs, err := s.Versions(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := writeVersionsText(&text, vs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"v1       rejected", "by alice: too few tests", "v2       approved"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "secret body") {
		t.Errorf("list shows a test body:\n%s", text.String())
	}

	other, err := (&ticketFlags{ticket: "octo-org/widgets#12", format: "text"}).parse()
	if err != nil {
		t.Fatal(err)
	}
	none, err := s.Versions(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := writeVersionsJSON(&js, none); err != nil || js.String() != "[]\n" {
		t.Errorf("versions of the same ticket in installation 0: %q %v, want none", js.String(), err)
	}
}

// Package testkit holds the helpers the unit tests of app, card and jobs
// share: a migrated database of a test's own, the app's GitHub clients
// against the fake GitHub, a sealed hidden-test store and a wait for a
// condition. Only tests import it (test/layout_test.go checks).
package testkit

import (
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// DB opens a migrated SQLite database of its own for a test, closed when
// the test ends.
func DB(t testing.TB) *db.DB {
	t.Helper()
	d, err := db.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "testfirst.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return d
}

// Clients are the app's GitHub clients against the fake.
func Clients(t testing.TB, gh *fakegithub.Server) *github.Clients {
	t.Helper()
	clients, err := github.NewClients(github.AppConfig{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), BaseURL: gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return clients
}

// Store is a hidden-test store of a test's own on a directory: its writer,
// which seals to a fresh grader identity and a fresh card identity (the
// writer holds the card's), and the grader's reader.
func Store(t testing.TB) (*store.Writer, *store.Reader) {
	t.Helper()
	blobs, err := store.NewFileBlobs(filepath.Join(t.TempDir(), "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	grader, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	card, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.NewWriter(blobs, []age.Recipient{grader.Recipient()}, []age.Recipient{card.Recipient()}, []age.Identity{card})
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.NewReader(blobs, []age.Identity{grader})
	if err != nil {
		t.Fatal(err)
	}
	return w, r
}

// WaitUntil polls ok every 100 ms and fails the test, naming what, when it
// is not true within limit.
func WaitUntil(t testing.TB, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

package app

import (
	"path/filepath"
	"testing"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// testDB opens a migrated SQLite database of its own for a test.
func testDB(t *testing.T) *db.DB {
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

// testClients are the app's GitHub clients against the fake.
func testClients(t *testing.T, gh *fakegithub.Server) *github.Clients {
	t.Helper()
	clients, err := github.NewClients(github.AppConfig{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), BaseURL: gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return clients
}

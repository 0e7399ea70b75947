package store

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestServedFollowsTheServicesURL: the record a push reads names the URL
// of the service that last started on the store with a new one, so a
// service that moved (a new domain, a first run on localhost and then the
// real host) is the one a writer is sent to; a restart at the same URL
// writes nothing.
func TestServedFollowsTheServicesURL(t *testing.T) {
	blobs := privateFileBlobs(t)
	ctx := t.Context()
	if _, err := ReadServed(ctx, blobs); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a store no service started on: %v, want ErrNotFound", err)
	}
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	steps := []struct {
		url  string
		want string
	}{
		{"http://localhost:8080", "http://localhost:8080"},
		{"http://localhost:8080", "http://localhost:8080"},
		{"https://testfirst.example.com", "https://testfirst.example.com"},
		{"https://testfirst.example.com", "https://testfirst.example.com"},
		{"http://localhost:8080", "http://localhost:8080"},
	}
	for i, s := range steps {
		if err := MarkServed(ctx, blobs, s.url, start.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatalf("start %d at %s: %v", i, s.url, err)
		}
		got, err := ReadServed(ctx, blobs)
		if err != nil {
			t.Fatal(err)
		}
		if got.PublicURL != s.want {
			t.Errorf("after start %d at %s the record names %s", i, s.url, got.PublicURL)
		}
	}
	names, err := blobs.List(ctx, "tickets/")
	if err != nil {
		t.Fatal(err)
	}
	// The first start and the two moves; the restarts at the same URL
	// add nothing.
	if len(names) != 3 {
		t.Errorf("the store holds %d service records, want 3: %q", len(names), names)
	}
}

// privateFileBlobs is a file store in a directory of the test's own, mode
// 0700 as NewFileBlobs wants it.
func privateFileBlobs(t *testing.T) *FileBlobs {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	blobs, err := NewFileBlobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return blobs
}

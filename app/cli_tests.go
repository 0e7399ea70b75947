package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/store"
)

// TestsTicket names the ticket whose hidden tests a command works on.
type TestsTicket struct{ ticket store.Ticket }

// ParseTestsTicket reads "owner/repo#N" of the given installation (0 for a
// ticket made from the command line before the app knows it). Its error
// says the form it wants.
func ParseTestsTicket(s string, installation int64) (TestsTicket, error) {
	t, err := store.ParseTicket(s)
	if err != nil {
		return TestsTicket{}, err
	}
	t.Installation = installation
	return TestsTicket{ticket: t}, nil
}

// String returns "owner/repo#N".
func (t TestsTicket) String() string { return t.ticket.String() }

// TestsDraft is a version of hidden tests about to be pushed.
type TestsDraft struct {
	// Author is who wrote the tests: a GitHub login or an agent's name.
	Author string
	// Criteria maps an acceptance criterion id to the ids of the tests that
	// cover it.
	Criteria map[string][]string
	// Reference is an optional patch against the base that must pass every
	// test.
	Reference []byte
	files     []store.File
}

// ReadTestsDraft reads the test files below dir into a draft by author. It
// refuses a symlink: a version holds regular files only.
func ReadTestsDraft(dir, author string) (TestsDraft, error) {
	tree, err := grader.LoadTree(dir)
	if err != nil {
		return TestsDraft{}, err
	}
	d := TestsDraft{Author: author}
	for _, f := range tree.Files {
		if f.IsSymlink() {
			return TestsDraft{}, fmt.Errorf("%s is a symlink: a version holds regular files only", f.Path)
		}
		d.files = append(d.files, store.File{Path: f.Path, Data: f.Data})
	}
	return d, nil
}

// TestsVersion is what a command reports of a version it pushed or
// decided.
type TestsVersion struct {
	Number int
	Digest string
	// State is pending, approved, rejected or superseded.
	State string
}

// TestsStore is the hidden-test store opened as the web side opens it: it
// seals to the grader's recipients and never hands out a test body.
type TestsStore struct {
	w       *store.Writer
	closeFn func() error
}

// OpenTestsStore opens the store at url (file://PATH or gs://bucket/prefix)
// with the keys the environment names (see InitKeys). Close it when done.
func OpenTestsStore(ctx context.Context, url string) (*TestsStore, error) {
	w, closeFn, err := OpenStoreWriter(ctx, url)
	if err != nil {
		return nil, err
	}
	return &TestsStore{w: w, closeFn: closeFn}, nil
}

// Close releases the store's connection.
func (s *TestsStore) Close() error { return s.closeFn() }

// Push stores d as the ticket's next version, pending, sealed to the
// grader. It returns an error when d breaks the store's limits or the store
// fails.
func (s *TestsStore) Push(ctx context.Context, t TestsTicket, d TestsDraft) (TestsVersion, error) {
	v, err := s.w.Push(ctx, t.ticket, store.Draft{Files: d.files, Criteria: d.Criteria, Reference: d.Reference, Author: d.Author})
	if err != nil {
		return TestsVersion{}, err
	}
	return testsVersion(v), nil
}

// Approve records that by approved version number, bound to digest. It
// refuses a digest that is not the version's, a version that is not the
// newest, and a version already decided.
func (s *TestsStore) Approve(ctx context.Context, t TestsTicket, number int, digest, by string) (TestsVersion, error) {
	v, err := s.w.Approve(ctx, t.ticket, number, digest, by)
	if err != nil {
		return TestsVersion{}, err
	}
	return testsVersion(v), nil
}

// Reject records that by rejected version number for reason. It refuses
// what Approve refuses, and an empty reason.
func (s *TestsStore) Reject(ctx context.Context, t TestsTicket, number int, digest, by, reason string) (TestsVersion, error) {
	v, err := s.w.Reject(ctx, t.ticket, number, digest, by, reason)
	if err != nil {
		return TestsVersion{}, err
	}
	return testsVersion(v), nil
}

// Versions lists the ticket's versions, oldest first: what anyone may know
// of them, never a test body.
func (s *TestsStore) Versions(ctx context.Context, t TestsTicket) (TestsVersions, error) {
	vs, err := s.w.Versions(ctx, t.ticket)
	if err != nil {
		return TestsVersions{}, err
	}
	return TestsVersions{versions: vs}, nil
}

func testsVersion(v store.Version) TestsVersion {
	return TestsVersion{Number: v.Number, Digest: v.Digest, State: string(v.State)}
}

// TestsVersions is a ticket's versions as the command line prints them.
type TestsVersions struct{ versions []store.Version }

// WriteJSON writes the versions as a JSON array, empty when there are none.
func (l TestsVersions) WriteJSON(w io.Writer) error {
	vs := l.versions
	if vs == nil {
		vs = []store.Version{}
	}
	return json.NewEncoder(w).Encode(vs)
}

// WriteText writes a table of the versions: number, state, digest, author,
// when created, and who decided and why.
func (l TestsVersions) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "version\tstate\tdigest\tauthor\tcreated\tdecision")
	for _, v := range l.versions {
		decision := ""
		if d := v.Decision; d != nil {
			decision = "by " + d.By
			if d.Reason != "" {
				decision += ": " + d.Reason
			}
		}
		fmt.Fprintf(tw, "v%d\t%s\t%s\t%s\t%s\t%s\n", v.Number, v.State, v.Digest, v.Author, v.Created.Format("2006-01-02 15:04"), decision)
	}
	return tw.Flush()
}

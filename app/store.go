package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"filippo.io/age"

	"github.com/testfirst-app/testfirst/store"
)

// Key files of the embedded default, relative to the working directory.
const (
	DefaultGraderIdentity = "var/grader-identity.txt"
	DefaultCardIdentity   = "var/card-identity.txt"
	DefaultStoreURL       = "file://./var/hidden"
)

// Environment variables that configure the store's keys.
const (
	EnvGraderRecipients = "TESTFIRST_GRADER_RECIPIENTS"
	EnvGraderIdentity   = "TESTFIRST_GRADER_IDENTITY_FILE"
	EnvCardRecipients   = "TESTFIRST_CARD_RECIPIENTS"
	EnvCardIdentity     = "TESTFIRST_CARD_IDENTITY_FILE"
)

// InitKeys creates the grader's and the card's age identities at their
// default paths when missing, and returns their recipients and whether each
// was created.
func InitKeys(graderPath, cardPath string) (grader, card string, created [2]bool, err error) {
	if grader, created[0], err = store.InitIdentity(graderPath); err != nil {
		return "", "", created, fmt.Errorf("grader identity: %w", err)
	}
	if card, created[1], err = store.InitIdentity(cardPath); err != nil {
		return "", "", created, fmt.Errorf("card identity: %w", err)
	}
	return grader, card, created, nil
}

// recipients reads the recipients named by env, else the recipient file
// beside the default identity.
func recipients(env, defaultIdentity string) ([]age.Recipient, error) {
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		rs, err := store.ParseRecipients(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		return rs, nil
	}
	path := store.RecipientPath(defaultIdentity)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no recipients: set %s, or run testfirst keys init to create %s", env, path)
	}
	if err != nil {
		return nil, err
	}
	rs, err := store.ParseRecipients(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}

// identities reads the identity file named by env, else the default.
func identities(env, defaultIdentity string) ([]age.Identity, error) {
	path := os.Getenv(env)
	if path == "" {
		path = defaultIdentity
	}
	ids, err := store.ReadIdentities(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no identity at %s: set %s, or run testfirst keys init", path, env)
	}
	return ids, err
}

// OpenStoreWriter opens the store at url as the web side does: it seals to
// the grader's recipients and reads card copies with the card's identity.
func OpenStoreWriter(ctx context.Context, url string) (*store.Writer, func() error, error) {
	blobs, closeFn, err := store.OpenBlobs(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	w, err := storeWriter(blobs)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return w, closeFn, nil
}

// ErrStoreNotServed: no service ever started on the store; tests pushed
// into it would never be graded.
var ErrStoreNotServed = errors.New("no testfirst service reads this store")

// OpenServedStoreWriter opens the store at url as OpenStoreWriter does, for
// pushing tests from the command line: it first reads the record a service
// leaves in the store it reads, and fails with ErrStoreNotServed, before
// asking for any key, when there is none.
func OpenServedStoreWriter(ctx context.Context, url string) (*store.Writer, store.Served, func() error, error) {
	blobs, closeFn, err := store.OpenBlobs(ctx, url)
	if err != nil {
		return nil, store.Served{}, nil, err
	}
	served, err := store.ReadServed(ctx, blobs)
	if errors.Is(err, store.ErrNotFound) {
		err = ErrStoreNotServed
	}
	if err == nil {
		var w *store.Writer
		if w, err = storeWriter(blobs); err == nil {
			return w, served, closeFn, nil
		}
	}
	closeFn()
	return nil, store.Served{}, nil, err
}

// OpenStoreReader opens the store at url as the grader does, with the
// grader's identity.
func OpenStoreReader(ctx context.Context, url string) (*store.Reader, func() error, error) {
	blobs, closeFn, err := store.OpenBlobs(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	r, err := storeReader(blobs)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return r, closeFn, nil
}

// storeWriter is the web side of the store on blobs, with the keys the
// environment names.
func storeWriter(blobs store.Blobs) (*store.Writer, error) {
	graderR, err := recipients(EnvGraderRecipients, DefaultGraderIdentity)
	if err != nil {
		return nil, err
	}
	cardR, err := recipients(EnvCardRecipients, DefaultCardIdentity)
	if err != nil {
		return nil, err
	}
	cardID, err := identities(EnvCardIdentity, DefaultCardIdentity)
	if err != nil {
		return nil, err
	}
	return store.NewWriter(blobs, graderR, cardR, cardID)
}

// storeReader is the grader's side of the store on blobs.
func storeReader(blobs store.Blobs) (*store.Reader, error) {
	ids, err := identities(EnvGraderIdentity, DefaultGraderIdentity)
	if err != nil {
		return nil, err
	}
	return store.NewReader(blobs, ids)
}

// serviceStore is the hidden-test store as serve opens it, once: the web
// side, for the card and the store sync, and the grader's side when the
// grader's identity is there.
type serviceStore struct {
	blobs  store.Blobs
	writer *store.Writer
	reader *store.Reader
	// readerErr says why there is no reader.
	readerErr error
	close     func() error
}

// openStoreSides opens the store's web side, and its grader side when
// withReader: the app role never opens the grader's identity. It fails
// when the web side cannot be had; a missing grader identity leaves
// reader nil.
func openStoreSides(ctx context.Context, url string, withReader bool) (*serviceStore, error) {
	blobs, closeFn, err := store.OpenBlobs(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("hidden test store: %w", err)
	}
	w, err := storeWriter(blobs)
	if err != nil {
		closeFn()
		return nil, fmt.Errorf("hidden test store: %w", err)
	}
	s := &serviceStore{blobs: blobs, writer: w, close: closeFn}
	if !withReader {
		s.readerErr = errors.New("the app role holds no grader identity")
		return s, nil
	}
	if s.reader, err = storeReader(blobs); err != nil {
		s.readerErr = fmt.Errorf("hidden test store: %w", err)
	}
	return s, nil
}

// openGraderStore opens the store at url as the grader role does: the
// grader's side only, with the grader's identity; no recipients, no card
// identity.
func openGraderStore(ctx context.Context, url string) (*store.Reader, func() error, error) {
	r, closeFn, err := OpenStoreReader(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("role grader: hidden test store: %w", err)
	}
	return r, closeFn, nil
}

// refuseGraderIdentity is the app role's start-up check: the grader's
// identity must not be within its reach, neither named by
// TESTFIRST_GRADER_IDENTITY_FILE nor at the default path. It looks at the
// setting and the path's existence only, and opens nothing.
func refuseGraderIdentity(getenv func(string) string) error {
	if p := getenv(EnvGraderIdentity); p != "" {
		return fmt.Errorf("role app: %s is set (%s): the app role must never hold the grader's identity; unset it here and give it to the grader role only (the app seals with the grader's public recipients, %s)",
			EnvGraderIdentity, p, EnvGraderRecipients)
	}
	if _, err := os.Lstat(DefaultGraderIdentity); err == nil {
		return fmt.Errorf("role app: the grader's identity is at %s in this service's working directory: the app role must never hold it; move it to the grader role's machine, and give the app the grader's public recipients (%s)",
			DefaultGraderIdentity, EnvGraderRecipients)
	}
	return nil
}

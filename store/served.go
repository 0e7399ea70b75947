package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// servedName is the object the first service to start on a store
// creates: under tickets/, where the app's account may read (docs/gke.md's
// IAM condition), and outside every ticket's prefix.
const servedName = "tickets/service.json"

// movedPrefix holds a record for each later start at a URL other than the
// newest record's, named by the start's time so that names sort as starts
// do. Objects are never replaced, so a service that moved leaves a new
// record rather than rewriting the first.
const movedPrefix = "tickets/served/"

// Served is the record a service leaves in the store it reads, so that a
// command pushing tests can tell that store from a directory no service
// will ever look at (a writer's own machine, a mistyped path), and send
// the writer to the service's pages.
type Served struct {
	// PublicURL is where the service answers.
	PublicURL string `json:"public_url"`
	// Since is when a service first started on the store at that URL.
	Since time.Time `json:"since"`
}

// MarkServed records that a service answering at publicURL reads the store
// in blobs. The first start creates servedName; a later start adds a
// record under movedPrefix only when the newest record names another URL,
// so restarts in place write nothing.
func MarkServed(ctx context.Context, blobs Blobs, publicURL string, now time.Time) error {
	name := servedName
	switch cur, err := ReadServed(ctx, blobs); {
	case err == nil && cur.PublicURL == publicURL:
		return nil
	case err == nil:
		name = fmt.Sprintf("%s%020d.json", movedPrefix, now.UnixNano())
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("read the store's record of the service that reads it: %w", err)
	}
	data, err := json.Marshal(Served{PublicURL: publicURL, Since: now.UTC()})
	if err != nil {
		return err
	}
	if err := blobs.Create(ctx, name, data); err != nil && !errors.Is(err, ErrExists) {
		return fmt.Errorf("record in the store that this service reads it: %w", err)
	}
	return nil
}

// ReadServed returns the newest record of a service that reads the store
// in blobs, or an error wrapping ErrNotFound when no service ever started
// on it.
func ReadServed(ctx context.Context, blobs Blobs) (Served, error) {
	name := servedName
	moved, err := blobs.List(ctx, movedPrefix)
	if err != nil {
		return Served{}, err
	}
	if len(moved) > 0 {
		name = moved[len(moved)-1]
	}
	data, err := blobs.Read(ctx, name)
	if err != nil {
		return Served{}, err
	}
	var s Served
	if err := json.Unmarshal(data, &s); err != nil {
		return Served{}, fmt.Errorf("the store's %s: %w", name, err)
	}
	return s, nil
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// servedName is the object a service creates in its store when it starts:
// under tickets/, where the app's account may read (docs/gke.md's IAM
// condition), and outside every ticket's prefix.
const servedName = "tickets/service.json"

// Served is the record a service leaves in the store it reads, so that a
// command pushing tests can tell that store from a directory no service
// will ever look at (a writer's own machine, a mistyped path).
type Served struct {
	// PublicURL is where the first service to start on the store answers.
	PublicURL string `json:"public_url"`
	// Since is when it first started on the store.
	Since time.Time `json:"since"`
}

// MarkServed records that a service answering at publicURL reads the store
// in blobs. Objects are never replaced: the first service's record stays,
// and a later start finds it there.
func MarkServed(ctx context.Context, blobs Blobs, publicURL string, now time.Time) error {
	data, err := json.Marshal(Served{PublicURL: publicURL, Since: now.UTC()})
	if err != nil {
		return err
	}
	if err := blobs.Create(ctx, servedName, data); err != nil && !errors.Is(err, ErrExists) {
		return fmt.Errorf("record in the store that this service reads it: %w", err)
	}
	return nil
}

// ReadServed returns the record of the service that reads the store in
// blobs, or an error wrapping ErrNotFound when no service ever started on
// it.
func ReadServed(ctx context.Context, blobs Blobs) (Served, error) {
	data, err := blobs.Read(ctx, servedName)
	if err != nil {
		return Served{}, err
	}
	var s Served
	if err := json.Unmarshal(data, &s); err != nil {
		return Served{}, fmt.Errorf("the store's %s: %w", servedName, err)
	}
	return s, nil
}

package store

import (
	"context"
	"errors"
)

// Errors of a Blobs backend.
var (
	// ErrExists: an object of that name already exists. Objects are never
	// replaced.
	ErrExists = errors.New("object already exists")
	// ErrNotFound: no object of that name.
	ErrNotFound = errors.New("object not found")
)

// Blobs is where a store keeps its objects: a flat namespace of
// slash-separated names, written once and never replaced or deleted. A name
// is never both an object and the start of other names ("a" and "a/b"): a
// backend that keeps a file tree cannot hold both, and the store never asks
// it to.
type Blobs interface {
	// Create writes a new object. It fails with ErrExists when the name is
	// taken, atomically: two concurrent creates of one name never both
	// succeed, and a reader never sees a partly written object.
	Create(ctx context.Context, name string, data []byte) error
	// Read returns an object's content, or ErrNotFound.
	Read(ctx context.Context, name string) ([]byte, error)
	// List returns the names of the objects whose names start with prefix,
	// sorted. No object is not an error.
	List(ctx context.Context, prefix string) ([]string, error)
}

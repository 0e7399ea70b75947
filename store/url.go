package store

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// OpenBlobs opens the backend a store URL names:
//
//	file:///abs/path or file://./rel/path   a local directory (0700)
//	gs://bucket/prefix                      a GCS bucket; STORAGE_EMULATOR_HOST is honoured
//
// The caller closes the returned closer when done.
func OpenBlobs(ctx context.Context, raw string) (Blobs, func() error, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("store URL %q: %w", raw, err)
	}
	switch u.Scheme {
	case "file":
		p := u.Host + u.Path // file://./var/hidden keeps "." as the host
		if p == "" {
			return nil, nil, fmt.Errorf("store URL %q: no path: want file:///abs/path or file://./rel/path", raw)
		}
		b, err := NewFileBlobs(filepath.FromSlash(p))
		if err != nil {
			return nil, nil, err
		}
		return b, func() error { return nil }, nil
	case "gs":
		if u.Host == "" {
			return nil, nil, fmt.Errorf("store URL %q: no bucket: want gs://bucket/prefix", raw)
		}
		b, err := OpenGCS(ctx, u.Host, strings.Trim(u.Path, "/"))
		if err != nil {
			return nil, nil, err
		}
		return b, b.Close, nil
	default:
		return nil, nil, fmt.Errorf("store URL %q: want file://… or gs://bucket/prefix", raw)
	}
}

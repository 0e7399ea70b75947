package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// createBackoff is the backoff between the client's retries of a Create.
var createBackoff = gax.Backoff{Initial: 200 * time.Millisecond, Max: 10 * time.Second, Multiplier: 2}

// GCSBlobs keeps objects in a Google Cloud Storage bucket, below a name
// prefix. A create is an upload with the DoesNotExist precondition
// (ifGenerationMatch=0), so GCS itself refuses to replace an object, and
// GCS makes an object visible whole or not at all. Writes set no ACL: the bucket is
// expected to use uniform bucket-level access.
type GCSBlobs struct {
	bucket *storage.BucketHandle
	prefix string
	// client is the client OpenGCS made, closed by Close; nil when the
	// caller owns it.
	client *storage.Client
}

var _ Blobs = (*GCSBlobs)(nil)

// NewGCSBlobs returns the store kept in bucket below prefix, reached through
// client. The prefix is joined before every object name with a slash ("t"
// and "t/" both keep "a/b" as "t/a/b"); "" keeps names as they are. Leading
// slashes of the prefix are dropped. It does no I/O.
func NewGCSBlobs(ctx context.Context, client *storage.Client, bucket, prefix string) *GCSBlobs {
	prefix = strings.TrimLeft(prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &GCSBlobs{bucket: client.Bucket(bucket), prefix: prefix}
}

// OpenGCS makes a storage client (JSON API over HTTP) with opts and returns
// the store kept in bucket below prefix, as NewGCSBlobs does. Without opts
// the client uses Application Default Credentials. When STORAGE_EMULATOR_HOST
// is set (host:port, or a URL such as http://host:port), storage.NewClient
// itself sends every request there, over plain HTTP unless the URL says
// otherwise, and without authentication; no option is needed for an emulator.
//
// It fails fast: it lists at most one object under the prefix, which proves
// the credentials, the bucket and the list permission the store needs.
func OpenGCS(ctx context.Context, bucket, prefix string, opts ...option.ClientOption) (*GCSBlobs, error) {
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("open gcs bucket %s: %w", bucket, err)
	}
	b := NewGCSBlobs(ctx, client, bucket, prefix)
	q := &storage.Query{Prefix: b.prefix}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		client.Close()
		return nil, fmt.Errorf("open gcs bucket %s: %w", bucket, err)
	}
	it := b.bucket.Objects(ctx, q)
	it.PageInfo().MaxSize = 1
	if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
		client.Close()
		return nil, fmt.Errorf("open gcs bucket %s: list %s: %w", bucket, b.prefix, err)
	}
	b.client = client
	return b, nil
}

// Close closes the client that OpenGCS made. It does nothing for a store
// made by NewGCSBlobs: the client belongs to the caller.
func (b *GCSBlobs) Close() error {
	if b.client == nil {
		return nil
	}
	if err := b.client.Close(); err != nil {
		return fmt.Errorf("close gcs client: %w", err)
	}
	return nil
}

// object returns the handle of the object called name in the store, or an
// error for a name FileBlobs would refuse too, so that both backends accept
// the same names.
func (b *GCSBlobs) object(name string) (*storage.ObjectHandle, error) {
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." || name == "." {
		return nil, fmt.Errorf("object name %q is not clean and relative", name)
	}
	return b.bucket.Object(b.prefix + name), nil
}

// Create implements Blobs.
func (b *GCSBlobs) Create(ctx context.Context, name string, data []byte) error {
	obj, err := b.object(name)
	if err != nil {
		return err
	}
	// The client retries transient failures (408, 429, 5xx, reset
	// connections) itself, resending the whole upload from its buffer. That
	// is safe because of the DoesNotExist precondition: a repeated upload can
	// never replace an object, so the create is idempotent. The client
	// already counts a conditional upload as idempotent; RetryAlways says so
	// explicitly. One consequence: if an attempt succeeds but its response is
	// lost, the retry fails the precondition and Create reports ErrExists for
	// the object it wrote itself.
	obj = obj.If(storage.Conditions{DoesNotExist: true}).
		Retryer(storage.WithPolicy(storage.RetryAlways), storage.WithBackoff(createBackoff))

	// Cancelling ctx is the only way to abandon a Writer without creating
	// the object.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := obj.NewWriter(ctx)
	w.ContentType = "application/octet-stream"
	// A chunk larger than the object makes the client send it in one
	// request (a multipart upload) from a buffer it can resend on retry; a
	// ChunkSize of 0 would also be one request but without the buffer, so
	// without retries. Larger objects go as a resumable upload, which carries
	// the precondition to its final chunk.
	w.ChunkSize = min(len(data)+1, googleapi.DefaultUploadChunkSize)
	if _, err := w.Write(data); err != nil {
		cancel()
		w.Close()
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		if preconditionFailed(err) {
			return fmt.Errorf("create %s: %w", name, ErrExists)
		}
		return fmt.Errorf("create %s: %w", name, err)
	}
	return nil
}

// preconditionFailed reports whether err is GCS refusing a request because a
// precondition failed: HTTP 412 from the JSON API, FAILED_PRECONDITION from
// gRPC. The storage library has no sentinel for it; this mirrors how it
// recognises NotFound for ErrObjectNotExist.
func preconditionFailed(err error) bool {
	var e *googleapi.Error
	if errors.As(err, &e) && e.Code == http.StatusPreconditionFailed {
		return true
	}
	s, ok := status.FromError(err)
	return ok && s.Code() == codes.FailedPrecondition
}

// Read implements Blobs.
func (b *GCSBlobs) Read(ctx context.Context, name string) ([]byte, error) {
	obj, err := b.object(name)
	if err != nil {
		return nil, err
	}
	// Reads use the client's default policy, which retries them: a read is
	// idempotent.
	r, err := obj.NewReader(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, fmt.Errorf("read %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// List implements Blobs.
func (b *GCSBlobs) List(ctx context.Context, prefix string) ([]string, error) {
	q := &storage.Query{Prefix: b.prefix + prefix}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	var names []string
	it := b.bucket.Objects(ctx, q)
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		names = append(names, strings.TrimPrefix(attrs.Name, b.prefix))
	}
	slices.Sort(names)
	return names, nil
}

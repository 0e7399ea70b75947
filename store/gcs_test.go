package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/googleapi"
)

const testBucket = "testfirst-hidden-tests"

// startEmulator runs fake-gcs-server in this process on a free port of
// 127.0.0.1 (plain HTTP, in-memory backend) with an empty bucket, and points
// STORAGE_EMULATOR_HOST at it, so that OpenGCS reaches it exactly as it
// would reach GCS in production.
func startEmulator(t *testing.T) *fakestorage.Server {
	t.Helper()
	server, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http",
		Host:   "127.0.0.1",
		Port:   0,
		// The client reads objects through the XML API, path-style:
		// GET http://$STORAGE_EMULATOR_HOST/bucket/object. The emulator
		// serves that path only for requests to its public host (port
		// ignored); with the default, storage.googleapis.com, it takes
		// 127.0.0.1:port for a bucket name and answers 404.
		PublicHost: "127.0.0.1",
	})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(server.Stop)
	server.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: testBucket})
	u, err := url.Parse(server.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", u.Host)
	return server
}

// openGCS opens the store below prefix in the test bucket through
// STORAGE_EMULATOR_HOST, with no client option at all.
func openGCS(t *testing.T, prefix string) *GCSBlobs {
	t.Helper()
	b, err := OpenGCS(t.Context(), testBucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestGCSBlobsContract(t *testing.T) {
	startEmulator(t)
	// Every subtest gets its own prefix (its name) in the one bucket.
	testBlobsContract(t, func(t *testing.T) Blobs {
		return openGCS(t, t.Name())
	})
}

func TestGCSEmulatorHost(t *testing.T) {
	server := startEmulator(t)
	u, err := url.Parse(server.URL())
	if err != nil {
		t.Fatal(err)
	}
	// Were the client to look for Application Default Credentials, this
	// would make it fail.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	for _, host := range []string{u.Host, "http://" + u.Host} {
		t.Run(host, func(t *testing.T) {
			t.Setenv("STORAGE_EMULATOR_HOST", host)
			b := openGCS(t, "emulator-host")
			name := strings.ReplaceAll(host, "/", "_")
			mustCreate(t, b, name, []byte(host))
			obj, err := server.GetObject(testBucket, "emulator-host/"+name)
			if err != nil {
				t.Fatalf("the emulator does not have the object: %v", err)
			}
			if diff := cmp.Diff(host, string(obj.Content)); diff != "" {
				t.Errorf("content in the emulator (-want +got):\n%s", diff)
			}
			if obj.ContentType != "application/octet-stream" {
				t.Errorf("content type: got %q, want application/octet-stream", obj.ContentType)
			}
		})
	}
}

func TestOpenGCSMissingBucket(t *testing.T) {
	startEmulator(t)
	_, err := OpenGCS(t.Context(), "no-such-bucket", "p")
	if err == nil {
		t.Fatal("open of a missing bucket: no error")
	}
	if !errors.Is(err, storage.ErrBucketNotExist) || !strings.Contains(err.Error(), "no-such-bucket") {
		t.Errorf("got %q, want storage.ErrBucketNotExist naming the bucket", err)
	}
}

func TestGCSPrefixIsolation(t *testing.T) {
	server := startEmulator(t)
	client, err := storage.NewClient(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	a := NewGCSBlobs(t.Context(), client, testBucket, "iso/a")
	// "iso/ab" starts with "iso/a" as a string, but not as a path.
	ab := NewGCSBlobs(t.Context(), client, testBucket, "iso/ab/")
	// The same store as a: the leading slash is dropped and a slash joins.
	aAgain := NewGCSBlobs(t.Context(), client, testBucket, "/iso/a/")
	whole := NewGCSBlobs(t.Context(), client, testBucket, "")

	mustCreate(t, a, "x", []byte("in a"))
	mustCreate(t, ab, "x", []byte("in ab"))
	mustCreate(t, ab, "only-ab", []byte("in ab"))

	if diff := cmp.Diff([]byte("in a"), mustRead(t, a, "x")); diff != "" {
		t.Errorf("a/x (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]byte("in ab"), mustRead(t, ab, "x")); diff != "" {
		t.Errorf("ab/x (-want +got):\n%s", diff)
	}
	if _, err := a.Read(t.Context(), "only-ab"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a reads ab's object: got %v, want ErrNotFound", err)
	}
	if err := aAgain.Create(t.Context(), "x", []byte("again")); !errors.Is(err, ErrExists) {
		t.Errorf("create x through /iso/a/: got %v, want ErrExists", err)
	}
	tests := []struct {
		store *GCSBlobs
		name  string
		want  []string
	}{
		{a, "a", []string{"x"}},
		{aAgain, "/iso/a/", []string{"x"}},
		{ab, "ab", []string{"only-ab", "x"}},
		{whole, "bucket", []string{"iso/a/x", "iso/ab/only-ab", "iso/ab/x"}},
	}
	for _, tt := range tests {
		got, err := tt.store.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("list of %s (-want +got):\n%s", tt.name, diff)
		}
	}
	// The emulator's own view of the names.
	obj, err := server.GetObject(testBucket, "iso/a/x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("in a", string(obj.Content)); diff != "" {
		t.Errorf("iso/a/x in the emulator (-want +got):\n%s", diff)
	}
}

// TestGCSPrecondition shows that the emulator really enforces the
// DoesNotExist precondition on each upload path of the client, so that
// ErrExists in the contract test comes from the server, not from luck: the
// second conditional write gets HTTP 412 and leaves the first content, and
// an unconditional write of the same name (the control) replaces it.
func TestGCSPrecondition(t *testing.T) {
	server := startEmulator(t)
	proxy := startFaultProxy(t, server)
	client, err := storage.NewClient(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	tests := []struct {
		name       string
		chunkSize  int
		size       int
		wantUpload string
	}{
		{"single request, no buffer (ChunkSize 0)", 0, 1000, "multipart"},
		{"single request from buffer (Create's path)", 1001, 1000, "multipart"},
		{"single request, default chunk", googleapi.DefaultUploadChunkSize, 1000, "multipart"},
		{"resumable, several chunks", googleapi.MinUploadChunkSize, 3*googleapi.MinUploadChunkSize + 7, "resumable"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("precondition/%d", i)
			write := func(fill byte, conds *storage.Conditions) error {
				obj := client.Bucket(testBucket).Object(name)
				if conds != nil {
					obj = obj.If(*conds)
				}
				w := obj.NewWriter(t.Context())
				w.ChunkSize = tt.chunkSize
				if _, err := w.Write(bytes.Repeat([]byte{fill}, tt.size)); err != nil {
					w.Close()
					return err
				}
				return w.Close()
			}
			content := func() byte {
				obj, err := server.GetObject(testBucket, name)
				if err != nil {
					t.Fatal(err)
				}
				if len(obj.Content) != tt.size {
					t.Fatalf("object has %d bytes, want %d", len(obj.Content), tt.size)
				}
				return obj.Content[0]
			}
			doesNotExist := &storage.Conditions{DoesNotExist: true}

			proxy.uploads()
			if err := write('1', doesNotExist); err != nil {
				t.Fatalf("first conditional write: %v", err)
			}
			uploads := proxy.uploads()
			if len(uploads) != 1 || uploads[0].Get("uploadType") != tt.wantUpload || uploads[0].Get("ifGenerationMatch") != "0" {
				t.Errorf("first conditional write started with %v, want one %s upload with ifGenerationMatch=0", uploads, tt.wantUpload)
			}
			err := write('2', doesNotExist)
			var gerr *googleapi.Error
			if !errors.As(err, &gerr) || gerr.Code != http.StatusPreconditionFailed {
				t.Fatalf("second conditional write: got %v, want HTTP 412", err)
			}
			if !preconditionFailed(err) {
				t.Errorf("preconditionFailed(%v) = false", err)
			}
			if got := content(); got != '1' {
				t.Errorf("after refused write: content %q, want the first", got)
			}
			if err := write('3', nil); err != nil {
				t.Fatalf("unconditional write: %v", err)
			}
			if got := content(); got != '3' {
				t.Errorf("after unconditional write: content %q, want the third", got)
			}
		})
	}
}

// faultProxy stands between the storage client and the emulator. It
// records the query of each upload request that starts an upload, and can
// answer the next requests to a path with 503, either instead of passing
// them on or after passing them on (a response lost on the way back). It
// fakes nothing of the storage API: every request it lets through is
// answered by the emulator.
type faultProxy struct {
	proxy *httputil.ReverseProxy

	mu      sync.Mutex
	queries []url.Values
	faults  []fault
	hits    map[string]int
}

// fault is a 503 for the next request whose path starts with path.
type fault struct {
	path    string
	forward bool
}

// startFaultProxy runs a faultProxy before server and points
// STORAGE_EMULATOR_HOST at it.
func startFaultProxy(t *testing.T, server *fakestorage.Server) *faultProxy {
	t.Helper()
	target, err := url.Parse(server.URL())
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{
		proxy: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }},
		hits:  map[string]int{},
	}
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", u.Host)
	return p
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hits[r.URL.Path]++
	if strings.HasPrefix(r.URL.Path, "/upload/") && r.Method == http.MethodPost {
		p.queries = append(p.queries, r.URL.Query())
	}
	var f *fault
	for i := range p.faults {
		if strings.HasPrefix(r.URL.Path, p.faults[i].path) {
			f = &p.faults[i]
			p.faults = append(p.faults[:i:i], p.faults[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if f == nil {
		p.proxy.ServeHTTP(w, r)
		return
	}
	if f.forward {
		p.proxy.ServeHTTP(httptest.NewRecorder(), r)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, `{"error":{"code":503,"message":"injected by faultProxy"}}`)
}

// fail makes the next request to a path starting with path fail with 503,
// after passing it on if forward.
func (p *faultProxy) fail(path string, forward bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, fault{path: path, forward: forward})
}

// uploads returns the queries of the uploads started since the last call.
func (p *faultProxy) uploads() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queries
	p.queries = nil
	return q
}

// hitsOf returns how many requests went to path.
func (p *faultProxy) hitsOf(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

// TestGCSRetries shows that transient failures are retried by the client's
// own retry configuration, and what a lost response to a create becomes.
func TestGCSRetries(t *testing.T) {
	server := startEmulator(t)
	proxy := startFaultProxy(t, server)
	b := openGCS(t, "retries")
	uploadPath := "/upload/storage/v1/b/" + testBucket + "/o"

	t.Run("create after a 503", func(t *testing.T) {
		proxy.uploads()
		proxy.fail(uploadPath, false)
		mustCreate(t, b, "c", []byte("content"))
		uploads := proxy.uploads()
		if len(uploads) != 2 {
			t.Fatalf("got %d upload requests, want 2 (a 503, then the retry)", len(uploads))
		}
		for _, q := range uploads {
			if q.Get("ifGenerationMatch") != "0" || q.Get("uploadType") != "multipart" || q.Has("predefinedAcl") {
				t.Errorf("upload query %v: want multipart, ifGenerationMatch=0, no predefinedAcl", q)
			}
		}
		if diff := cmp.Diff([]byte("content"), mustRead(t, b, "c")); diff != "" {
			t.Errorf("read (-want +got):\n%s", diff)
		}
	})

	t.Run("create whose response was lost", func(t *testing.T) {
		// The first attempt creates the object but its answer is a 503;
		// the retry then fails the precondition. Create reports ErrExists,
		// and the object is the one it wrote.
		proxy.fail(uploadPath, true)
		err := b.Create(t.Context(), "lost", []byte("mine"))
		if !errors.Is(err, ErrExists) {
			t.Fatalf("got %v, want ErrExists", err)
		}
		if diff := cmp.Diff([]byte("mine"), mustRead(t, b, "lost")); diff != "" {
			t.Errorf("read (-want +got):\n%s", diff)
		}
	})

	t.Run("read after a 503", func(t *testing.T) {
		mustCreate(t, b, "r", []byte("read me"))
		objectPath := "/" + testBucket + "/retries/r"
		before := proxy.hitsOf(objectPath)
		proxy.fail(objectPath, false)
		if diff := cmp.Diff([]byte("read me"), mustRead(t, b, "r")); diff != "" {
			t.Errorf("read (-want +got):\n%s", diff)
		}
		if got := proxy.hitsOf(objectPath) - before; got != 2 {
			t.Errorf("got %d read requests, want 2 (a 503, then the retry)", got)
		}
	})
}

// TestGCSStore runs the store's own contract on GCS through the emulator.
// Tampering overwrites an object with a raw client, without the store's
// precondition, as someone holding more than the app's create-only role
// could.
func TestGCSStore(t *testing.T) {
	server := startEmulator(t)
	testStoreContract(t, func(t *testing.T) backend {
		prefix := "store/" + t.Name()
		return backend{
			blobs: openGCS(t, prefix),
			tamper: func(t *testing.T, name string, change func([]byte) []byte) {
				obj := server.Client().Bucket(testBucket).Object(prefix + "/" + name)
				r, err := obj.NewReader(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(r)
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
				w := obj.NewWriter(t.Context())
				if _, err := w.Write(change(data)); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testBlobsContract checks that a Blobs backend keeps the promises of the
// interface. open returns a new, empty store for each subtest.
func testBlobsContract(t *testing.T, open func(t *testing.T) Blobs) {
	t.Run("create then read", func(t *testing.T) {
		b := open(t)
		mustCreate(t, b, "v1/test.go", []byte("package x_test\n"))
		if diff := cmp.Diff([]byte("package x_test\n"), mustRead(t, b, "v1/test.go")); diff != "" {
			t.Errorf("read after create (-want +got):\n%s", diff)
		}
	})

	t.Run("create existing", func(t *testing.T) {
		b := open(t)
		mustCreate(t, b, "x", []byte("first"))
		err := b.Create(t.Context(), "x", []byte("second"))
		if !errors.Is(err, ErrExists) {
			t.Fatalf("second create: got %v, want ErrExists", err)
		}
		if !strings.Contains(err.Error(), "x") {
			t.Errorf("error %q does not name the object", err)
		}
		if diff := cmp.Diff([]byte("first"), mustRead(t, b, "x")); diff != "" {
			t.Errorf("content after refused create (-want +got):\n%s", diff)
		}
	})

	t.Run("read missing", func(t *testing.T) {
		b := open(t)
		mustCreate(t, b, "present", []byte("p"))
		for _, name := range []string{"absent", "presen", "dir/absent"} {
			_, err := b.Read(t.Context(), name)
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("read %s: got %v, want ErrNotFound", name, err)
			}
		}
	})

	t.Run("read below an object", func(t *testing.T) {
		// The namespace is flat: "present/below" is simply another name
		// that no object has.
		b := open(t)
		mustCreate(t, b, "present", []byte("p"))
		_, err := b.Read(t.Context(), "present/below")
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("read present/below: got %v, want ErrNotFound", err)
		}
	})

	t.Run("list", func(t *testing.T) {
		b := open(t)
		// Created out of order, to show List sorts.
		for _, name := range []string{"v/2", "w/1", "a", "v/1", "vx", "v/10"} {
			mustCreate(t, b, name, []byte(name))
		}
		tests := []struct {
			prefix string
			want   []string
		}{
			{"", []string{"a", "v/1", "v/10", "v/2", "vx", "w/1"}},
			{"v/", []string{"v/1", "v/10", "v/2"}},
			{"v", []string{"v/1", "v/10", "v/2", "vx"}},
			{"v/1", []string{"v/1", "v/10"}},
			{"w/", []string{"w/1"}},
			{"none/", nil},
			{"z", nil},
			// Directories that do not exist, or that are objects.
			{"none/deeper/", nil},
			{"none/x", nil},
			{"a/", nil},
			{"a/x", nil},
			{"vx/", nil},
			{"v/1/", nil},
			{"v/1/x", nil},
			// Prefixes no clean name can start with.
			{"/", nil},
			{"/v", nil},
			{"./", nil},
			{"./v", nil},
			{"v//", nil},
			{"../", nil},
			{"v/../v/", nil},
		}
		for _, tt := range tests {
			got, err := b.List(t.Context(), tt.prefix)
			if err != nil {
				t.Fatalf("list %q: %v", tt.prefix, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("list %q (-want +got):\n%s", tt.prefix, diff)
			}
		}
	})

	t.Run("cancelled context", func(t *testing.T) {
		b := open(t)
		mustCreate(t, b, "present", []byte("p"))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.Create(ctx, "new", []byte("n")); !errors.Is(err, context.Canceled) {
			t.Errorf("create: got %v, want context.Canceled", err)
		}
		if _, err := b.Read(ctx, "present"); !errors.Is(err, context.Canceled) {
			t.Errorf("read: got %v, want context.Canceled", err)
		}
		for _, prefix := range []string{"", "pre", "dir/"} {
			if _, err := b.List(ctx, prefix); !errors.Is(err, context.Canceled) {
				t.Errorf("list %q: got %v, want context.Canceled", prefix, err)
			}
		}
		got, err := b.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"present"}, got); diff != "" {
			t.Errorf("a cancelled create left an object (-want +got):\n%s", diff)
		}
	})

	t.Run("list empty store", func(t *testing.T) {
		b := open(t)
		got, err := b.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("list of an empty store: got %q, want nothing", got)
		}
	})

	t.Run("nested names", func(t *testing.T) {
		b := open(t)
		mustCreate(t, b, "tickets/T-1/versions/3/hidden_test.go.age", []byte("deep"))
		mustCreate(t, b, "tickets/T-1/versions/3/meta.json", []byte("{}"))
		if diff := cmp.Diff([]byte("deep"), mustRead(t, b, "tickets/T-1/versions/3/hidden_test.go.age")); diff != "" {
			t.Errorf("read nested (-want +got):\n%s", diff)
		}
		got, err := b.List(t.Context(), "tickets/T-1/")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"tickets/T-1/versions/3/hidden_test.go.age", "tickets/T-1/versions/3/meta.json"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("list nested (-want +got):\n%s", diff)
		}
	})

	t.Run("empty object", func(t *testing.T) {
		b := open(t)
		mustCreate(t, b, "empty", nil)
		if got := mustRead(t, b, "empty"); len(got) != 0 {
			t.Errorf("read empty object: got %d bytes", len(got))
		}
		if err := b.Create(t.Context(), "empty", []byte("now full")); !errors.Is(err, ErrExists) {
			t.Errorf("create over empty object: got %v, want ErrExists", err)
		}
	})

	t.Run("1 MiB object", func(t *testing.T) {
		b := open(t)
		data := make([]byte, 1<<20)
		rand.Read(data)
		mustCreate(t, b, "big", data)
		if got := mustRead(t, b, "big"); !bytes.Equal(got, data) {
			t.Errorf("read 1 MiB object: got %d bytes, not the ones written", len(got))
		}
	})

	t.Run("binary data", func(t *testing.T) {
		b := open(t)
		data := make([]byte, 0, 3*256)
		for range 3 {
			for c := range 256 {
				data = append(data, byte(c))
			}
		}
		data = append(data, "\r\n\x00\xff\xfe"...)
		mustCreate(t, b, "bin", data)
		if diff := cmp.Diff(data, mustRead(t, b, "bin")); diff != "" {
			t.Errorf("binary round trip (-want +got):\n%s", diff)
		}
	})

	t.Run("concurrent creates", func(t *testing.T) {
		b := open(t)
		const writers = 16
		var (
			wg        sync.WaitGroup
			wins      atomic.Int32
			winner    atomic.Int32
			errs      = make([]error, writers)
			contentOf = func(i int) []byte { return fmt.Appendf(nil, "written by %d", i) }
		)
		for i := range writers {
			wg.Go(func() {
				errs[i] = b.Create(t.Context(), "race", contentOf(i))
				if errs[i] == nil {
					wins.Add(1)
					winner.Store(int32(i))
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("%d of %d concurrent creates succeeded, want exactly 1; errors: %v", n, writers, errs)
		}
		for i, err := range errs {
			if err != nil && !errors.Is(err, ErrExists) {
				t.Errorf("writer %d: got %v, want ErrExists", i, err)
			}
		}
		if diff := cmp.Diff(contentOf(int(winner.Load())), mustRead(t, b, "race")); diff != "" {
			t.Errorf("content is not the winner's (-want +got):\n%s", diff)
		}
	})

	t.Run("unclean names refused", func(t *testing.T) {
		b := open(t)
		for _, name := range []string{"", ".", "../x", "..", "/abs", "a/../b", "a//b", "./a", "a/"} {
			if err := b.Create(t.Context(), name, []byte("x")); err == nil {
				t.Errorf("create %q: no error", name)
			}
			if _, err := b.Read(t.Context(), name); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("read %q: got %v, want a refusal", name, err)
			}
		}
		got, err := b.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("refused names left objects: %q", got)
		}
	})
}

func mustCreate(t *testing.T, b Blobs, name string, data []byte) {
	t.Helper()
	if err := b.Create(t.Context(), name, data); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, b Blobs, name string) []byte {
	t.Helper()
	data, err := b.Read(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFileBlobsContract(t *testing.T) {
	testBlobsContract(t, func(t *testing.T) Blobs {
		b, err := NewFileBlobs(t.TempDir() + "/store")
		if err != nil {
			t.Fatal(err)
		}
		return b
	})

	t.Run("modes", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "store")
		b, err := NewFileBlobs(root)
		if err != nil {
			t.Fatal(err)
		}
		mustCreate(t, b, "a/b/c", []byte("x"))
		tests := []struct {
			path string
			want fs.FileMode
		}{
			{root, fs.ModeDir | 0o700},
			{filepath.Join(root, "a"), fs.ModeDir | 0o700},
			{filepath.Join(root, "a", "b"), fs.ModeDir | 0o700},
			{filepath.Join(root, "a", "b", "c"), 0o600},
		}
		for _, tt := range tests {
			info, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode(); got != tt.want {
				t.Errorf("mode of %s: got %v, want %v", tt.path, got, tt.want)
			}
		}
	})

	t.Run("open root", func(t *testing.T) {
		tests := []struct {
			mode    fs.FileMode
			wantErr string
		}{
			{0o700, ""},
			{0o755, "chmod 700"},
			{0o750, "chmod 700"},
			{0o707, "chmod 700"},
		}
		for _, tt := range tests {
			root := t.TempDir()
			if err := os.Chmod(root, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, err := NewFileBlobs(root)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("open root %o: %v", tt.mode, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("open root %o: got %v, want an error saying %q", tt.mode, err, tt.wantErr)
			}
		}
	})

	t.Run("list walks only the directory the prefix names", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "store")
		b, err := NewFileBlobs(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"tickets/0/o/r/7/v1/claim", "tickets/0/o/r/7/v2/meta.json", "tickets/0/o/r/7/w", "tickets/0/o/r/8/v1/claim", "top"} {
			mustCreate(t, b, name, nil)
		}
		var walked []string
		t.Cleanup(func() { walkDir = filepath.WalkDir })
		walkDir = func(dir string, fn fs.WalkDirFunc) error {
			walked = append(walked, dir)
			return filepath.WalkDir(dir, fn)
		}
		seven := filepath.Join(root, "tickets", "0", "o", "r", "7")
		tests := []struct {
			prefix string
			walk   []string
			want   []string
		}{
			{"tickets/0/o/r/7/", []string{seven}, []string{"tickets/0/o/r/7/v1/claim", "tickets/0/o/r/7/v2/meta.json", "tickets/0/o/r/7/w"}},
			{"tickets/0/o/r/7/v", []string{seven}, []string{"tickets/0/o/r/7/v1/claim", "tickets/0/o/r/7/v2/meta.json"}},
			{"tickets/0/o/r/7/v2/", []string{filepath.Join(seven, "v2")}, []string{"tickets/0/o/r/7/v2/meta.json"}},
			{"tickets/0/o/r/9/", nil, nil},
			{"tickets/1/o/r/7/v", nil, nil},
			{"top/", nil, nil},
			{"t", []string{root}, []string{"tickets/0/o/r/7/v1/claim", "tickets/0/o/r/7/v2/meta.json", "tickets/0/o/r/7/w", "tickets/0/o/r/8/v1/claim", "top"}},
		}
		for _, tt := range tests {
			walked = nil
			got, err := b.List(t.Context(), tt.prefix)
			if err != nil {
				t.Fatalf("list %q: %v", tt.prefix, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("list %q (-want +got):\n%s", tt.prefix, diff)
			}
			if diff := cmp.Diff(tt.walk, walked, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("list %q walked (-want +got):\n%s", tt.prefix, diff)
			}
		}
	})

	t.Run("names stay below root", func(t *testing.T) {
		parent := t.TempDir()
		b, err := NewFileBlobs(filepath.Join(parent, "store"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"../x", "/abs", "a/../../x"} {
			if err := b.Create(t.Context(), name, []byte("escaped")); err == nil {
				t.Errorf("create %q: no error", name)
			}
		}
		if _, err := os.Stat(filepath.Join(parent, "x")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a file appeared beside the root: %v", err)
		}
	})
}

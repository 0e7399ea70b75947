package github

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type entry struct {
	hdr  tar.Header
	body string
}

func tarball(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

func TestExtractTarball(t *testing.T) {
	good := tarball(t,
		entry{hdr: tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "abc123"}}},
		entry{hdr: tar.Header{Name: "octo-widgets-abc123/", Typeflag: tar.TypeDir, Mode: 0o755}},
		entry{hdr: tar.Header{Name: "octo-widgets-abc123/README.md", Typeflag: tar.TypeReg, Mode: 0o644}, body: "hi\n"},
		entry{hdr: tar.Header{Name: "octo-widgets-abc123/bin/run", Typeflag: tar.TypeReg, Mode: 0o755}, body: "#!/bin/sh\n"},
		entry{hdr: tar.Header{Name: "octo-widgets-abc123/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}},
	)
	got, err := ExtractTarball(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []TreeEntry{
		{Path: "README.md", Mode: 0o644, Data: []byte("hi\n")},
		{Path: "bin/run", Mode: 0o755, Data: []byte("#!/bin/sh\n")},
		{Path: "link", Mode: fs.ModeSymlink | 0o777, Link: "/etc/passwd"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExtractTarball (-want +got):\n%s", diff)
	}

	bad := []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", []byte("plain"), "read tarball"},
		{"two top directories", tarball(t,
			entry{hdr: tar.Header{Name: "a/x", Typeflag: tar.TypeReg}, body: "1"},
			entry{hdr: tar.Header{Name: "b/y", Typeflag: tar.TypeReg}, body: "2"}), "outside the top directory"},
		{"escaping path", tarball(t, entry{hdr: tar.Header{Name: "a/../../etc/x", Typeflag: tar.TypeReg}, body: "1"}), "leaves the tree"},
	}
	for _, tt := range bad {
		if _, err := ExtractTarball(bytes.NewReader(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

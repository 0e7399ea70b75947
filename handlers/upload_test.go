package handlers

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// TestUnpack: an uploaded archive gives its regular files; a link, a
// path that leaves the archive and an archive too large once unpacked are
// refused with what is wrong.
func TestUnpack(t *testing.T) {
	tarGz := func(add func(*tar.Writer)) []byte {
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		tw := tar.NewWriter(gz)
		add(tw)
		tw.Close()
		gz.Close()
		return b.Bytes()
	}
	file := func(tw *tar.Writer, name string, data []byte) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write(data)
	}
	good := tarGz(func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "tests/", Mode: 0o755, Typeflag: tar.TypeDir})
		file(tw, "./tests/test_a.py", []byte("def test_a(): pass\n"))
	})
	files, err := unpack("hidden.tar.gz", good)
	if err != nil || len(files) != 1 || files[0].Path != "tests/test_a.py" {
		t.Fatalf("unpack = %+v, %v", files, err)
	}
	link := tarGz(func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "tests/test_a.py", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	})
	if _, err := unpack("hidden.tgz", link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlink: %v", err)
	}
	big := tarGz(func(tw *tar.Writer) { file(tw, "tests/test_big.py", make([]byte, maxUnpackedUpload+1)) })
	if _, err := unpack("hidden.tar.gz", big); err == nil || !strings.Contains(err.Error(), "unpacks to more than") {
		t.Errorf("an archive too large unpacked: %v", err)
	}
	if _, err := unpack("hidden.zip", []byte("not a zip")); err == nil || !strings.Contains(err.Error(), "not a zip archive") {
		t.Errorf("a broken zip: %v", err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("../test_x.py")
	w.Write([]byte("def test_x(): pass\n"))
	zw.Close()
	files, err = unpack("hidden.zip", zb.Bytes())
	if err != nil || len(files) != 1 || files[0].Path != "../test_x.py" {
		t.Fatalf("unpack zip = %+v, %v", files, err)
	}
}

package github

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// Limits on a downloaded tree, matching what the grader accepts.
const (
	MaxTreeFiles = 50_000
	MaxTreeBytes = 256 << 20
)

// TreeEntry is a regular file or a symlink of a downloaded tree.
type TreeEntry struct {
	Path string // slash-separated, relative to the repository root
	Mode fs.FileMode
	Data []byte
	Link string // a symlink's target, never followed
}

// ExtractTarball reads a gzip tarball as GitHub serves it — one top
// directory holding the tree — and returns the tree's regular files and
// symlinks with the top directory stripped. Paths that are absolute or
// leave the tree, and trees over MaxTreeFiles or MaxTreeBytes, are errors.
func ExtractTarball(r io.Reader) ([]TreeEntry, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read tarball: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var (
		out   []TreeEntry
		top   string
		total int64
	)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read tarball: %w", err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // GitHub's pax header naming the commit
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		first, rest, _ := strings.Cut(name, "/")
		if top == "" {
			top = first
		}
		if first != top {
			return nil, fmt.Errorf("read tarball: entry %q is outside the top directory %q", hdr.Name, top)
		}
		rest = strings.TrimSuffix(rest, "/")
		if rest == "" {
			continue
		}
		if path.IsAbs(rest) || path.Clean(rest) != rest || rest == ".." || strings.HasPrefix(rest, "../") {
			return nil, fmt.Errorf("read tarball: entry %q leaves the tree", hdr.Name)
		}
		if len(out) >= MaxTreeFiles {
			return nil, fmt.Errorf("read tarball: more than %d files", MaxTreeFiles)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			total += hdr.Size
			if total > MaxTreeBytes {
				return nil, fmt.Errorf("read tarball: more than %d MiB of files", MaxTreeBytes>>20)
			}
			data, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
			if err != nil {
				return nil, fmt.Errorf("read tarball: %s: %w", rest, err)
			}
			out = append(out, TreeEntry{Path: rest, Mode: fs.FileMode(hdr.Mode).Perm(), Data: data})
		case tar.TypeSymlink:
			out = append(out, TreeEntry{Path: rest, Mode: fs.ModeSymlink | 0o777, Link: hdr.Linkname})
		default:
			// Submodule links and the like carry no content to grade.
		}
	}
}

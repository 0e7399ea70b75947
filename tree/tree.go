package tree

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Tree limits: a tree larger than this is refused with an error that says so.
const (
	MaxTreeFiles = 50_000
	MaxTreeBytes = 256 << 20
)

// File is one entry of a Tree: a regular file or a symlink. Directories are
// implied by the paths of the files in them.
type File struct {
	// Path is slash-separated, relative and clean ("pkg/mod.py").
	Path string
	// Mode is the file's permission bits plus fs.ModeSymlink for a symlink.
	Mode fs.FileMode
	// Data is a regular file's content.
	Data []byte
	// Link is a symlink's target, exactly as stored; it is never followed.
	Link string
}

// IsSymlink reports whether f is a symlink.
func (f *File) IsSymlink() bool { return f.Mode&fs.ModeSymlink != 0 }

// Tree is a snapshot of a directory held in memory, sorted by path. A tree is
// read once from disk and then only ever read: detectors scan it, the digest
// is computed over it and the sandbox receives it as a tar stream.
type Tree struct {
	Files []File
	// Skipped lists entries that were not taken: .git, sockets, devices.
	Skipped []string
}

// Load reads dir into a Tree. It never follows a symlink inside dir (dir
// itself may be one), leaves out any
// .git directory and refuses trees over MaxTreeFiles or MaxTreeBytes.
func Load(dir string) (*Tree, error) {
	// The directory named may itself be a symlink: follow that one only.
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("read tree %s: not a directory", dir)
	}
	t := &Tree{}
	var total int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				t.Skipped = append(t.Skipped, rel)
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == ".git" {
			// A .git file (worktree or submodule pointer) is never copied either.
			t.Skipped = append(t.Skipped, rel)
			return nil
		}
		if len(t.Files) >= MaxTreeFiles {
			return fmt.Errorf("more than %d files: grade a smaller tree", MaxTreeFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			t.Files = append(t.Files, File{Path: rel, Mode: fs.ModeSymlink | 0o777, Link: target})
		case info.Mode().IsRegular():
			total += info.Size()
			if total > MaxTreeBytes {
				return fmt.Errorf("more than %d MiB of files: grade a smaller tree", MaxTreeBytes>>20)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			t.Files = append(t.Files, File{Path: rel, Mode: info.Mode().Perm(), Data: data})
		default:
			t.Skipped = append(t.Skipped, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", dir, err)
	}
	t.sort()
	return t, nil
}

// New builds a Tree from files, checking that every path is clean and
// relative. It is how trees that never touched a disk (a patched base, a
// version from the store) are made.
func New(files []File) (*Tree, error) {
	t := &Tree{Files: slices.Clone(files)}
	seen := make(map[string]bool, len(files))
	for _, f := range t.Files {
		if err := CheckPath(f.Path); err != nil {
			return nil, err
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("path %q appears twice", f.Path)
		}
		seen[f.Path] = true
	}
	t.sort()
	return t, nil
}

// CheckPath says why p is not a clean, relative, slash-separated path that
// stays inside a tree, or nil when it is.
func CheckPath(p string) error {
	switch {
	case p == "" || p == ".":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean", p)
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q leaves the tree", p)
	}
	return nil
}

func (t *Tree) sort() {
	slices.SortFunc(t.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
}

// Lookup returns the file at path p, if the tree holds one.
func (t *Tree) Lookup(p string) (*File, bool) {
	i, ok := slices.BinarySearchFunc(t.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return nil, false
	}
	return &t.Files[i], true
}

// Digest is sha256 over a canonical encoding of the tree, written
// "sha256:<hex>": for each file in path order, its path, kind, permission
// bits and content (or link target), each length-prefixed. Two trees have
// the same digest exactly when they hold the same files.
func (t *Tree) Digest() string {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, f := range t.Files {
		field([]byte(f.Path))
		if f.IsSymlink() {
			field([]byte("symlink"))
			field([]byte(f.Link))
			continue
		}
		field([]byte(fmt.Sprintf("file %o", f.Mode.Perm())))
		field(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Size is the number of content bytes in the tree.
func (t *Tree) Size() int64 {
	var n int64
	for _, f := range t.Files {
		n += int64(len(f.Data))
	}
	return n
}

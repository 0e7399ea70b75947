package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// FileBlobs keeps objects as files below a directory: directories 0700,
// files 0600, each object written to a temporary file and linked into place
// so it appears whole or not at all, and never replaced.
type FileBlobs struct {
	root string
}

var _ Blobs = (*FileBlobs)(nil)

// NewFileBlobs opens (creating it 0700 if needed) the directory root.
func NewFileBlobs(root string) (*FileBlobs, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("open file store %s: mode %o lets other users in: chmod 700 %s", root, info.Mode().Perm(), root)
	}
	return &FileBlobs{root: root}, nil
}

func (b *FileBlobs) path(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." || name == "." {
		return "", fmt.Errorf("object name %q is not clean and relative", name)
	}
	return filepath.Join(b.root, filepath.FromSlash(name)), nil
}

// Create implements Blobs.
func (b *FileBlobs) Create(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	p, err := b.path(name)
	if err != nil {
		return err
	}
	// The directories made here: their names live in their parents,
	// which are synced with the object's own directory.
	var made []string
	root := filepath.Clean(b.root)
	for d := filepath.Dir(p); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	suffix := make([]byte, 8)
	rand.Read(suffix)
	tmp := filepath.Join(filepath.Dir(p), ".tmp-"+hex.EncodeToString(suffix))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	// link fails if the name exists: the object is never replaced.
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", name, ErrExists)
		}
		return fmt.Errorf("create %s: %w", name, err)
	}
	// The new name, and those of the directories made for it, are written
	// to disk before Create returns: an object announced (an approval) is
	// not lost to a power cut that the file's own fsync would not cover.
	dirs := []string{filepath.Dir(p)}
	for _, d := range made {
		dirs = append(dirs, filepath.Dir(d))
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("create %s: sync directory %s: %w", name, d, err)
		}
	}
	return nil
}

// syncDir writes a directory's entries to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Read implements Blobs.
func (b *FileBlobs) Read(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	p, err := b.path(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	// ENOTDIR: a path below an object ("a/b" where "a" is an object).
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("read %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// walkDir is filepath.WalkDir; a test replaces it to see where List walks.
var walkDir = filepath.WalkDir

// List implements Blobs. It walks only the deepest directory that prefix
// names ("a/b/" and "a/b/c" both walk a/b), not the whole store.
func (b *FileBlobs) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	start := b.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		// Every object name is clean, and so is every directory above
		// one: a prefix whose directory is not clean names no object.
		p, err := b.path(prefix[:i])
		if err != nil {
			return nil, nil
		}
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && !info.IsDir()) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		start = p
	}
	var names []string
	err := walkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(b.root, p)
		if err != nil {
			return err
		}
		if name := filepath.ToSlash(rel); strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	slices.Sort(names)
	return names, nil
}

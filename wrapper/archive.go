package wrapper

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits on the input archive, so a hostile or broken archive cannot exhaust
// the container before the tests even start.
const (
	maxJobBytes   = 1 << 20
	maxEntries    = 100_000
	maxEntryBytes = 256 << 20
)

// inputSink receives the entries of the input archive.
type inputSink interface {
	// job is called once, with the first entry.
	job(Job) error
	// file is called for each hidden or repo regular file, in archive order.
	file(prefix, rel string, mode fs.FileMode, r io.Reader) error
	// symlink is called for each repo symlink.
	symlink(rel, target string) error
}

// readArchive reads the input archive: job.json, then hidden/ entries, then
// repo/ entries. Anything else, any path that is not clean and relative, and
// any entry out of that order is an error.
func readArchive(r io.Reader, sink inputSink) error {
	tr := tar.NewReader(r)
	stage := 0 // 0: want job, 1: hidden, 2: repo
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if stage == 0 {
				return errors.New("input archive has no job.json")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read input archive: %w", err)
		}
		if n > maxEntries {
			return fmt.Errorf("input archive has more than %d entries", maxEntries)
		}
		if stage == 0 {
			if hdr.Name != JobEntry {
				return fmt.Errorf("input archive starts with %q, want %s", hdr.Name, JobEntry)
			}
			var job Job
			data, err := io.ReadAll(io.LimitReader(tr, maxJobBytes+1))
			if err != nil {
				return fmt.Errorf("read %s: %w", JobEntry, err)
			}
			if len(data) > maxJobBytes {
				return fmt.Errorf("%s is larger than %d bytes", JobEntry, maxJobBytes)
			}
			if err := json.Unmarshal(data, &job); err != nil {
				return fmt.Errorf("decode %s: %w", JobEntry, err)
			}
			if err := sink.job(job); err != nil {
				return err
			}
			stage = 1
			continue
		}
		var prefix string
		switch {
		case strings.HasPrefix(hdr.Name, HiddenPrefix) && stage == 1:
			prefix = HiddenPrefix
		case strings.HasPrefix(hdr.Name, RepoPrefix):
			prefix, stage = RepoPrefix, 2
		default:
			return fmt.Errorf("input archive entry %q is out of place", hdr.Name)
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(hdr.Name, prefix), "/")
		if rel == "" && hdr.Typeflag == tar.TypeDir {
			continue // the hidden/ or repo/ directory itself
		}
		if err := checkRel(rel); err != nil {
			return fmt.Errorf("input archive entry %q: %w", hdr.Name, err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			// Directories are created as their files need them.
		case tar.TypeReg:
			if hdr.Size > maxEntryBytes {
				return fmt.Errorf("input archive entry %q is larger than %d bytes", hdr.Name, maxEntryBytes)
			}
			if err := sink.file(prefix, rel, fs.FileMode(hdr.Mode).Perm(), tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if prefix != RepoPrefix {
				return fmt.Errorf("input archive entry %q: hidden tests cannot be symlinks", hdr.Name)
			}
			if err := sink.symlink(rel, hdr.Linkname); err != nil {
				return err
			}
		default:
			return fmt.Errorf("input archive entry %q has unsupported type %q", hdr.Name, hdr.Typeflag)
		}
	}
}

func checkRel(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return errors.New("path is not clean and relative")
	}
	return nil
}

// writeFile creates dir/rel with mode, creating parents 0755. It refuses to
// write through an existing file or symlink: every file is new.
func writeFile(dir, rel string, mode fs.FileMode, r io.Reader) error {
	dst := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", rel, err)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscallNoFollow, mode)
	if err != nil {
		return fmt.Errorf("create %s: %w", rel, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", rel, err)
	}
	// The umask may have narrowed the mode; the archive's mode wins.
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("chmod %s: %w", rel, err)
	}
	return f.Close()
}

package grader

import (
	"archive/tar"
	"encoding/json"
	"io"
	"path"

	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// writeInput writes the wrapper's input archive: the job, then the hidden
// files, then the tree under test, uncompressed.
func writeInput(w io.Writer, job wrapper.Job, hidden, repo *tree.Tree) error {
	tw := tar.NewWriter(w)
	data, err := json.Marshal(job)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: wrapper.JobEntry, Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(data))}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	for _, part := range []struct {
		prefix string
		tree   *tree.Tree
	}{{wrapper.HiddenPrefix, hidden}, {wrapper.RepoPrefix, repo}} {
		if part.tree == nil {
			continue
		}
		for _, f := range part.tree.Files {
			hdr := &tar.Header{Name: path.Join(part.prefix, f.Path), Mode: int64(f.Mode.Perm())}
			if f.IsSymlink() {
				hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
			} else {
				hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := tw.Write(f.Data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

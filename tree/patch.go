package tree

import (
	"bytes"
	"fmt"
	"io/fs"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// ApplyPatch applies a unified diff (as git diff writes it) to base and
// returns the patched tree. A patch that does not apply cleanly is an error
// that names the file.
func ApplyPatch(base *Tree, patch []byte) (*Tree, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, fmt.Errorf("parse patch: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("parse patch: no file changes found (is it a unified diff?)")
	}
	out := map[string]File{}
	for _, f := range base.Files {
		out[f.Path] = f
	}
	for _, fp := range files {
		name := fp.NewName
		if fp.IsDelete {
			name = fp.OldName
		}
		if fp.IsBinary {
			return nil, fmt.Errorf("apply patch to %s: binary patches are not supported", name)
		}
		if isGitSymlink(fp.NewMode) || isGitSymlink(fp.OldMode) {
			return nil, fmt.Errorf("apply patch to %s: symlinks are not supported in patches", name)
		}
		if !fp.IsDelete && fp.NewName != fp.OldName {
			if _, exists := out[fp.NewName]; exists {
				return nil, fmt.Errorf("apply patch to %s: it already exists in the base tree", fp.NewName)
			}
		}
		var src []byte
		mode := fs.FileMode(0o644)
		if !fp.IsNew {
			old, ok := out[fp.OldName]
			if !ok {
				return nil, fmt.Errorf("apply patch to %s: no such file in the base tree", fp.OldName)
			}
			if old.IsSymlink() {
				return nil, fmt.Errorf("apply patch to %s: it is a symlink", fp.OldName)
			}
			src, mode = old.Data, old.Mode
		}
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, bytes.NewReader(src), fp); err != nil {
			return nil, fmt.Errorf("apply patch to %s: %w", name, err)
		}
		if fp.NewMode != 0 {
			mode = fs.FileMode(fp.NewMode).Perm()
		}
		if !fp.IsNew && !fp.IsCopy {
			delete(out, fp.OldName)
		}
		if !fp.IsDelete {
			out[fp.NewName] = File{Path: fp.NewName, Mode: mode, Data: dst.Bytes()}
		}
	}
	list := make([]File, 0, len(out))
	for _, f := range out {
		list = append(list, f)
	}
	return New(list)
}

// isGitSymlink reports whether a mode from a git patch header (git's raw
// octal mode, not Go's fs.FileMode bits) is a symlink's, 120000.
func isGitSymlink(m fs.FileMode) bool {
	return uint32(m)&0o170000 == 0o120000
}

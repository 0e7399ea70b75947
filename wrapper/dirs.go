package wrapper

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
)

// TmpDir is the tests' temporary directory: root-owned, mode 1777.
const TmpDir = "/tmp"

// maxDirExamples bounds the entries of HiddenDir a DirState names.
const maxDirExamples = 5

// DirState is what the wrapper saw of one of its directories just before
// it started the tests.
type DirState struct {
	Path string `json:"path"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	// Mode is the permission bits with setuid, setgid and sticky, octal
	// ("0755", "1777").
	Mode string `json:"mode"`
	// Want says what the directory must be, e.g. "owner 0, mode 0755".
	Want string `json:"want"`
	// Sealed is true when the directory is what Want says and, for
	// HiddenDir, so is every entry below it.
	Sealed bool `json:"sealed"`
	// Problems name what is not as it must be.
	Problems []string `json:"problems,omitempty"`
}

// dirRule is what one of the wrapper's directories must be.
type dirRule struct {
	path string
	// gid, when set, is the group the directory must have.
	gid int
	// owners are the owners allowed, each with its mode.
	owners []ownerMode
}

type ownerMode struct {
	uid  int
	mode uint32
}

func (r dirRule) want() string {
	s := ""
	for i, o := range r.owners {
		if i > 0 {
			s += ", or "
		}
		s += fmt.Sprintf("owner %d, mode %04o", o.uid, o.mode)
	}
	if r.gid > 0 {
		s += fmt.Sprintf(", group %d", r.gid)
	}
	return s
}

// dirRules are what HiddenDir, TmpDir and RepoDir must be for id. The
// tree under test belongs to the test uid, 0755, as the Docker provider
// mounts it; where the provider made it root-owned and the wrapper cannot
// give it away (no CAP_CHOWN: a Kubernetes emptyDir), it is root-owned
// 1777, so the test uid can write the tree and only the owner of an entry
// can rename or remove it, as in TmpDir. The wrapper never writes there as
// root.
func dirRules(id identity) []dirRule {
	repo := dirRule{path: RepoDir, owners: []ownerMode{{0, 0o755}}}
	if id.split {
		repo.owners = []ownerMode{{id.uid, 0o755}, {0, 0o1777}}
	}
	hidden := dirRule{path: HiddenDir, owners: []ownerMode{{0, 0o755}}}
	if id.grader > 0 {
		hidden = dirRule{path: HiddenDir, owners: []ownerMode{{0, 0o750}}, gid: id.grader}
	}
	return []dirRule{
		hidden,
		{path: TmpDir, owners: []ownerMode{{0, 0o1777}}},
		repo,
	}
}

// sealRootDirs makes HiddenDir root-owned 0755 and TmpDir root-owned 1777,
// whatever the provider made them (a Kubernetes emptyDir is root-owned
// 0777 with no sticky bit: the test uid could replace hidden files). It
// runs as root before anything is written; an error means the wrapper must
// not go on.
func sealRootDirs() error {
	for _, r := range dirRules(identity{})[:2] {
		if err := sealDir(r.path, r.owners[0].mode); err != nil {
			return err
		}
	}
	return nil
}

// sealRepoDir makes RepoDir what dirRules says for id, before any file of
// the tree is written: the test uid's with mode 0755 under the uid split
// (root-owned 1777 when the kernel refuses the chown), root's 0755
// without it.
func sealRepoDir(id identity) error {
	if !id.split {
		return sealDir(RepoDir, 0o755)
	}
	st, err := lstatDir(RepoDir)
	if err != nil {
		return err
	}
	if int(st.Uid) == id.uid {
		// Only the owner may chmod without CAP_FOWNER.
		return id.as(func() error { return chmodChecked(RepoDir, 0o755) })
	}
	if err := chmodChecked(RepoDir, 0o755); err != nil {
		return err
	}
	err = syscall.Chown(RepoDir, id.uid, id.uid)
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EPERM) || st.Uid != 0 {
		return fmt.Errorf("seal %s: chown to %d: %w", RepoDir, id.uid, err)
	}
	return chmodChecked(RepoDir, 0o1777)
}

// sealDir makes path owned by uid 0 and gid 0 with mode.
func sealDir(path string, mode uint32) error {
	st, err := lstatDir(path)
	if err != nil {
		return err
	}
	if st.Uid != 0 || st.Gid != 0 {
		if err := syscall.Chown(path, 0, 0); err != nil {
			return fmt.Errorf("seal %s: it is owned by %d:%d and chown to 0:0 failed: %w", path, st.Uid, st.Gid, err)
		}
	}
	return chmodChecked(path, mode)
}

func lstatDir(path string) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, fmt.Errorf("seal %s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, fmt.Errorf("seal %s: not a directory (mode %o)", path, st.Mode)
	}
	return &st, nil
}

// chmodChecked sets path's mode (with the sticky bit, which os.Chmod
// spells otherwise) and reads it back.
func chmodChecked(path string, mode uint32) error {
	if err := syscall.Chmod(path, mode); err != nil {
		return fmt.Errorf("seal %s: chmod %04o: %w", path, mode, err)
	}
	st, err := lstatDir(path)
	if err != nil {
		return err
	}
	if got := st.Mode & 0o7777; got != mode {
		return fmt.Errorf("seal %s: mode is %04o after chmod %04o", path, got, mode)
	}
	return nil
}

// inspectDirs reads the wrapper's directories as they are: each must be
// what dirRules says, and every entry below HiddenDir root-owned with no
// write permission for group or others and no setuid or setgid bit.
func inspectDirs(id identity) ([]DirState, bool) {
	var out []DirState
	all := true
	for _, r := range dirRules(id) {
		d := r.inspect(r.path == HiddenDir)
		all = all && d.Sealed
		out = append(out, d)
	}
	return out, all
}

// inspect reads r's directory; with entries, every entry below it too.
func (r dirRule) inspect(entries bool) DirState {
	d := DirState{Path: r.path, Want: r.want()}
	var st syscall.Stat_t
	if err := syscall.Lstat(r.path, &st); err != nil {
		d.Problems = append(d.Problems, err.Error())
	} else {
		d.UID, d.GID, d.Mode = int(st.Uid), int(st.Gid), fmt.Sprintf("%04o", st.Mode&0o7777)
		ok := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
		if !ok {
			d.Problems = append(d.Problems, "not a directory")
		}
		matched := false
		for _, o := range r.owners {
			matched = matched || int(st.Uid) == o.uid && st.Mode&0o7777 == o.mode
		}
		if !matched {
			d.Problems = append(d.Problems, fmt.Sprintf("owner %d, mode %s", st.Uid, d.Mode))
		}
		if r.gid > 0 && int(st.Gid) != r.gid {
			d.Problems = append(d.Problems, fmt.Sprintf("group %d", st.Gid))
		}
	}
	if entries && len(d.Problems) == 0 {
		d.Problems = append(d.Problems, hiddenEntryProblems(r.path, uint32(r.owners[0].uid))...)
	}
	d.Sealed = len(d.Problems) == 0
	return d
}

// hiddenEntryProblems names the entries below root that the test uid could
// change or that are not the wrapper's: not owned by owner (root), writable
// by group or others, setuid or setgid, or neither file nor directory.
func hiddenEntryProblems(root string, owner uint32) []string {
	var out []string
	n := 0
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		t := st.Mode & syscall.S_IFMT
		if st.Uid != owner || st.Mode&0o022 != 0 || st.Mode&0o6000 != 0 || t != syscall.S_IFREG && t != syscall.S_IFDIR {
			n++
			if len(out) < maxDirExamples {
				out = append(out, fmt.Sprintf("%s: owner %d, mode %06o", p, st.Uid, st.Mode))
			}
		}
		return nil
	})
	if n > len(out) {
		out = append(out, fmt.Sprintf("and %d more", n-len(out)))
	}
	if err != nil {
		out = append(out, "walk: "+err.Error())
	}
	return out
}

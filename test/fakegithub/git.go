package fakegithub

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// commit is one commit: a full snapshot of the repository's files.
type commit struct {
	sha    string
	tree   string // git tree id of files
	parent string
	files  map[string]string
	time   time.Time
	// message and author are a commit's made through the Git data API
	// (author the app's bot, as GitHub makes it for an installation's
	// token); "" for the fixed ones of Commit.
	message string
	author  string
}

// Commit records a commit on a branch of a seeded repository whose tree is
// exactly files (slash-separated path → content), moves the branch to it and
// returns its sha. The parent is the branch's head, or the default branch's
// head for a new branch. The sha is the real git commit id of that tree and
// parent with a fixed author, date and message, so equal trees on equal
// parents get equal shas and blob shas match git's.
func (s *Server) Commit(owner, repo, branch string, files map[string]string) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil {
		s.fatalf("Commit: repository %s/%s was not added", owner, repo)
	}
	if branch == "" {
		s.fatalf("Commit: empty branch name")
	}
	snapshot := map[string]string{}
	for p, content := range files {
		if err := checkFilePath(p); err != nil {
			s.fatalf("Commit %s/%s: %v", owner, repo, err)
		}
		snapshot[p] = content
	}
	if err := checkFileDirConflicts(snapshot); err != nil {
		s.fatalf("Commit %s/%s: %v", owner, repo, err)
	}
	parent, ok := rp.branches[branch]
	if !ok {
		parent = rp.branches[rp.defaultBranch]
	}
	tree := treeID(snapshot)
	sha := commitID(tree, parent)
	if _, ok := s.commits[sha]; !ok {
		s.commits[sha] = &commit{sha: sha, tree: tree, parent: parent, files: snapshot, time: s.now()}
	}
	rp.commits[sha] = true
	rp.branches[branch] = sha
	return sha
}

// checkFilePath rejects paths git would not store.
func checkFilePath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || path.Clean(p) != p {
		return fmt.Errorf("bad file path %q: want a clean relative path", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "." || part == ".." || part == ".git" {
			return fmt.Errorf("bad file path %q", p)
		}
	}
	return nil
}

// checkFileDirConflicts rejects a path that is both a file and a directory.
func checkFileDirConflicts(files map[string]string) error {
	for p := range files {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := files[dir]; ok {
				return fmt.Errorf("%q is a file and the directory of %q", dir, p)
			}
		}
	}
	return nil
}

// gitHash is git's object id: sha1 over "<kind> <len>\x00<content>".
func gitHash(kind string, content []byte) []byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(content))
	h.Write(content)
	return h.Sum(nil)
}

// blobID is git's id of a file's content.
func blobID(content string) string { return hex.EncodeToString(gitHash("blob", []byte(content))) }

// treeID is git's id of the tree holding files.
func treeID(files map[string]string) string { return hex.EncodeToString(treeHash(files, "")) }

// treeHash hashes the directory dir ("" for the root) of files.
func treeHash(files map[string]string, dir string) []byte {
	type entry struct {
		name, sortKey, mode string
		id                  []byte
	}
	var entries []entry
	seen := map[string]bool{}
	for _, e := range dirEntries(files, dir) {
		if seen[e.name] {
			continue
		}
		seen[e.name] = true
		if e.isDir {
			entries = append(entries, entry{e.name, e.name + "/", "40000", treeHash(files, e.path)})
		} else {
			entries = append(entries, entry{e.name, e.name, "100644", gitHash("blob", []byte(files[e.path]))})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].sortKey < entries[j].sortKey })
	var buf bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&buf, "%s %s\x00", e.mode, e.name)
		buf.Write(e.id)
	}
	return gitHash("tree", buf.Bytes())
}

// dirEntry is one immediate child of a directory in a snapshot.
type dirEntry struct {
	name  string
	path  string
	isDir bool
}

// dirEntries lists the immediate children of dir ("" for the root), sorted
// by name, or nil when dir is not a directory of files.
func dirEntries(files map[string]string, dir string) []dirEntry {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	byName := map[string]dirEntry{}
	for p := range files {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		rest := strings.TrimPrefix(p, prefix)
		name, _, isDir := strings.Cut(rest, "/")
		byName[name] = dirEntry{name: name, path: prefix + name, isDir: isDir}
	}
	out := make([]dirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// commitID is git's id of a commit of tree on parent ("" for a root commit)
// with the fake's fixed author, committer, date and message.
func commitID(tree, parent string) string {
	return commitIDBy(tree, parent, "testfirst fake <fake@testfirst.invalid>", "fake commit\n")
}

// commitIDBy is git's id of a commit of tree on parent by person (name
// and address, author and committer) with message.
func commitIDBy(tree, parent, person, message string) string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&buf, "parent %s\n", parent)
	}
	fmt.Fprintf(&buf, "author %s 0 +0000\n", person)
	fmt.Fprintf(&buf, "committer %s 0 +0000\n\n", person)
	buf.WriteString(message)
	return hex.EncodeToString(gitHash("commit", buf.Bytes()))
}

// resolveRef finds the commit a ref names in a repository, as GitHub does for
// ?ref= and {ref} path parameters: a branch ("main", "heads/main",
// "refs/heads/main"), a full sha or an unambiguous sha prefix of at least
// 4 hex digits; "" is the default branch.
func (s *Server) resolveRef(rp *repository, ref string) *commit {
	if ref == "" {
		ref = rp.defaultBranch
	}
	branch := strings.TrimPrefix(strings.TrimPrefix(ref, "refs/"), "heads/")
	if sha, ok := rp.branches[branch]; ok {
		return s.commits[sha]
	}
	if len(ref) < 4 || len(ref) > 40 || strings.Trim(strings.ToLower(ref), "0123456789abcdef") != "" {
		return nil
	}
	ref = strings.ToLower(ref)
	var found *commit
	for sha := range rp.commits {
		if strings.HasPrefix(sha, ref) {
			if found != nil {
				return nil
			}
			found = s.commits[sha]
		}
	}
	return found
}

// lookup finds a path in a commit: its content, or whether it is a
// directory.
func (c *commit) lookup(p string) (content string, isFile, isDir bool) {
	if content, ok := c.files[p]; ok {
		return content, true, false
	}
	if p == "" {
		return "", false, true
	}
	prefix := p + "/"
	for f := range c.files {
		if strings.HasPrefix(f, prefix) {
			return "", false, true
		}
	}
	return "", false, false
}

package fakegithub

import (
	"encoding/base64"
	"net/http"
	"path"
	"strings"
	"time"
)

// maxInlineContent is the largest file the contents API returns inline;
// bigger files come back with encoding "none" and empty content, as on GitHub.
const maxInlineContent = 1 << 20

// repository is one repository and everything stored in it.
type repository struct {
	id            int64
	owner, name   string
	installation  int64 // 0: the app is not installed on it
	defaultBranch string
	createdAt     time.Time
	branches      map[string]string // branch → head sha
	commits       map[string]bool   // shas reachable in this repository
	perms         map[string]string // lower(login) → role
	issues        map[int]*issue
	labels        []*label
	checkRuns     []*checkRun
	checkSuites   map[string]int64 // head sha → check suite id
}

func (rp *repository) fullName() string { return rp.owner + "/" + rp.name }

// repoKey is the case-insensitive key of a repository, as GitHub matches
// owner and repository names.
func repoKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// AddRepo creates a private repository owner/repo with the given default
// branch (which has no commits until [Server.Commit]) and puts it in an
// installation. installation 0 creates a repository the app is not installed
// on, e.g. the fork a pull request comes from.
func (s *Server) AddRepo(installation int64, owner, repo, defaultBranch string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if installation != 0 && s.installations[installation] == nil {
		s.fatalf("AddRepo %s/%s: installation %d was not added", owner, repo, installation)
	}
	if owner == "" || repo == "" || defaultBranch == "" {
		s.fatalf("AddRepo: owner, repo and default branch are required")
	}
	key := repoKey(owner, repo)
	if s.repos[key] != nil {
		s.fatalf("AddRepo: %s/%s already exists", owner, repo)
	}
	s.userID(owner)
	s.repos[key] = &repository{
		id:            s.newID(),
		owner:         owner,
		name:          repo,
		installation:  installation,
		defaultBranch: defaultBranch,
		createdAt:     s.now(),
		branches:      map[string]string{},
		commits:       map[string]bool{},
		perms:         map[string]string{},
		issues:        map[int]*issue{},
		checkSuites:   map[string]int64{},
	}
}

// repoByID finds a repository by id.
func (s *Server) repoByID(id int64) *repository {
	for _, rp := range s.repos {
		if rp.id == id {
			return rp
		}
	}
	return nil
}

// repoURL is the API URL of a repository plus an optional sub-path.
func (s *Server) repoURL(rp *repository, sub string) string {
	u := s.apiURL("repos/" + rp.fullName())
	if sub != "" {
		u += "/" + sub
	}
	return u
}

// repoJSON is a repository as GitHub shows it to an installation.
func (s *Server) repoJSON(rp *repository) obj {
	html := "https://github.com/" + rp.fullName()
	return obj{
		"id":             rp.id,
		"node_id":        nodeID("R_", rp.id),
		"name":           rp.name,
		"full_name":      rp.fullName(),
		"private":        true,
		"visibility":     "private",
		"owner":          s.userJSON(rp.owner, "User"),
		"html_url":       html,
		"description":    nil,
		"fork":           false,
		"url":            s.repoURL(rp, ""),
		"archive_url":    s.repoURL(rp, "{archive_format}{/ref}"),
		"contents_url":   s.repoURL(rp, "contents/{+path}"),
		"issues_url":     s.repoURL(rp, "issues{/number}"),
		"pulls_url":      s.repoURL(rp, "pulls{/number}"),
		"labels_url":     s.repoURL(rp, "labels{/name}"),
		"git_url":        "git://github.com/" + rp.fullName() + ".git",
		"ssh_url":        "git@github.com:" + rp.fullName() + ".git",
		"clone_url":      html + ".git",
		"default_branch": rp.defaultBranch,
		"archived":       false,
		"disabled":       false,
		"is_template":    false,
		"has_issues":     true,
		"topics":         []string{},
		"created_at":     ts(rp.createdAt),
		"updated_at":     ts(rp.createdAt),
		"pushed_at":      ts(rp.createdAt),
	}
}

// getRepo serves GET /repos/{owner}/{repo}.
func (c *call) getRepo() *response { return jsonResponse(http.StatusOK, c.s.repoJSON(c.repo)) }

// commitJSON is the short commit object of branches and refs.
func (s *Server) commitJSON(rp *repository, cm *commit) obj {
	person := obj{"name": "testfirst fake", "email": "fake@testfirst.invalid", "date": ts(cm.time)}
	parents := []obj{}
	if cm.parent != "" {
		parents = append(parents, obj{"sha": cm.parent, "url": s.repoURL(rp, "commits/"+cm.parent)})
	}
	return obj{
		"sha":      cm.sha,
		"node_id":  "C_" + cm.sha[:20],
		"url":      s.repoURL(rp, "commits/"+cm.sha),
		"html_url": "https://github.com/" + rp.fullName() + "/commit/" + cm.sha,
		"commit": obj{
			"author":        person,
			"committer":     person,
			"message":       "fake commit",
			"tree":          obj{"sha": cm.tree, "url": s.repoURL(rp, "git/trees/"+cm.tree)},
			"url":           s.repoURL(rp, "git/commits/"+cm.sha),
			"comment_count": 0,
		},
		"author":    nil,
		"committer": nil,
		"parents":   parents,
	}
}

// getBranch serves GET /repos/{owner}/{repo}/branches/{branch}.
func (c *call) getBranch() *response {
	name := c.params["branch"]
	sha, ok := c.repo.branches[name]
	if !ok {
		return errorResponse(http.StatusNotFound, "Branch not found", c.doc)
	}
	return jsonResponse(http.StatusOK, obj{
		"name":   name,
		"commit": c.s.commitJSON(c.repo, c.s.commits[sha]),
		"_links": obj{
			"self": c.s.repoURL(c.repo, "branches/"+name),
			"html": "https://github.com/" + c.repo.fullName() + "/tree/" + name,
		},
		"protected": false,
		"protection": obj{
			"enabled":                false,
			"required_status_checks": obj{"enforcement_level": "off", "contexts": []string{}, "checks": []string{}},
		},
		"protection_url": c.s.repoURL(c.repo, "branches/"+name+"/protection"),
	})
}

// getRef serves GET /repos/{owner}/{repo}/git/ref/{ref}; only branches
// ("heads/…") exist in the fake.
func (c *call) getRef() *response {
	ref := c.params["ref"]
	branch, ok := strings.CutPrefix(ref, "heads/")
	sha, found := c.repo.branches[branch]
	if !ok || !found {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, obj{
		"ref":     "refs/" + ref,
		"node_id": "REF_" + nodeID("", c.repo.id) + strings.ReplaceAll(branch, "/", "_"),
		"url":     c.s.repoURL(c.repo, "git/refs/"+ref),
		"object": obj{
			"sha":  sha,
			"type": "commit",
			"url":  c.s.repoURL(c.repo, "git/commits/"+sha),
		},
	})
}

// getContents serves GET /repos/{owner}/{repo}/contents/{path}?ref=: a file
// object with base64 content, or an array for a directory.
func (c *call) getContents() *response {
	ref := c.r.URL.Query().Get("ref")
	cm := c.s.resolveRef(c.repo, ref)
	if cm == nil {
		if ref == "" {
			return errorResponse(http.StatusNotFound, "This repository is empty.", c.doc)
		}
		return errorResponse(http.StatusNotFound, "No commit found for the ref "+ref, c.doc)
	}
	p := strings.Trim(c.params["path"], "/")
	content, isFile, isDir := cm.lookup(p)
	switch {
	case isFile:
		return jsonResponse(http.StatusOK, c.s.fileJSON(c.repo, cm, p, content, true))
	case isDir:
		entries := []obj{}
		for _, e := range dirEntries(cm.files, p) {
			if e.isDir {
				entries = append(entries, c.s.dirJSON(c.repo, cm, e.path))
			} else {
				entries = append(entries, c.s.fileJSON(c.repo, cm, e.path, cm.files[e.path], false))
			}
		}
		return jsonResponse(http.StatusOK, entries)
	}
	return errorResponse(http.StatusNotFound, "Not Found", c.doc)
}

// fileJSON is a file as the contents API shows it; withContent adds the
// base64 content, wrapped at 60 characters like GitHub's.
func (s *Server) fileJSON(rp *repository, cm *commit, p, content string, withContent bool) obj {
	sha := blobID(content)
	self := s.repoURL(rp, "contents/"+p) + "?ref=" + cm.sha
	gitURL := s.repoURL(rp, "git/blobs/"+sha)
	html := "https://github.com/" + rp.fullName() + "/blob/" + cm.sha + "/" + p
	out := obj{
		"type":         "file",
		"name":         path.Base(p),
		"path":         p,
		"sha":          sha,
		"size":         len(content),
		"url":          self,
		"html_url":     html,
		"git_url":      gitURL,
		"download_url": s.rawURL(rp, cm, p),
		"_links":       obj{"self": self, "git": gitURL, "html": html},
	}
	if withContent {
		if len(content) > maxInlineContent {
			out["encoding"] = "none"
			out["content"] = ""
		} else {
			out["encoding"] = "base64"
			out["content"] = wrapBase64(content)
		}
	}
	return out
}

// dirJSON is a directory entry of a contents listing.
func (s *Server) dirJSON(rp *repository, cm *commit, p string) obj {
	sub := map[string]string{}
	for f, content := range cm.files {
		if rest, ok := strings.CutPrefix(f, p+"/"); ok {
			sub[rest] = content
		}
	}
	sha := treeID(sub)
	self := s.repoURL(rp, "contents/"+p) + "?ref=" + cm.sha
	gitURL := s.repoURL(rp, "git/trees/"+sha)
	html := "https://github.com/" + rp.fullName() + "/tree/" + cm.sha + "/" + p
	return obj{
		"type":         "dir",
		"name":         path.Base(p),
		"path":         p,
		"sha":          sha,
		"size":         0,
		"url":          self,
		"html_url":     html,
		"git_url":      gitURL,
		"download_url": nil,
		"_links":       obj{"self": self, "git": gitURL, "html": html},
	}
}

// wrapBase64 encodes content as base64 in lines of 60 characters, each
// ending in "\n", as the contents API does.
func wrapBase64(content string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(content))
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60])
		b.WriteByte('\n')
		enc = enc[60:]
	}
	if enc != "" {
		b.WriteString(enc)
		b.WriteByte('\n')
	}
	return b.String()
}

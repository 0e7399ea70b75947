package fakegithub

import (
	"encoding/base64"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// The Git data API (blobs, trees, commits, refs) and the creation of pull
// requests: what an app that pushes a branch and opens a pull request
// calls. Its routes join the table at init, and its objects live beside
// the Server's (guarded by the Server's lock, as every handler runs under
// it).

func init() {
	routes = append(routes,
		route{"POST", p("repos/{owner}/{repo}/git/blobs"), authRepo, docsBase + "git/blobs#create-a-blob", (*call).createBlob},
		route{"POST", p("repos/{owner}/{repo}/git/trees"), authRepo, docsBase + "git/trees#create-a-tree", (*call).createTree},
		route{"GET", p("repos/{owner}/{repo}/git/commits/{sha}"), authRepo, docsBase + "git/commits#get-a-commit-object", (*call).getGitCommit},
		route{"POST", p("repos/{owner}/{repo}/git/commits"), authRepo, docsBase + "git/commits#create-a-commit", (*call).createGitCommit},
		route{"POST", p("repos/{owner}/{repo}/git/refs"), authRepo, docsBase + "git/refs#create-a-reference", (*call).createRef},
		route{"PATCH", p("repos/{owner}/{repo}/git/refs/{ref...}"), authRepo, docsBase + "git/refs#update-a-reference", (*call).updateRef},
		route{"GET", p("repos/{owner}/{repo}/pulls"), authRepo, docsBase + "pulls/pulls#list-pull-requests", (*call).listPulls},
		route{"POST", p("repos/{owner}/{repo}/pulls"), authRepo, docsBase + "pulls/pulls#create-a-pull-request", (*call).createPull},
	)
}

// gitObjects are the blobs and trees made through the API: a tree is the
// full set of files it holds.
type gitObjects struct {
	blobs map[string]string
	trees map[string]map[string]string
	// opened are the pull requests made through the API, by repository.
	opened map[string][]int
}

// objects returns s's Git data objects, made on first use. Callers hold
// s.mu.
func (s *Server) objects() *gitObjects {
	if s.git == nil {
		s.git = &gitObjects{blobs: map[string]string{}, trees: map[string]map[string]string{}, opened: map[string][]int{}}
	}
	return s.git
}

// filesOfTree finds the files of a tree id: one made through the API or
// the tree of a commit.
func (s *Server) filesOfTree(id string) (map[string]string, bool) {
	if fs, ok := s.objects().trees[id]; ok {
		return fs, true
	}
	for _, cm := range s.commits {
		if cm.tree == id {
			return cm.files, true
		}
	}
	return nil, false
}

// createBlob serves POST /repos/{owner}/{repo}/git/blobs.
func (c *call) createBlob() *response {
	var req struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if req.Content == nil {
		return notSupplied(c.doc, "content")
	}
	content := *req.Content
	switch req.Encoding {
	case "", "utf-8":
	case "base64":
		b, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return invalidRequest(c.doc, "content is not valid base64")
		}
		content = string(b)
	default:
		return validationFailed(c.doc, fieldError{Resource: "Blob", Code: "invalid", Field: "encoding"})
	}
	id := blobID(content)
	c.s.objects().blobs[id] = content
	return jsonResponse(http.StatusCreated, obj{"sha": id, "url": c.s.repoURL(c.repo, "git/blobs/"+id)})
}

// createTree serves POST /repos/{owner}/{repo}/git/trees: base_tree with
// the entries applied (a null sha deletes a path).
func (c *call) createTree() *response {
	var req struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path    string  `json:"path"`
			Mode    string  `json:"mode"`
			Type    string  `json:"type"`
			SHA     *string `json:"sha"`
			Content *string `json:"content"`
		} `json:"tree"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	files := map[string]string{}
	if req.BaseTree != "" {
		base, ok := c.s.filesOfTree(req.BaseTree)
		if !ok {
			return validationFailed(c.doc, fieldError{Resource: "Tree", Code: "invalid", Field: "base_tree"})
		}
		for p, content := range base {
			files[p] = content
		}
	}
	for _, e := range req.Tree {
		if err := checkFilePath(e.Path); err != nil || (e.Type != "" && e.Type != "blob") {
			return validationFailed(c.doc, fieldError{Resource: "Tree", Code: "invalid", Field: "tree.path"})
		}
		switch {
		case e.Content != nil:
			files[e.Path] = *e.Content
		case e.SHA == nil:
			delete(files, e.Path)
		default:
			content, ok := c.s.objects().blobs[*e.SHA]
			if !ok {
				return validationFailed(c.doc, fieldError{Resource: "Tree", Code: "invalid", Field: "tree.sha"})
			}
			files[e.Path] = content
		}
	}
	if err := checkFileDirConflicts(files); err != nil {
		return validationFailed(c.doc, fieldError{Resource: "Tree", Code: "invalid", Field: "tree", Message: err.Error()})
	}
	id := treeID(files)
	c.s.objects().trees[id] = files
	return jsonResponse(http.StatusCreated, obj{"sha": id, "url": c.s.repoURL(c.repo, "git/trees/"+id), "truncated": false})
}

// gitCommitJSON is a commit as the Git data API shows it.
func (s *Server) gitCommitJSON(rp *repository, cm *commit) obj {
	parents := []obj{}
	if cm.parent != "" {
		parents = append(parents, obj{"sha": cm.parent, "url": s.repoURL(rp, "git/commits/"+cm.parent)})
	}
	person := obj{"name": "testfirst fake", "email": "fake@testfirst.invalid", "date": ts(cm.time)}
	message := "fake commit"
	if cm.author != "" {
		person = obj{"name": cm.author, "email": s.noreplyEmail(cm.author), "date": ts(cm.time)}
		message = cm.message
	}
	return obj{"sha": cm.sha, "url": s.repoURL(rp, "git/commits/"+cm.sha), "author": person, "committer": person, "message": message,
		"tree": obj{"sha": cm.tree, "url": s.repoURL(rp, "git/trees/"+cm.tree)}, "parents": parents}
}

// getGitCommit serves GET /repos/{owner}/{repo}/git/commits/{sha}.
func (c *call) getGitCommit() *response {
	sha := strings.ToLower(c.params["sha"])
	cm := c.s.commits[sha]
	if cm == nil || !c.repo.commits[sha] {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.gitCommitJSON(c.repo, cm))
}

// createGitCommit serves POST /repos/{owner}/{repo}/git/commits: one
// parent at most, as the fake's commits have.
func (c *call) createGitCommit() *response {
	var req struct {
		Message *string  `json:"message"`
		Tree    *string  `json:"tree"`
		Parents []string `json:"parents"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if req.Message == nil {
		return notSupplied(c.doc, "message")
	}
	if req.Tree == nil {
		return notSupplied(c.doc, "tree")
	}
	files, ok := c.s.filesOfTree(*req.Tree)
	if !ok {
		return validationFailed(c.doc, fieldError{Resource: "Commit", Code: "invalid", Field: "tree"})
	}
	if len(req.Parents) > 1 {
		return validationFailed(c.doc, fieldError{Resource: "Commit", Code: "invalid", Field: "parents", Message: "the fake makes commits of one parent"})
	}
	parent := ""
	if len(req.Parents) == 1 {
		parent = strings.ToLower(req.Parents[0])
		if !c.repo.commits[parent] {
			return validationFailed(c.doc, fieldError{Resource: "Commit", Code: "invalid", Field: "parents"})
		}
	}
	// GitHub makes the app's bot the author and committer of a commit an
	// installation's token creates without naming one.
	author := botLogin()
	if c.who.kind != callerInstallation {
		return validationFailed(c.doc, fieldError{Resource: "Commit", Code: "invalid", Field: "author", Message: "the fake makes commits for an installation only"})
	}
	sha := commitIDBy(*req.Tree, parent, author+" <"+c.s.noreplyEmail(author)+">", *req.Message)
	if _, ok := c.s.commits[sha]; !ok {
		c.s.commits[sha] = &commit{sha: sha, tree: *req.Tree, parent: parent, files: files, time: c.s.now(), message: *req.Message, author: author}
	}
	c.repo.commits[sha] = true
	return jsonResponse(http.StatusCreated, c.s.gitCommitJSON(c.repo, c.s.commits[sha]))
}

// refJSON is a branch ref.
func (s *Server) refJSON(rp *repository, branch string) obj {
	sha := rp.branches[branch]
	return obj{"ref": "refs/heads/" + branch, "url": s.repoURL(rp, "git/refs/heads/"+branch),
		"object": obj{"sha": sha, "type": "commit", "url": s.repoURL(rp, "git/commits/"+sha)}}
}

// createRef serves POST /repos/{owner}/{repo}/git/refs: a new branch.
func (c *call) createRef() *response {
	var req struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	branch, ok := strings.CutPrefix(req.Ref, "refs/heads/")
	if !ok || branch == "" {
		return validationFailed(c.doc, fieldError{Resource: "Reference", Code: "invalid", Field: "ref", Message: "the fake makes branches only"})
	}
	if _, exists := c.repo.branches[branch]; exists {
		return validationFailed(c.doc, fieldError{Resource: "Reference", Code: "already_exists", Field: "ref", Message: "Reference already exists"})
	}
	sha := strings.ToLower(req.SHA)
	if !c.repo.commits[sha] {
		return validationFailed(c.doc, fieldError{Resource: "Reference", Code: "invalid", Field: "sha", Message: "Object does not exist"})
	}
	c.repo.branches[branch] = sha
	return jsonResponse(http.StatusCreated, c.s.refJSON(c.repo, branch))
}

// updateRef serves PATCH /repos/{owner}/{repo}/git/refs/heads/{branch}:
// a fast-forward, or any move with force. Pull requests from the branch
// follow it.
func (c *call) updateRef() *response {
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	branch, ok := strings.CutPrefix(c.params["ref"], "heads/")
	old, exists := c.repo.branches[branch]
	if !ok || !exists {
		return validationFailed(c.doc, fieldError{Resource: "Reference", Code: "invalid", Field: "ref", Message: "Reference does not exist"})
	}
	sha := strings.ToLower(req.SHA)
	if !c.repo.commits[sha] {
		return validationFailed(c.doc, fieldError{Resource: "Reference", Code: "invalid", Field: "sha", Message: "Object does not exist"})
	}
	if !req.Force {
		ff := false
		for at := sha; at != "" && !ff; at = c.s.commits[at].parent {
			ff = at == old
		}
		if !ff {
			return validationFailed(c.doc, fieldError{Resource: "Reference", Code: "invalid", Field: "sha", Message: "Update is not a fast forward"})
		}
	}
	c.repo.branches[branch] = sha
	for _, is := range c.repo.issues {
		if is.pull != nil && is.pull.headRef == branch && strings.EqualFold(is.pull.headRepo, c.repo.fullName()) {
			is.pull.headSHA = sha
		}
	}
	return jsonResponse(http.StatusOK, c.s.refJSON(c.repo, branch))
}

// listPulls serves GET /repos/{owner}/{repo}/pulls with head=owner:branch;
// every pull request of the fake is open.
func (c *call) listPulls() *response {
	q := c.r.URL.Query()
	if st := q.Get("state"); st == "closed" {
		return jsonResponse(http.StatusOK, []obj{})
	}
	var numbers []int
	for n, is := range c.repo.issues {
		if is.pull == nil {
			continue
		}
		if h := q.Get("head"); h != "" {
			owner, _, _ := strings.Cut(is.pull.headRepo, "/")
			if !strings.EqualFold(h, owner+":"+is.pull.headRef) {
				continue
			}
		}
		numbers = append(numbers, n)
	}
	sort.Ints(numbers)
	out := []obj{}
	for _, n := range numbers {
		out = append(out, c.s.pullJSON(c.repo, c.repo.issues[n]))
	}
	return jsonResponse(http.StatusOK, out)
}

// createPull serves POST /repos/{owner}/{repo}/pulls from a branch of the
// same repository, opened by the app's bot.
func (c *call) createPull() *response {
	var req struct {
		Title *string `json:"title"`
		Head  string  `json:"head"`
		Base  string  `json:"base"`
		Body  string  `json:"body"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if req.Title == nil {
		return notSupplied(c.doc, "title")
	}
	head := req.Head
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, c.repo.owner) {
			return validationFailed(c.doc, fieldError{Resource: "PullRequest", Code: "invalid", Field: "head", Message: "the fake opens pull requests from the same repository"})
		}
		head = branch
	}
	headSHA, ok := c.repo.branches[head]
	if !ok {
		return validationFailed(c.doc, fieldError{Resource: "PullRequest", Code: "invalid", Field: "head"})
	}
	if _, ok := c.repo.branches[req.Base]; !ok {
		return validationFailed(c.doc, fieldError{Resource: "PullRequest", Code: "invalid", Field: "base"})
	}
	for _, is := range c.repo.issues {
		if is.pull != nil && is.pull.headRef == head && strings.EqualFold(is.pull.headRepo, c.repo.fullName()) {
			return validationFailed(c.doc, fieldError{Resource: "PullRequest", Code: "custom", Message: "A pull request already exists for " + c.repo.owner + ":" + head + "."})
		}
	}
	number := 1
	for n := range c.repo.issues {
		number = max(number, n+1)
	}
	c.repo.issues[number] = &issue{id: c.s.newID(), number: number, author: botLogin(), title: *req.Title, body: req.Body, createdAt: c.s.now(),
		pull: &pull{id: c.s.newID(), headSHA: headSHA, headRef: head, headRepo: c.repo.fullName(), baseRef: req.Base}}
	o := c.s.objects()
	o.opened[c.repo.fullName()] = append(o.opened[c.repo.fullName()], number)
	return jsonResponse(http.StatusCreated, c.s.pullJSON(c.repo, c.repo.issues[number]))
}

// OpenedPull is a pull request the app opened through the API.
type OpenedPull struct {
	Number  int
	Title   string
	Body    string
	Author  string
	HeadRef string
	HeadSHA string
	BaseRef string
	// Files is the head commit's tree.
	Files map[string]string
	// Commits are the branch's commits from the head back to the base
	// branch's head (exclusive), newest first.
	Commits []string
}

// OpenedPulls lists the pull requests opened through the API on
// owner/repo, oldest first, as they are now.
func (s *Server) OpenedPulls(owner, repo string) []OpenedPull {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil {
		return nil
	}
	var out []OpenedPull
	for _, n := range s.objects().opened[rp.fullName()] {
		is := rp.issues[n]
		pr := is.pull
		op := OpenedPull{Number: n, Title: is.title, Body: is.body, Author: is.author, HeadRef: pr.headRef, HeadSHA: pr.headSHA, BaseRef: pr.baseRef}
		if cm := s.commits[pr.headSHA]; cm != nil {
			op.Files = map[string]string{}
			for p, content := range cm.files {
				op.Files[p] = content
			}
		}
		stop := rp.branches[pr.baseRef]
		for at := pr.headSHA; at != "" && at != stop && !slices.Contains(op.Commits, at); at = s.commits[at].parent {
			op.Commits = append(op.Commits, at)
		}
		out = append(out, op)
	}
	return out
}

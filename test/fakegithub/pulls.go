package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// pull is the pull-request side of an issue.
type pull struct {
	id       int64
	headSHA  string
	headRef  string
	headRepo string // full name, e.g. a fork's
	baseRef  string
	// reviews are its submitted reviews, oldest first.
	reviews []*review
	// mergeSHA is the merge commit once MergePull merged it.
	mergeSHA string
}

// AddPull opens pull request number on owner/repo from headSHA into the
// branch baseRef. headRepoFullName is where the head lives ("" or
// "owner/repo" for the same repository, another seeded repository for a
// fork). headSHA must be a commit made with [Server.Commit] (in the head
// repository, when that is seeded); like refs/pull/N/head it becomes
// reachable in owner/repo, so contents, tarballs and check runs work on it.
// The author is the head repository's owner.
func (s *Server) AddPull(owner, repo string, number int, headSHA, baseRef, body string, headRepoFullName string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.seededRepo("AddPull", owner, repo)
	s.checkNewNumber("AddPull", rp, number)
	if _, ok := rp.branches[baseRef]; !ok {
		s.fatalf("AddPull %s#%d: base branch %q has no commits", rp.fullName(), number, baseRef)
	}
	if headRepoFullName == "" {
		headRepoFullName = rp.fullName()
	}
	headOwner, headName, ok := strings.Cut(headRepoFullName, "/")
	if !ok {
		s.fatalf("AddPull %s#%d: head repository %q is not owner/repo", rp.fullName(), number, headRepoFullName)
	}
	headRef := fmt.Sprintf("pr-%d", number)
	if head := s.repos[repoKey(headOwner, headName)]; head != nil {
		if !head.commits[headSHA] {
			s.fatalf("AddPull %s#%d: %s is not a commit of %s", rp.fullName(), number, headSHA, head.fullName())
		}
		headRepoFullName = head.fullName()
		headRef = branchAt(head, headSHA, headRef)
	} else if s.commits[headSHA] == nil {
		s.fatalf("AddPull %s#%d: %s is not a commit made with Commit", rp.fullName(), number, headSHA)
	}
	for sha := headSHA; sha != ""; sha = s.commits[sha].parent {
		rp.commits[sha] = true
	}
	s.userID(headOwner)
	rp.issues[number] = &issue{
		id:        s.newID(),
		number:    number,
		author:    headOwner,
		title:     fmt.Sprintf("Pull request #%d", number),
		body:      body,
		createdAt: s.now(),
		pull:      &pull{id: s.newID(), headSHA: headSHA, headRef: headRef, headRepo: headRepoFullName, baseRef: baseRef},
	}
}

// branchAt names a branch of rp whose head is sha, or returns fallback.
func branchAt(rp *repository, sha, fallback string) string {
	best := ""
	for name, head := range rp.branches {
		if head == sha && (best == "" || name < best) {
			best = name
		}
	}
	if best == "" {
		return fallback
	}
	return best
}

// getPull serves GET /repos/{owner}/{repo}/pulls/{number}.
func (c *call) getPull() *response {
	is := c.findIssue()
	if is == nil || is.pull == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.pullJSON(c.repo, is))
}

// refRepoJSON is the repository of a pull request's head or base: the full
// object for a seeded repository, a minimal one otherwise.
func (s *Server) refRepoJSON(fullName string) obj {
	owner, name, _ := strings.Cut(fullName, "/")
	if rp := s.repos[repoKey(owner, name)]; rp != nil {
		return s.repoJSON(rp)
	}
	return obj{
		"name":      name,
		"full_name": fullName,
		"owner":     s.userJSON(owner, "User"),
		"private":   false,
		"html_url":  "https://github.com/" + fullName,
		"url":       s.apiURL("repos/" + fullName),
	}
}

// pullJSON is a pull request as GitHub shows it. base.sha is the base
// branch's current head.
func (s *Server) pullJSON(rp *repository, is *issue) obj {
	pr := is.pull
	num := strconv.Itoa(is.number)
	headOwner, _, _ := strings.Cut(pr.headRepo, "/")
	headRepo := s.refRepoJSON(pr.headRepo)
	if !strings.EqualFold(pr.headRepo, rp.fullName()) {
		headRepo["fork"] = true
	}
	html := "https://github.com/" + rp.fullName() + "/pull/" + num
	out := obj{
		"id":                  pr.id,
		"node_id":             nodeID("PR_", pr.id),
		"url":                 s.repoURL(rp, "pulls/"+num),
		"html_url":            html,
		"diff_url":            html + ".diff",
		"patch_url":           html + ".patch",
		"issue_url":           s.repoURL(rp, "issues/"+num),
		"commits_url":         s.repoURL(rp, "pulls/"+num+"/commits"),
		"comments_url":        s.repoURL(rp, "issues/"+num+"/comments"),
		"statuses_url":        s.repoURL(rp, "statuses/"+pr.headSHA),
		"number":              is.number,
		"state":               "open",
		"locked":              false,
		"title":               is.title,
		"user":                s.userJSON(is.author, "User"),
		"body":                strOrNil(is.body),
		"labels":              s.labelsJSON(rp, is.labels),
		"milestone":           nil,
		"created_at":          ts(is.createdAt),
		"updated_at":          ts(is.createdAt),
		"closed_at":           nil,
		"merged_at":           nil,
		"merge_commit_sha":    nil,
		"assignee":            nil,
		"assignees":           []obj{},
		"requested_reviewers": []obj{},
		"draft":               false,
		"head": obj{
			"label": headOwner + ":" + pr.headRef,
			"ref":   pr.headRef,
			"sha":   pr.headSHA,
			"user":  s.userJSON(headOwner, "User"),
			"repo":  headRepo,
		},
		"base": obj{
			"label": rp.owner + ":" + pr.baseRef,
			"ref":   pr.baseRef,
			"sha":   rp.branches[pr.baseRef],
			"user":  s.userJSON(rp.owner, "User"),
			"repo":  s.repoJSON(rp),
		},
		"author_association":    s.association(rp, is.author),
		"merged":                false,
		"mergeable":             nil,
		"mergeable_state":       "unknown",
		"merged_by":             nil,
		"comments":              len(is.comments),
		"maintainer_can_modify": false,
		"commits":               1,
	}
	if !is.closedAt.IsZero() {
		out["state"], out["closed_at"] = "closed", ts(is.closedAt)
	}
	if pr.mergeSHA != "" {
		out["merged"], out["merged_at"], out["merge_commit_sha"], out["mergeable_state"] = true, ts(is.closedAt), pr.mergeSHA, "clean"
	}
	return out
}

// minimalPullJSON is the short pull request of a check run's pull_requests.
func (s *Server) minimalPullJSON(rp *repository, is *issue) obj {
	mini := func(ref, sha string) obj {
		return obj{"ref": ref, "sha": sha, "repo": obj{"id": rp.id, "url": s.repoURL(rp, ""), "name": rp.name}}
	}
	return obj{
		"url":    s.repoURL(rp, "pulls/"+strconv.Itoa(is.number)),
		"id":     is.pull.id,
		"number": is.number,
		"head":   mini(is.pull.headRef, is.pull.headSHA),
		"base":   mini(is.pull.baseRef, rp.branches[is.pull.baseRef]),
	}
}

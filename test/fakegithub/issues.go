package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// issue is an issue or the issue side of a pull request (they share
// numbers, comments and labels, as on GitHub).
type issue struct {
	id        int64
	number    int
	author    string
	title     string
	body      string
	createdAt time.Time
	updatedAt time.Time // zero: never changed since createdAt
	closedAt  time.Time // zero: open
	labels    []*label
	comments  []*Comment
	pull      *pull
}

// AddIssue opens issue number in a seeded repository, written by author.
func (s *Server) AddIssue(owner, repo string, number int, author, body string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.seededRepo("AddIssue", owner, repo)
	s.checkNewNumber("AddIssue", rp, number)
	s.userID(author)
	rp.issues[number] = &issue{
		id:        s.newID(),
		number:    number,
		author:    author,
		title:     fmt.Sprintf("Issue #%d", number),
		body:      body,
		createdAt: s.now(),
	}
}

// CloseIssue closes an issue, as if a person had closed it on GitHub.
func (s *Server) CloseIssue(owner, repo string, number int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, is := s.seededPlainIssue("CloseIssue", owner, repo, number)
	is.closedAt = s.now()
	is.updatedAt = is.closedAt
}

// ReopenIssue reopens a closed issue, as if a person had reopened it.
func (s *Server) ReopenIssue(owner, repo string, number int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, is := s.seededPlainIssue("ReopenIssue", owner, repo, number)
	if is.closedAt.IsZero() {
		s.fatalf("ReopenIssue: #%d is open", number)
	}
	is.closedAt = time.Time{}
	is.updatedAt = s.now()
}

// EditIssue sets an issue's title and body, as if a person had edited it.
func (s *Server) EditIssue(owner, repo string, number int, title, body string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, is := s.seededPlainIssue("EditIssue", owner, repo, number)
	is.title, is.body = title, body
	is.updatedAt = s.now()
}

// seededPlainIssue is seededIssue for an issue that must not be a pull
// request (whose state the fake does not change).
func (s *Server) seededPlainIssue(op, owner, repo string, number int) (*repository, *issue) {
	s.t.Helper()
	rp, is := s.seededIssue(op, owner, repo, number)
	if is.pull != nil {
		s.fatalf("%s: %s#%d is a pull request", op, rp.fullName(), number)
	}
	return rp, is
}

// updated is when the issue last changed.
func (is *issue) updated() time.Time {
	if is.updatedAt.IsZero() {
		return is.createdAt
	}
	return is.updatedAt
}

// seededRepo finds a repository for a seeding call or fails the test.
func (s *Server) seededRepo(op, owner, repo string) *repository {
	s.t.Helper()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil {
		s.fatalf("%s: repository %s/%s was not added", op, owner, repo)
	}
	return rp
}

// seededIssue is issue or pull request number of owner/repo, and the
// repository, which a test must have added; op names the seeding call in
// the failure.
func (s *Server) seededIssue(op, owner, repo string, number int) (*repository, *issue) {
	s.t.Helper()
	rp := s.seededRepo(op, owner, repo)
	is := rp.issues[number]
	if is == nil {
		s.fatalf("%s: %s#%d was not added", op, rp.fullName(), number)
	}
	return rp, is
}

// checkNewNumber fails the test when an issue or pull number is taken.
func (s *Server) checkNewNumber(op string, rp *repository, number int) {
	s.t.Helper()
	if number <= 0 {
		s.fatalf("%s: number %d must be positive", op, number)
	}
	if rp.issues[number] != nil {
		s.fatalf("%s: %s#%d already exists (issues and pulls share numbers)", op, rp.fullName(), number)
	}
}

// findIssue finds the issue (or pull) named by the {number} parameter.
func (c *call) findIssue() *issue {
	n, err := strconv.Atoi(c.params["number"])
	if err != nil {
		return nil
	}
	return c.repo.issues[n]
}

// issueJSON is an issue as GitHub shows it; a pull request's issue has a
// pull_request object.
func (s *Server) issueJSON(rp *repository, is *issue) obj {
	kind := "issues"
	if is.pull != nil {
		kind = "pull"
	}
	num := strconv.Itoa(is.number)
	out := obj{
		"id":                 is.id,
		"node_id":            nodeID("I_", is.id),
		"url":                s.repoURL(rp, "issues/"+num),
		"repository_url":     s.repoURL(rp, ""),
		"labels_url":         s.repoURL(rp, "issues/"+num+"/labels{/name}"),
		"comments_url":       s.repoURL(rp, "issues/"+num+"/comments"),
		"events_url":         s.repoURL(rp, "issues/"+num+"/events"),
		"html_url":           "https://github.com/" + rp.fullName() + "/" + kind + "/" + num,
		"number":             is.number,
		"state":              "open",
		"state_reason":       nil,
		"title":              is.title,
		"body":               strOrNil(is.body),
		"user":               s.userJSON(is.author, "User"),
		"labels":             s.labelsJSON(rp, is.labels),
		"assignee":           nil,
		"assignees":          []obj{},
		"milestone":          nil,
		"locked":             false,
		"active_lock_reason": nil,
		"comments":           len(is.comments),
		"created_at":         ts(is.createdAt),
		"updated_at":         ts(is.updated()),
		"closed_at":          nil,
		"author_association": s.association(rp, is.author),
	}
	if !is.closedAt.IsZero() {
		out["state"], out["state_reason"], out["closed_at"] = "closed", "completed", ts(is.closedAt)
	}
	if is.pull != nil {
		out["pull_request"] = obj{
			"url":       s.repoURL(rp, "pulls/"+num),
			"html_url":  "https://github.com/" + rp.fullName() + "/pull/" + num,
			"diff_url":  "https://github.com/" + rp.fullName() + "/pull/" + num + ".diff",
			"patch_url": "https://github.com/" + rp.fullName() + "/pull/" + num + ".patch",
			"merged_at": nil,
		}
	}
	return out
}

// association is a login's author_association in a repository.
func (s *Server) association(rp *repository, login string) string {
	switch {
	case strings.EqualFold(login, rp.owner):
		return "OWNER"
	case rp.perms[strings.ToLower(login)] != "" && rp.perms[strings.ToLower(login)] != "none":
		return "COLLABORATOR"
	}
	return "NONE"
}

// getIssue serves GET /repos/{owner}/{repo}/issues/{number}.
func (c *call) getIssue() *response {
	is := c.findIssue()
	if is == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.issueJSON(c.repo, is))
}

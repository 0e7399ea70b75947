package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Pull request reviews, merges, and the commits made through the Git data
// API as a test reads them back.

func init() {
	routes = append(routes,
		route{"GET", p("repos/{owner}/{repo}/pulls/{number}/reviews"), authRepo, docsBase + "pulls/reviews#list-reviews-for-a-pull-request", (*call).listReviews},
	)
}

// review is one submitted review of a pull request.
type review struct {
	id       int64
	reviewer string
	state    string // APPROVED, CHANGES_REQUESTED, COMMENTED
	body     string
	commitID string
	at       time.Time
}

// reviewStates are the states a submitted review can have.
var reviewStates = []string{"APPROVED", "CHANGES_REQUESTED", "COMMENTED"}

// AddReview submits a review of pull request number by reviewer, on its
// head as it is now, with state APPROVED, CHANGES_REQUESTED or COMMENTED,
// and returns the review as a pull_request_review webhook's "review"
// object has it (state in lower case there, as GitHub sends it).
func (s *Server) AddReview(owner, repo string, number int, reviewer, state, body string) map[string]any {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.seededRepo("AddReview", owner, repo)
	is := rp.issues[number]
	if is == nil || is.pull == nil {
		s.fatalf("AddReview %s#%d: no such pull request", rp.fullName(), number)
	}
	ok := false
	for _, st := range reviewStates {
		ok = ok || st == state
	}
	if !ok {
		s.fatalf("AddReview %s#%d: state %q, want one of %v", rp.fullName(), number, state, reviewStates)
	}
	if strings.EqualFold(reviewer, is.author) && state != "COMMENTED" {
		// GitHub refuses an author's approval or change request of their own
		// pull request ("Can not approve your own pull request"); the
		// webhook of an author's own review is still a COMMENTED one.
		s.fatalf("AddReview %s#%d: GitHub lets no author %s their own pull request", rp.fullName(), number, strings.ToLower(state))
	}
	rv := &review{id: s.newID(), reviewer: reviewer, state: state, body: body, commitID: is.pull.headSHA, at: s.now()}
	is.pull.reviews = append(is.pull.reviews, rv)
	out := s.reviewJSON(rp, is, rv)
	out["state"] = strings.ToLower(state)
	return out
}

// reviewJSON is a review as the REST API shows it.
func (s *Server) reviewJSON(rp *repository, is *issue, rv *review) obj {
	num := strconv.Itoa(is.number)
	return obj{
		"id":                 rv.id,
		"node_id":            nodeID("PRR_", rv.id),
		"user":               s.userJSON(rv.reviewer, "User"),
		"body":               rv.body,
		"state":              rv.state,
		"html_url":           fmt.Sprintf("https://github.com/%s/pull/%s#pullrequestreview-%d", rp.fullName(), num, rv.id),
		"pull_request_url":   s.repoURL(rp, "pulls/"+num),
		"author_association": s.association(rp, rv.reviewer),
		"submitted_at":       ts(rv.at),
		"commit_id":          rv.commitID,
	}
}

// listReviews serves GET /repos/{owner}/{repo}/pulls/{number}/reviews,
// oldest first, paginated.
func (c *call) listReviews() *response {
	is := c.findIssue()
	if is == nil || is.pull == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	start, end, link := c.page(len(is.pull.reviews))
	out := make([]obj, 0, end-start)
	for _, rv := range is.pull.reviews[start:end] {
		out = append(out, c.s.reviewJSON(c.repo, is, rv))
	}
	return withLink(jsonResponse(http.StatusOK, out), link)
}

// MergePull merges pull request number of a seeded repository as GitHub's
// "Create a merge commit" would leave its files: the base branch moves to
// a commit holding the head's tree (the fake's commits have one parent:
// the base branch's head), the pull request is closed and merged. It
// returns the merge commit's sha.
func (s *Server) MergePull(owner, repo string, number int) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.seededRepo("MergePull", owner, repo)
	is := rp.issues[number]
	if is == nil || is.pull == nil || !is.closedAt.IsZero() {
		s.fatalf("MergePull %s#%d: no open pull request", rp.fullName(), number)
	}
	head := s.commits[is.pull.headSHA]
	parent := rp.branches[is.pull.baseRef]
	message := fmt.Sprintf("Merge pull request #%d\n", number)
	sha := commitIDBy(head.tree, parent, "testfirst fake <fake@testfirst.invalid>", message)
	if _, ok := s.commits[sha]; !ok {
		s.commits[sha] = &commit{sha: sha, tree: head.tree, parent: parent, files: head.files, time: s.now()}
	}
	rp.commits[sha] = true
	rp.branches[is.pull.baseRef] = sha
	is.pull.mergeSHA = sha
	is.closedAt = s.now()
	is.updatedAt = is.closedAt
	return sha
}

// GitCommit is a commit as a test reads it back.
type GitCommit struct {
	SHA, Parent string
	// Author is the author's name, Message the message: "testfirst fake"
	// and "fake commit" for commits made with Commit.
	Author, Message string
	Files           map[string]string
}

// CommitOf returns the commit a branch of owner/repo (or a sha reachable
// there) names now; ok is false when there is none.
func (s *Server) CommitOf(owner, repo, ref string) (GitCommit, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil {
		return GitCommit{}, false
	}
	cm := s.resolveRef(rp, ref)
	if cm == nil {
		return GitCommit{}, false
	}
	out := GitCommit{SHA: cm.sha, Parent: cm.parent, Author: "testfirst fake", Message: "fake commit", Files: map[string]string{}}
	if cm.author != "" {
		out.Author, out.Message = cm.author, cm.message
	}
	for p, content := range cm.files {
		out.Files[p] = content
	}
	return out, true
}

// PullHead returns pull request number's head sha now.
func (s *Server) PullHead(owner, repo string, number int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil || rp.issues[number] == nil || rp.issues[number].pull == nil {
		return ""
	}
	return rp.issues[number].pull.headSHA
}

// noreplyEmail is the no-reply address GitHub gives an account's commits.
// Callers hold s.mu.
func (s *Server) noreplyEmail(login string) string {
	return fmt.Sprintf("%d+%s@users.noreply.github.com", s.userID(login), login)
}

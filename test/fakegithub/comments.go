package fakegithub

import (
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxCommentLength is GitHub's limit on a comment body, in characters.
const maxCommentLength = 65536

// Comment is an issue (or pull request) comment as GitHub stores it.
type Comment struct {
	ID        int64
	Body      string
	User      string // "<slug>[bot]" for comments the app posted
	CreatedAt time.Time
	UpdatedAt time.Time
}

// commentBody is the body of create and update.
type commentBody struct {
	Body *string `json:"body"`
}

// checkCommentBody applies GitHub's rules to a comment body.
func checkCommentBody(doc string, body *string) *response {
	if body == nil {
		return notSupplied(doc, "body")
	}
	if strings.TrimSpace(*body) == "" {
		return validationFailed(doc, fieldError{Resource: "IssueComment", Code: "unprocessable", Field: "data", Message: "Body cannot be blank"})
	}
	if utf8.RuneCountInString(*body) > maxCommentLength {
		return validationFailed(doc, fieldError{Resource: "IssueComment", Code: "unprocessable", Field: "data", Message: "Body is too long (maximum is 65536 characters)"})
	}
	return nil
}

// createComment serves POST /repos/{owner}/{repo}/issues/{number}/comments.
func (c *call) createComment() *response {
	is := c.findIssue()
	if is == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	var req commentBody
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if resp := checkCommentBody(c.doc, req.Body); resp != nil {
		return resp
	}
	now := c.s.now()
	cm := &Comment{ID: c.s.newID(), Body: *req.Body, User: botLogin(), CreatedAt: now, UpdatedAt: now}
	is.comments = append(is.comments, cm)
	return jsonResponse(http.StatusCreated, c.s.commentJSON(c.repo, is, cm))
}

// listComments serves GET /repos/{owner}/{repo}/issues/{number}/comments,
// oldest first, with since and pagination.
func (c *call) listComments() *response {
	is := c.findIssue()
	if is == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	var since time.Time
	if v := c.r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return invalidRequest(c.doc, "For 'since', \""+v+"\" is not a date-time.")
		}
		since = t
	}
	var list []*Comment
	for _, cm := range is.comments {
		if !cm.UpdatedAt.Before(since) {
			list = append(list, cm)
		}
	}
	start, end, link := c.page(len(list))
	out := make([]obj, 0, end-start)
	for _, cm := range list[start:end] {
		out = append(out, c.s.commentJSON(c.repo, is, cm))
	}
	return withLink(jsonResponse(http.StatusOK, out), link)
}

// findComment finds the comment named by the {id} parameter in the repo.
func (c *call) findComment() (*issue, *Comment) {
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	if err != nil {
		return nil, nil
	}
	for _, is := range c.repo.issues {
		for _, cm := range is.comments {
			if cm.ID == id {
				return is, cm
			}
		}
	}
	return nil, nil
}

// getComment serves GET /repos/{owner}/{repo}/issues/comments/{id}.
func (c *call) getComment() *response {
	is, cm := c.findComment()
	if cm == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.commentJSON(c.repo, is, cm))
}

// updateComment serves PATCH /repos/{owner}/{repo}/issues/comments/{id}.
// Like GitHub, an app may only edit its own comments.
func (c *call) updateComment() *response {
	is, cm := c.findComment()
	if cm == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	if cm.User != botLogin() {
		return errorResponse(http.StatusForbidden, "Resource not accessible by integration", c.doc)
	}
	var req commentBody
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if resp := checkCommentBody(c.doc, req.Body); resp != nil {
		return resp
	}
	cm.Body = *req.Body
	cm.UpdatedAt = c.s.now()
	return jsonResponse(http.StatusOK, c.s.commentJSON(c.repo, is, cm))
}

// commentJSON is an issue comment as GitHub shows it.
func (s *Server) commentJSON(rp *repository, is *issue, cm *Comment) obj {
	id := strconv.FormatInt(cm.ID, 10)
	kind := "issues"
	if is.pull != nil {
		kind = "pull"
	}
	userType := "User"
	var via any
	if cm.User == botLogin() {
		userType = "Bot"
		via = s.appJSON()
	}
	return obj{
		"id":                       cm.ID,
		"node_id":                  nodeID("IC_", cm.ID),
		"url":                      s.repoURL(rp, "issues/comments/"+id),
		"html_url":                 "https://github.com/" + rp.fullName() + "/" + kind + "/" + strconv.Itoa(is.number) + "#issuecomment-" + id,
		"issue_url":                s.repoURL(rp, "issues/"+strconv.Itoa(is.number)),
		"body":                     cm.Body,
		"user":                     s.userJSON(cm.User, userType),
		"created_at":               ts(cm.CreatedAt),
		"updated_at":               ts(cm.UpdatedAt),
		"author_association":       s.association(rp, cm.User),
		"performed_via_github_app": via,
	}
}

// Comments returns the comments on an issue or pull request, oldest first.
func (s *Server) Comments(owner, repo string, issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil || rp.issues[issue] == nil {
		return nil
	}
	out := make([]Comment, 0, len(rp.issues[issue].comments))
	for _, cm := range rp.issues[issue].comments {
		out = append(out, *cm)
	}
	return out
}

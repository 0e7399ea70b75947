package test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestServeWithoutGradingSaysWhy: a service started without the store's
// keys takes deliveries but cannot grade. /readyz says it is degraded and
// why; a pull request that closes a ticket gets its check run at once,
// action required, saying grading is not configured and why; a command
// is answered saying nothing was graded.
func TestServeWithoutGradingSaysWhy(t *testing.T) {
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, map[string]string{"README.md": "base\n"})
	head := gh.Commit(pipeOwner, pipeRepo, "feature", map[string]string{"README.md": "change\n"})
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	// No store keys: TESTFIRST_GRADER_RECIPIENTS and the rest unset.
	s := startServe(t, gh, pipeSecret)
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	waitFor(t, "grading to be decided off", 30*time.Second, func() bool { return strings.Contains(s.log(), "pull requests will not be graded") }, s.log)
	code, body := s.get(t, "/readyz")
	if code != http.StatusOK || !strings.HasPrefix(body, "degraded: pull requests are not graded: ") {
		t.Errorf("/readyz = %d %q; want it degraded, saying why", code, body)
	}

	deliver("issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)
	gh.AddPull(pipeOwner, pipeRepo, 2, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	deliver("pull_request", "opened", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": head,
		"pull_request.state": "open", "installation.id": 1}))
	var run fakegithub.CheckRun
	waitFor(t, "a check run saying why", 60*time.Second, func() bool {
		for _, r := range gradeRuns(gh.CheckRuns(pipeOwner, pipeRepo)) {
			if r.HeadSHA == head {
				run = r
				return true
			}
		}
		return false
	}, s.log)
	if run.Status != "completed" || run.Conclusion != "action_required" ||
		!strings.HasPrefix(run.Summary, "grading is not configured on this installation: `pull requests are not graded: hidden test store: ") {
		t.Errorf("check run %+v; want it completed, action required, saying grading is not configured and why", run)
	}

	deliver("issue_comment", "regrade", patchFixture(t, "issue_comment/created.payload.json", map[string]any{
		"issue.number": 2, "issue.pull_request": map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"},
		"comment.body": "/testfirst regrade", "comment.user.login": "alice", "comment.user.type": "User", "sender.login": "alice", "installation.id": 1}))
	waitFor(t, "the reply", 60*time.Second, func() bool {
		for _, c := range gh.Comments(pipeOwner, pipeRepo, 2) {
			if strings.Contains(c.Body, "Nothing was graded: grading is not configured on this installation") {
				return true
			}
		}
		return false
	}, s.log)
}

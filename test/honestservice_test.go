package test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/tree"
)

// TestHonestShapeThroughTheService takes the most common shape of hidden
// tests that was accused (issue "Honest work accused of tampering", case
// a: one module imports the new function at module level, another inside
// its tests) through the running service: its base check made such a
// version "not a valid task … a new version is needed", so it could never
// be approved. Now the version is ready for review, the complete pull
// request passes, and an unfinished one fails naming what is missing.
func TestHonestShapeThroughTheService(t *testing.T) {
	dir := filepath.Join("testdata", "honest", "collecterror")
	p := newPipelineEnv(t)
	p.noReference, p.hiddenDir = true, filepath.Join(dir, "hidden")
	base, err := tree.Load(filepath.Join(dir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	p.gh.Commit(pipeOwner, pipeRepo, pipeBranch, files(base))
	p.gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Multiply")
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write")
	s := p.serve(t, "")
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1,
		"sender.login": "alice", "issue.number": 1})
	if code := s.deliver(t, pipeSecret, "issues", "d-honest-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	waitFor(t, "the ticket", time.Minute, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)
	k, digest := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "**v1** are ready for review")
	p.decide(t, s, k, digest, "alice", "")

	pr := func(number int, branch, sub string) string {
		t.Helper()
		over, err := tree.Load(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		all := files(base)
		for path, data := range files(over) {
			all[path] = data
		}
		head := p.gh.Commit(pipeOwner, pipeRepo, branch, all)
		p.gh.AddPull(pipeOwner, pipeRepo, number, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
		opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"number": number, "pull_request.number": number,
			"pull_request.body": "Fixes #1", "pull_request.head.sha": head, "installation.id": 1})
		if code := s.deliver(t, pipeSecret, "pull_request", "d-honest-"+branch, opened); code != http.StatusAccepted {
			t.Fatalf("pull request %d: %d", number, code)
		}
		return head
	}
	done := pr(2, "done", "pr")
	p.run(t, s, done, "the complete pull request passing", completed("success"))
	unfinished := pr(3, "unfinished", "unfinished")
	r := p.run(t, s, unfinished, "the unfinished pull request failing", completed("failure"))
	if !strings.Contains(r.Summary, "multiply") || strings.Contains(r.Summary, "tampered") {
		t.Errorf("the unfinished pull request's run does not name what is missing, or accuses it:\n%s", r.Summary)
	}
}

package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestServeTicketLifecycle drives one ticket through the real binary on
// SQLite, the file store and Docker, with real payloads:
//
//   - a pull request opened before any tests is not graded: its check run
//     is queued, saying what it waits for;
//   - each pushed version gets its base check and a "ready" comment with
//     its card link; a rejection is announced without its reason;
//   - an approval labels the issue, is announced with its digest, and the
//     open pull request is graded at once;
//   - a push regrades the new head; a push while a grade runs cancels it;
//   - a redelivered push does not grade again; a re-run regrades;
//   - /testfirst status answers users with write access, others are told;
//   - nothing sent to GitHub carries a canary or a test body.
func TestServeTicketLifecycle(t *testing.T) {
	p := newPipelineEnv(t)
	gh := p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words\n\n- [ ] counts words\n- [ ] ignores punctuation")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	gh.SetPermission(pipeOwner, pipeRepo, "mallory", "read")
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	pull := func(action, id, head string) {
		t.Helper()
		deliver("pull_request", id, patchFixture(t, "pull_request/"+action+".payload.json", map[string]any{
			"number": 2, "pull_request.number": 2, "pull_request.body": "Implements counting.\n\nFixes #1", "pull_request.head.sha": head,
			"pull_request.state": "open", "installation.id": 1}))
	}

	deliver("issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)

	// An implementer starts before the tests exist: nothing to grade yet.
	gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	pull("opened", "pr-opened", p.fixedSHA)

	// v1: checked on the base, announced, rejected.
	k1, d1 := p.push(t, "writer-bot", nil)
	ready := p.comment(t, s, 1, "**v1** are ready for review")
	for _, want := range []string{"10 tests", "/tickets/" + pipeOwner + "/" + pipeRepo + "/1/versions/1", "@alice can review"} {
		if !strings.Contains(ready, want) {
			t.Errorf("ready comment lacks %q:\n%s", want, ready)
		}
	}
	// Not graded before any approval, but never without its check run:
	// queued, saying what it waits for.
	p.run(t, s, p.fixedSHA, "waiting for v1's review", func(r fakegithub.CheckRun) bool {
		return r.Status == "queued" && r.Title == "waiting for approved hidden tests (v1 awaits review)"
	})
	if runs := p.runsOn(p.fixedSHA); len(runs) != 1 {
		t.Fatalf("before any approval: %+v; want the one waiting run", runs)
	}
	p.decide(t, s, k1, d1, "alice", "test_count_words asserts nothing about empty input")
	p.comment(t, s, 1, "**v1** were rejected")

	// v2: approved; the open pull request is graded without a new event.
	k2, d2 := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "**v2** are ready for review")
	p.decide(t, s, k2, d2, "alice", "")
	approved := p.comment(t, s, 1, "**v2** were approved")
	if !strings.Contains(approved, d2) || !strings.Contains(approved, "10 tests") {
		t.Errorf("approved comment lacks the digest or the count:\n%s", approved)
	}
	waitFor(t, "the approved label", 30*time.Second, func() bool {
		return strings.Contains(strings.Join(gh.IssueLabels(pipeOwner, pipeRepo, 1), ","), "test-first:approved")
	}, s.log)
	run := p.run(t, s, p.fixedSHA, "passing", completed("success"))
	if run.Title != "10/10 hidden tests passed · trust: isolated" || !strings.Contains(run.Summary, d2) {
		t.Errorf("check run %+v", run)
	}

	// A pull request from a fork is graded the same way: its head is
	// fetched through the base repository, as refs/pull/N/head.
	gh.AddRepo(0, "forker", pipeRepo, pipeBranch)
	forkSHA := gh.Commit("forker", pipeRepo, pipeBranch, files(p.fixed))
	gh.AddPull(pipeOwner, pipeRepo, 3, forkSHA, pipeBranch, "Fixes #1", "forker/"+pipeRepo)
	deliver("pull_request", "fork-opened", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 3, "pull_request.number": 3, "pull_request.body": "Fixes #1", "pull_request.head.sha": forkSHA,
		"pull_request.head.repo.full_name": "forker/" + pipeRepo, "pull_request.state": "open", "installation.id": 1}))
	p.run(t, s, forkSHA, "passing", completed("success"))

	// A push of a broken head fails, naming the failing tests.
	broken := p.commit("feature", p.base, map[string]string{"NOTES.md": "work in progress\n"})
	pull("synchronize", "push-broken", broken)
	failed := p.run(t, s, broken, "failing", completed("failure"))
	if !strings.Contains(failed.Summary, "test_") || strings.Contains(failed.Summary, "assert ") {
		t.Errorf("failing check run should list failing ids and no test text:\n%s", failed.Summary)
	}

	// Two pushes in a row: the first one's grade is cancelled.
	first := p.commit("feature", p.fixed, map[string]string{"NOTES.md": "one\n"})
	second := p.commit("feature", p.fixed, map[string]string{"NOTES.md": "two\n"})
	pull("synchronize", "push-first", first)
	p.run(t, s, first, "in progress", func(r fakegithub.CheckRun) bool { return r.Status == "in_progress" })
	pull("synchronize", "push-second", second)
	p.run(t, s, first, "cancelled", completed("cancelled"))
	p.run(t, s, second, "passing", completed("success"))

	// A redelivered push does not grade again; a re-run does.
	pull("synchronize", "push-second", second)
	graded := strings.Count(s.log(), `"msg":"graded"`)
	// The check_run fixture comes from another repository: give it ours.
	var opened struct {
		Repository map[string]any `json:"repository"`
	}
	if err := json.Unmarshal(patchFixture(t, "pull_request/opened.payload.json", nil), &opened); err != nil {
		t.Fatal(err)
	}
	rerun := patchFixture(t, "check_run/rerequested.payload.json", map[string]any{"repository": opened.Repository, "check_run.name": "testfirst",
		"check_run.external_id": p.runsOn(second)[0].ExternalID, "check_run.head_sha": second, "installation.id": 1})
	deliver("check_run", "rerun", rerun)
	waitFor(t, "a regrade", 120*time.Second, func() bool { return strings.Count(s.log(), `"msg":"graded"`) > graded }, s.log)
	if runs := p.runsOn(second); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Errorf("after a redelivery and a re-run, want the one passing run on the head: %+v", runs)
	} else if code, page := p.page(t, s, "alice", runs[0].DetailsURL); code != http.StatusOK || !strings.Contains(page, "Earlier attempts") ||
		!strings.Contains(page, `<td>1</td><td><span class="badge pass">pass</span> · trust isolated</td><td>10/10</td>`) {
		// The re-run graded the head again: the first attempt's result is
		// kept on the grade's page.
		t.Errorf("the grade page after a re-run (%s): %d\n%s", runs[0].DetailsURL, code, page)
	}

	// Commands.
	comment := func(id, user, body string) {
		deliver("issue_comment", id, patchFixture(t, "issue_comment/created.payload.json", map[string]any{
			"issue.number": 2, "issue.pull_request": map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"},
			"comment.body": body, "comment.user.login": user, "comment.user.type": "User", "sender.login": user, "installation.id": 1}))
	}
	comment("status", "alice", "/testfirst status")
	status := p.comment(t, s, 2, "**testfirst** #2")
	if !strings.Contains(status, "hidden tests v2: pass, 10/10 passed, trust isolated") {
		t.Errorf("status reply:\n%s", status)
	}
	comment("status-stranger", "mallory", "/testfirst regrade")
	p.comment(t, s, 2, "`/testfirst regrade` needs write access")
	// The implementer with read access only asks where the pull request
	// stands and is told, as the check run tells anyone; someone who cannot
	// read the repository is not.
	p.gh.SetPermission(pipeOwner, pipeRepo, "rita", "read")
	before := len(p.gh.Comments(pipeOwner, pipeRepo, 2))
	comment("status-reader", "rita", "/testfirst status")
	waitFor(t, "the status reply to a reader", 120*time.Second, func() bool {
		cs := p.gh.Comments(pipeOwner, pipeRepo, 2)
		return len(cs) > before && strings.Contains(cs[len(cs)-1].Body, "hidden tests v2: pass, 10/10 passed")
	}, s.log)
	comment("status-none", "outsider", "/testfirst status")
	p.comment(t, s, 2, "`/testfirst status` needs read access")

	// Nothing the app sent to GitHub carries the canary, a test body or
	// the rejection's reason.
	var bodies bytes.Buffer
	for _, r := range gh.Requests() {
		bodies.Write(r.Body)
	}
	for _, leak := range []string{"testfirst-canary", "tfc-", "def test_", "assert ", "asserts nothing about empty input"} {
		if bytes.Contains(bodies.Bytes(), []byte(leak)) {
			t.Errorf("a request body sent to GitHub contains %q", leak)
		}
	}
}

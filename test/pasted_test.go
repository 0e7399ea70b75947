package test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestServePastedTestContaminatesNextGrade walks a hidden test copied from
// the approval card (canary masked) into an issue comment through the real
// binary, SQLite, the file store and Docker: the comment that quotes the
// base's own test is honest and marks nothing; the comment with a hidden
// test renamed and reformatted marks the ticket, so the pull request's
// grade is contaminated, naming the comment; the card tells the requester
// which test matched; the implementer's view (the check run and the
// ticket's summary) says where, and holds no hidden test text. A review
// comment pasting the other test is read too.
func TestServePastedTestContaminatesNextGrade(t *testing.T) {
	p := newPipelineEnv(t)
	p.noReference = true
	gh := p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Bigrams\n\n- [ ] bigrams of a sentence")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	gh.SetPermission(pipeOwner, pipeRepo, "rita", "read")
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	comment := func(id, by, body, link string) {
		t.Helper()
		deliver("issue_comment", id, patchFixture(t, "issue_comment/created.payload.json", map[string]any{"issue.number": 1, "comment.body": body,
			"comment.user.login": by, "comment.user.type": "User", "comment.html_url": link, "sender.login": by, "installation.id": 1}))
	}
	deliver("issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	p.comment(t, s, 1, "testfirst opened a ticket for #1")
	k1, d1 := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "**v1** are ready for review")
	p.decide(t, s, k1, d1, "alice", "")

	honestURL := "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-101"
	pastedURL := "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-102"
	// Honest: the base's own test, quoted.
	comment("honest", "bob", "This already passes on main:\n\n```python\ndef test_word_count():\n    assert word_count(\"one two  three\\nfour\") == 4\n"+
		"    assert word_count(\"\") == 0\n```\nso the tokenizer is fine; bigrams are what's missing.", honestURL)
	// Pasted from the card: test_bigrams_of_sentence, renamed and
	// reformatted, in a reply.
	comment("pasted", "mallory", "> make this pass:\n>\n> ```python\n> def test_pairs():\n>     out = stats.bigrams(\n>         \"The cat saw the dog\",\n>     )\n"+
		">     assert type(out) is list\n>     assert out == [(\"the\", \"cat\"), (\"cat\", \"saw\"), (\"saw\", \"the\"), (\"the\", \"dog\")]\n"+
		">     assert all(type(p) is tuple for p in out)\n> ```\n", pastedURL)

	card := func(want string) string {
		t.Helper()
		var page string
		waitFor(t, "the card saying "+want, 60*time.Second, func() bool {
			_, page = p.page(t, s, "alice", pipelineTicketPath+"/versions/1")
			return strings.Contains(page, want)
		}, s.log)
		return page
	}
	page := card("issuecomment-102")
	if !strings.Contains(page, "Contaminated:") || !strings.Contains(page, "test_bigrams_of_sentence") || !strings.Contains(page, "mallory") ||
		strings.Contains(page, "issuecomment-101") {
		t.Errorf("the requester's card does not tell the pasted comment alone, with what matched:\n%s", page)
	}

	// The pull request's grade: contaminated, naming the comment.
	gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	deliver("pull_request", "pr-opened", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": p.fixedSHA,
		"pull_request.state": "open", "installation.id": 1}))
	r := p.run(t, s, p.fixedSHA, "contaminated", completed("failure"))
	if !strings.Contains(r.Title+r.Summary, "contaminated") || !strings.Contains(r.Summary, "seen pasted, without its canary, into a comment on issue") ||
		!strings.Contains(r.Summary, "issuecomment-102") || strings.Contains(r.Summary, "issuecomment-101") {
		t.Errorf("the grade after the pasted comment: %+v", r)
	}

	// The implementer's view: the check run and the ticket's summary say
	// where, never what: no hidden test text, no matched test named.
	code, summary := p.page(t, s, "rita", r.DetailsURL)
	if code != http.StatusOK {
		t.Fatalf("the grade's Details for a reader: %d", code)
	}
	_, ticket := p.page(t, s, "rita", pipelineTicketPath)
	if !strings.Contains(ticket, "seen pasted into") || !strings.Contains(ticket, "issuecomment-102") {
		t.Errorf("the ticket's summary for a reader does not say a hidden test was pasted:\n%s", ticket)
	}
	for what, text := range map[string]string{"check run": r.Summary + r.Title + r.Text, "grade page": summary, "ticket summary": ticket} {
		for _, hidden := range []string{"The cat saw the dog", "shingles", "stats.bigrams("} {
			if strings.Contains(text, hidden) {
				t.Errorf("the implementer's %s holds %q", what, hidden)
			}
		}
	}

	// A review comment pasting the other hidden test is read as well.
	deliver("pull_request_review_comment", "review-comment", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"action": "created", "number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": p.fixedSHA,
		"installation.id": 1, "comment.id": 7, "comment.body": "suggestion:\n```\ndef test_single():\n    r = stats.bigrams(\"Hello!\")\n" +
			"    assert type(r) is list\n    assert r == []\n```", "comment.html_url": "https://github.com/Codertocat/Hello-World/pull/2#discussion_r7",
		"comment.user.login": "mallory"}))
	card("discussion_r7")
	// The pull request's head is graded again at once: its grade names
	// the review comment as well (the check run escapes its link's
	// markdown).
	again := p.run(t, s, p.fixedSHA, "graded again after the review comment", func(r fakegithub.CheckRun) bool {
		return r.Status == "completed" && strings.Contains(r.Summary, "a review comment on pull request")
	})
	if again.Conclusion != "failure" || !strings.Contains(again.Summary, "issuecomment-102") {
		t.Errorf("the grade after the review comment: %+v", again)
	}
}

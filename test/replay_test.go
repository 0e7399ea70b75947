package test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// Only a delivery's body is signed: its X-GitHub-Event and
// X-GitHub-Delivery headers are not. Someone who holds one signed body (a
// proxy's log, a shared tunnel) can send it again under another delivery
// id or another event. These tests do that through the real binary, next
// to the honest sequences that must keep working.

// replayService is serve on SQLite against the fake GitHub, with issue #1
// of Codertocat/Hello-World, whose requester alice is an admin.
func replayService(t *testing.T) (*fakegithub.Server, *service) {
	t.Helper()
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, map[string]string{"README.md": "base\n"})
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	return gh, startServe(t, gh, pipeSecret)
}

// labelPayload is an issues delivery of action on issue #1 by alice, as
// GitHub sends it at the given time (issue.updated_at differs between two
// real deliveries).
func labelPayload(t *testing.T, action, at string) []byte {
	t.Helper()
	return patchFixture(t, "issues/"+action+".payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice", "issue.updated_at": at})
}

// mustDeliver delivers and wants 202.
func (s *service) mustDeliver(t *testing.T, event, id string, body []byte) {
	t.Helper()
	if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
		t.Fatalf("%s %s answered %d, want 202", event, id, code)
	}
}

// logCount counts the service's log lines with msg.
func (s *service) logCount(msg string) int {
	return strings.Count(s.log(), `"msg":"`+msg+`"`)
}

// openWithdrawnTicket labels issue #1 (on GitHub, then its delivery),
// waits for the ticket, then takes the label off and waits for the
// withdrawal. It returns the labeled body.
func openWithdrawnTicket(t *testing.T, gh *fakegithub.Server, s *service) []byte {
	t.Helper()
	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	labeled := labelPayload(t, "labeled", "2026-12-01T09:00:00Z")
	s.mustDeliver(t, "issues", "label-1", labeled)
	waitFor(t, "the ticket", 60*time.Second, func() bool { return s.logCount("ticket opened") == 1 }, s.log)
	gh.UnlabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	s.mustDeliver(t, "issues", "unlabel-1", labelPayload(t, "unlabeled", "2026-12-01T09:01:00Z"))
	waitFor(t, "the withdrawal", 60*time.Second, func() bool { return s.logCount("ticket unlabeled") == 1 }, s.log)
	return labeled
}

// TestServeRefusesPayloadOfAnotherEvent: an issues.opened body sent as a
// pull_request delivery is refused with 400 and recorded nowhere (it made
// a pull request numbered 0); so is a pull_request body without a number.
// The same body as the issues event it is, and a real pull_request
// delivery under the id the forged one used, are accepted.
func TestServeRefusesPayloadOfAnotherEvent(t *testing.T) {
	gh, s := replayService(t)
	dbPath := filepath.Join(s.dir, "testfirst.db")
	opened := patchFixture(t, "issues/opened.payload.json", map[string]any{"issue.number": 1, "installation.id": 1})
	if code := s.deliver(t, pipeSecret, "pull_request", "forged-pr", opened); code != http.StatusBadRequest {
		t.Errorf("an issues.opened body as pull_request answered %d, want 400", code)
	}
	noNumber := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"number": 0, "pull_request.number": 0, "installation.id": 1})
	if code := s.deliver(t, pipeSecret, "pull_request", "pr-0", noNumber); code != http.StatusBadRequest {
		t.Errorf("a pull_request body numbered 0 answered %d, want 400", code)
	}
	labeledAsComment := labelPayload(t, "labeled", "2026-12-01T09:00:00Z")
	if code := s.deliver(t, pipeSecret, "issue_comment", "forged-comment", labeledAsComment); code != http.StatusBadRequest {
		t.Errorf("an issues.labeled body as issue_comment answered %d, want 400", code)
	}
	if !strings.Contains(s.log(), `pull_request delivery without a pull_request object`) {
		t.Errorf("no log line says why the forged pull_request was refused:\n%s", s.log())
	}

	// Honest shapes: the body as what it is, and the id of the refused
	// forgery still free for GitHub's real delivery.
	s.mustDeliver(t, "issues", "opened-1", opened)
	head := gh.Commit(pipeOwner, pipeRepo, "feature", map[string]string{"README.md": "change\n"})
	gh.AddPull(pipeOwner, pipeRepo, 2, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	s.mustDeliver(t, "pull_request", "forged-pr", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": head,
		"pull_request.state": "open", "installation.id": 1}))
	waitFor(t, "pull request #2", 60*time.Second, func() bool {
		return countRows(t, dbPath, "SELECT count(*) FROM pull_requests WHERE number = 2") == 1
	}, s.log)
	if n := countRows(t, dbPath, "SELECT count(*) FROM pull_requests WHERE number <> 2"); n != 0 {
		t.Errorf("%d pull request rows besides #2", n)
	}
}

// TestServeReplayedBodyIsDuplicate: a pull request's body sent again
// under a new delivery id is a duplicate: acknowledged, counted, not acted
// on (its job acts on the payload). A labeled body sent again under a new
// id, after the label came off, is handled and changes nothing: its job
// reads the issue's labels from GitHub first. GitHub's own redelivery
// keeps working: the same id and body of an attempt that failed is
// accepted, and a real relabel takes the ticket up again.
func TestServeReplayedBodyIsDuplicate(t *testing.T) {
	gh, s := replayService(t)
	labeled := openWithdrawnTicket(t, gh, s)

	s.mustDeliver(t, "issues", "label-1-replayed", labeled)
	waitFor(t, "the replayed labeled body handled", 60*time.Second, func() bool {
		return s.logCount("ticket not taken up again: the label is not on the issue") == 1
	}, s.log)
	if s.logCount("ticket taken up again") > 0 {
		t.Fatalf("a replayed labeled body took the ticket up again while the label is off the issue")
	}

	head := gh.Commit(pipeOwner, pipeRepo, "feature", map[string]string{"README.md": "change\n"})
	gh.AddPull(pipeOwner, pipeRepo, 2, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": head,
		"pull_request.state": "open", "installation.id": 1})
	s.mustDeliver(t, "pull_request", "pr-2", opened)
	s.mustDeliver(t, "pull_request", "pr-2-replayed", opened)
	_, metrics := s.get(t, "/metrics")
	if !strings.Contains(metrics, `testfirst_webhook_deliveries_total{event="pull_request",result="duplicate"} 1`) {
		t.Errorf("the replayed pull request body was not counted a duplicate:\n%s", grepLines(metrics, "testfirst_webhook_deliveries_total"))
	}

	// Relabelled for real; the first attempt to deliver it failed (a
	// secret being rotated), GitHub redelivers it: same id, same body.
	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	relabeled := labelPayload(t, "labeled", "2026-12-01T09:02:00Z")
	if code := s.deliver(t, "an-old-secret", "issues", "label-2", relabeled); code != http.StatusUnauthorized {
		t.Fatalf("the failed attempt answered %d, want 401", code)
	}
	s.mustDeliver(t, "issues", "label-2", relabeled)
	waitFor(t, "the ticket taken up again", 60*time.Second, func() bool { return s.logCount("ticket taken up again") == 1 }, s.log)
	// And GitHub's redelivery of a delivery that was recorded stays a
	// duplicate.
	s.mustDeliver(t, "issues", "label-2", relabeled)
	_, metrics = s.get(t, "/metrics")
	if !strings.Contains(metrics, `testfirst_webhook_deliveries_total{event="issues",result="duplicate"} 1`) {
		t.Errorf("want the redelivered label-2 a duplicate:\n%s", grepLines(metrics, "testfirst_webhook_deliveries_total"))
	}
}

// TestServeQuickRelabelTakesTheTicketUp: the label taken off and put back
// within a second sends a labeled body identical to the first (the issue's
// updated_at has seconds only). Taken for a replay, the relabel was a
// duplicate and the ticket stayed withdrawn with the label on.
func TestServeQuickRelabelTakesTheTicketUp(t *testing.T) {
	gh, s := replayService(t)
	const at = "2026-12-01T09:00:00Z"
	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	labeled := labelPayload(t, "labeled", at)
	s.mustDeliver(t, "issues", "label-1", labeled)
	waitFor(t, "the ticket", 60*time.Second, func() bool { return s.logCount("ticket opened") == 1 }, s.log)
	gh.UnlabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	s.mustDeliver(t, "issues", "unlabel-1", labelPayload(t, "unlabeled", at))
	waitFor(t, "the withdrawal", 60*time.Second, func() bool { return s.logCount("ticket unlabeled") == 1 }, s.log)
	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	s.mustDeliver(t, "issues", "label-2", labeled)
	waitFor(t, "the ticket taken up again", 60*time.Second, func() bool { return s.logCount("ticket taken up again") == 1 }, s.log)
}

// TestServeLateLabeledDoesNotRevive: a labeled delivery GitHub really
// sent, whose first attempt failed, arrives (redelivered) after the label
// came off again. The label is not on the issue on GitHub, so the
// withdrawn ticket stays withdrawn; the log says why. Once the label is
// back, a labeled delivery takes the ticket up again.
func TestServeLateLabeledDoesNotRevive(t *testing.T) {
	gh, s := replayService(t)
	openWithdrawnTicket(t, gh, s)

	// label-2 was sent when the label went back on, and failed; the label
	// came off again (its unlabeled delivery found the ticket withdrawn).
	s.mustDeliver(t, "issues", "unlabel-2", labelPayload(t, "unlabeled", "2026-12-01T09:03:00Z"))
	s.mustDeliver(t, "issues", "label-2", labelPayload(t, "labeled", "2026-12-01T09:02:00Z"))
	waitFor(t, "label-2 handled", 60*time.Second, func() bool {
		return s.logCount("ticket taken up again") > 0 || s.logCount("ticket not taken up again: the label is not on the issue") > 0
	}, s.log)
	if s.logCount("ticket taken up again") > 0 {
		t.Fatalf("a late labeled delivery took the ticket up again while the label is off the issue")
	}

	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	s.mustDeliver(t, "issues", "label-3", labelPayload(t, "labeled", "2026-12-01T09:04:00Z"))
	waitFor(t, "the ticket taken up again", 60*time.Second, func() bool { return s.logCount("ticket taken up again") == 1 }, s.log)
}

// TestServeLateUnlabeledDoesNotWithdraw: an unlabeled delivery GitHub
// really sent, whose first attempt failed, arrives (redelivered) after the
// label went back on. The label is on the issue on GitHub, so the ticket
// stays open; the log says why. An unlabeled delivery with the label off
// withdraws it (openWithdrawnTicket, with which the two tests above
// start).
func TestServeLateUnlabeledDoesNotWithdraw(t *testing.T) {
	gh, s := replayService(t)
	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	s.mustDeliver(t, "issues", "label-1", labelPayload(t, "labeled", "2026-12-01T09:00:00Z"))
	waitFor(t, "the ticket", 60*time.Second, func() bool { return s.logCount("ticket opened") == 1 }, s.log)
	// unlabel-1 was sent when the label came off, and failed; the label
	// went back on (its labeled delivery found the ticket open).
	s.mustDeliver(t, "issues", "label-2", labelPayload(t, "labeled", "2026-12-01T09:02:00Z"))
	s.mustDeliver(t, "issues", "unlabel-1", labelPayload(t, "unlabeled", "2026-12-01T09:01:00Z"))
	waitFor(t, "unlabel-1 handled", 60*time.Second, func() bool {
		return s.logCount("ticket unlabeled") > 0 || s.logCount("ticket not withdrawn: the label is on the issue") > 0
	}, s.log)
	if s.logCount("ticket unlabeled") > 0 {
		t.Fatalf("a late unlabeled delivery withdrew the ticket while the label is on the issue")
	}
}

// TestServeRepositoryRemovalKeepsItsInstallation: a repository moved from
// installation 2 to installation 1; installation 2's removal of it,
// delivered late, must not remove it from installation 1. Installation
// 2's removal of a repository it does have still removes it.
func TestServeRepositoryRemovalKeepsItsInstallation(t *testing.T) {
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	gh.AddInstallation(2, "octocat")
	gh.AddRepo(2, "octocat", "Spoon-Knife", "main")
	s := startServe(t, gh, pipeSecret)
	dbPath := filepath.Join(s.dir, "testfirst.db")
	const moved, kept = 186853002, 1296269
	repo := func(id int64, owner, name string) map[string]any {
		return map[string]any{"id": id, "name": name, "full_name": owner + "/" + name, "private": false}
	}
	installed := func(id int64, account string, repos ...map[string]any) []byte {
		return patchFixture(t, "installation/created.payload.json", map[string]any{
			"installation.id": id, "installation.account.login": account, "repositories": repos})
	}
	// Installation 2 had both; the moved one now belongs to installation 1.
	s.mustDeliver(t, "installation", "inst-2", installed(2, "octocat", repo(moved, "octocat", "Spoon-Knife"), repo(kept, "octocat", "Spoon-Knife")))
	waitFor(t, "installation 2's repositories", 60*time.Second, func() bool {
		return countRows(t, dbPath, "SELECT count(*) FROM repositories WHERE installation_id = 2") == 2
	}, s.log)
	s.mustDeliver(t, "installation", "inst-1", installed(1, pipeOwner, repo(moved, pipeOwner, pipeRepo)))
	waitFor(t, "the moved repository under installation 1", 60*time.Second, func() bool {
		return countRows(t, dbPath, "SELECT count(*) FROM repositories WHERE id = $1 AND installation_id = 1", moved) == 1
	}, s.log)

	s.mustDeliver(t, "installation_repositories", "removed-2", patchFixture(t, "installation_repositories/removed.payload.json", map[string]any{
		"installation.id": 2, "installation.account.login": "octocat",
		"repositories_removed": []any{repo(moved, "octocat", "Spoon-Knife"), repo(kept, "octocat", "Spoon-Knife")}}))
	waitFor(t, "the removal handled", 60*time.Second, func() bool {
		return countRows(t, dbPath, "SELECT count(*) FROM audit_events WHERE kind = 'installation_repositories.removed'") == 1
	}, s.log)
	if n := countRows(t, dbPath, "SELECT count(*) FROM repositories WHERE id = $1 AND removed_at IS NOT NULL", kept); n != 1 {
		t.Errorf("installation 2's own repository was not removed")
	}
	if n := countRows(t, dbPath, "SELECT count(*) FROM repositories WHERE id = $1 AND removed_at IS NULL", moved); n != 1 {
		t.Errorf("installation 2's removal removed installation 1's repository")
	}
}

// issuePayloadAt is an issues delivery of action on issue #1 by alice at
// the given time, with fields set besides. There is no issues.closed
// fixture: closed is the reopened payload with its action and state
// turned.
func issuePayloadAt(t *testing.T, action, at string, set map[string]any) []byte {
	t.Helper()
	fixture, state := action, "open"
	if action == "closed" {
		fixture, state = "reopened", "closed"
	}
	fields := map[string]any{"action": action, "issue.state": state, "issue.number": 1, "installation.id": 1,
		"sender.login": "alice", "issue.updated_at": at}
	for k, v := range set {
		fields[k] = v
	}
	return patchFixture(t, "issues/"+fixture+".payload.json", fields)
}

// openTicket labels issue #1 (on GitHub, then its delivery) and waits for
// the ticket.
func openTicket(t *testing.T, gh *fakegithub.Server, s *service) {
	t.Helper()
	gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	s.mustDeliver(t, "issues", "label-1", labelPayload(t, "labeled", "2026-12-01T09:00:00Z"))
	waitFor(t, "the ticket", 60*time.Second, func() bool { return s.logCount("ticket opened") == 1 }, s.log)
}

// TestServeLateReopenedDoesNotRevive: issue #1 was closed, reopened and
// closed again; the reopening's delivery failed at first (or its signed
// body was kept by whoever saw it) and arrives after the second closing,
// under a delivery id the service has not seen. The issue is closed on
// GitHub, so the ticket stays closed; the log says why. Once the issue is
// reopened on GitHub, a reopened delivery reopens the ticket.
func TestServeLateReopenedDoesNotRevive(t *testing.T) {
	gh, s := replayService(t)
	dbPath := filepath.Join(s.dir, "testfirst.db")
	openTicket(t, gh, s)
	closedTickets := func() int {
		return countRows(t, dbPath, "SELECT count(*) FROM tickets WHERE closed_at IS NOT NULL")
	}

	gh.CloseIssue(pipeOwner, pipeRepo, 1)
	s.mustDeliver(t, "issues", "close-2", issuePayloadAt(t, "closed", "2026-12-01T09:03:00Z", nil))
	waitFor(t, "the ticket closed", 60*time.Second, func() bool { return closedTickets() == 1 }, s.log)

	s.mustDeliver(t, "issues", "reopen-1-late", issuePayloadAt(t, "reopened", "2026-12-01T09:02:00Z", nil))
	waitFor(t, "reopen-1-late handled", 60*time.Second, func() bool {
		return s.logCount("ticket reopened") > 0 || s.logCount("ticket left as GitHub shows its issue") > 0
	}, s.log)
	if s.logCount("ticket reopened") > 0 || closedTickets() != 1 {
		t.Fatalf("a late reopened delivery reopened the ticket while the issue is closed on GitHub")
	}

	// Honest: reopened on GitHub, then its delivery.
	gh.ReopenIssue(pipeOwner, pipeRepo, 1)
	s.mustDeliver(t, "issues", "reopen-3", issuePayloadAt(t, "reopened", "2026-12-01T09:04:00Z", nil))
	waitFor(t, "the ticket reopened", 60*time.Second, func() bool { return s.logCount("ticket reopened") == 1 }, s.log)
	if n := closedTickets(); n != 0 {
		t.Fatalf("%d tickets closed after a real reopening", n)
	}

	// And the mirror: a closing delivered after the issue was reopened
	// since leaves the ticket open.
	mark := s.logCount("ticket left as GitHub shows its issue")
	s.mustDeliver(t, "issues", "close-2b-late", issuePayloadAt(t, "closed", "2026-12-01T09:03:30Z", nil))
	waitFor(t, "close-2b-late handled", 60*time.Second, func() bool {
		return s.logCount("ticket closed") > 1 || s.logCount("ticket left as GitHub shows its issue") > mark
	}, s.log)
	if n := closedTickets(); n != 0 || s.logCount("ticket closed") > 1 {
		t.Errorf("a late closed delivery closed the ticket while the issue is open on GitHub")
	}
}

// TestServeLateEditedKeepsGitHubText: issue #1 was edited twice; the first
// edit's delivery arrives after the second's (a redelivery, or its body
// sent again under a fresh id). The ticket keeps the text GitHub shows,
// the second edit's, where the card reads the acceptance criteria from.
// An honest edit still updates the ticket.
func TestServeLateEditedKeepsGitHubText(t *testing.T) {
	gh, s := replayService(t)
	dbPath := filepath.Join(s.dir, "testfirst.db")
	openTicket(t, gh, s)
	text := func(title, body string) int {
		return countRows(t, dbPath, "SELECT count(*) FROM tickets WHERE title = $1 AND body = $2", title, body)
	}

	// Honest: edited on GitHub, then its delivery.
	gh.EditIssue(pipeOwner, pipeRepo, 1, "Count words, rounded", "- [ ] counts\n- [ ] rounds")
	s.mustDeliver(t, "issues", "edit-2", issuePayloadAt(t, "edited", "2026-12-01T09:02:00Z",
		map[string]any{"issue.title": "Count words, rounded", "issue.body": "- [ ] counts\n- [ ] rounds"}))
	waitFor(t, "the edit", 60*time.Second, func() bool { return text("Count words, rounded", "- [ ] counts\n- [ ] rounds") == 1 }, s.log)

	// The first edit, late: it would put back the text it had.
	mark := s.logCount("ticket edited") + s.logCount("ticket left as GitHub shows its issue")
	s.mustDeliver(t, "issues", "edit-1-late", issuePayloadAt(t, "edited", "2026-12-01T09:01:00Z",
		map[string]any{"issue.title": "Count words", "issue.body": "- [ ] counts"}))
	waitFor(t, "edit-1-late handled", 60*time.Second, func() bool {
		return s.logCount("ticket edited")+s.logCount("ticket left as GitHub shows its issue") > mark
	}, s.log)
	if text("Count words, rounded", "- [ ] counts\n- [ ] rounds") != 1 {
		t.Fatalf("a late edited delivery replaced the ticket's text with an older one than GitHub shows")
	}
}

package jobs

import (
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// TestPullCommandIsAuditedOnItsTickets gives /testfirst status on a pull
// request that closes the fixture's ticket: the command is answered and
// recorded in that ticket's audit log, not in an audit row of no ticket.
func TestPullCommandIsAuditedOnItsTickets(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	f.gh.SetPermission("octo-org", "app", "maria", "write")
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s.%s: %v", a.Event, a.Action, err)
		}
	}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	f.gh.AddPull("octo-org", "app", 8, head, "main", "Fixes #7", "")
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"}))
	work(fixtureDelivery(t, "issue_comment", "created.payload.json", map[string]any{"comment.body": "/testfirst status",
		"comment.user.login": "maria", "comment.user.type": "User", "issue.number": 8,
		"issue.pull_request": map[string]any{"url": "https://api.github.com/repos/octo-org/app/pulls/8"}}))
	var reply string
	for _, c := range f.gh.Comments("octo-org", "app", 8) {
		reply = c.Body
	}
	if !strings.Contains(reply, "**testfirst** #8") || !strings.Contains(reply, "#7 (writing)") {
		t.Errorf("reply %q; want the pull request's status naming ticket #7", reply)
	}
	assertAudit(t, f, "command.status")
}

package jobs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/pipeline"
)

// issueDelivery is a real issues payload, moved onto the sync fixture's
// issue #7 of octo-org/app. The fixtures have no issues.closed: that one is
// the reopened payload with its action and state turned.
func issueDelivery(t *testing.T, action string, set map[string]any) DeliveryArgs {
	t.Helper()
	fixture := action
	if action == "closed" {
		fixture = "reopened"
		set = map[string]any{"action": "closed", "issue.state": "closed"}
	}
	data, err := os.ReadFile(filepath.Join(webhookFixtures, "issues", fixture+".payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	repo := doc["repository"].(map[string]any)
	repo["id"], repo["name"], repo["default_branch"] = 30, "app", "main"
	repo["owner"].(map[string]any)["login"] = "octo-org"
	doc["installation"] = map[string]any{"id": 3}
	issue := doc["issue"].(map[string]any)
	issue["number"] = 7
	for k, v := range set {
		parent, key := doc, k
		if p, rest, ok := strings.Cut(k, "."); ok {
			parent, key = doc[p].(map[string]any), rest
		}
		parent[key] = v
	}
	payload, _ := json.Marshal(doc)
	return DeliveryArgs{Delivery: "d-" + action, Event: "issues", Action: action, Installation: 3, Payload: payload}
}

// TestTicketIssueEvents walks a ticket's issue through unlabeled, labeled
// again, edited, closed and reopened, with real payloads: withdrawing and
// closing cancel the ticket's running grade, each event is written to the
// audit log, and an edit refreshes the text the card reads.
func TestTicketIssueEvents(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	// The fixtures' sender removes the label: a writer may withdraw.
	f.gh.SetPermission("octo-org", "app", "Codertocat", "write")
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s: %v", a.Action, err)
		}
	}
	ticket := func() db.Ticket {
		t.Helper()
		var tk db.Ticket
		if err := f.d.Tx(ctx, func(tx *db.Tx) error {
			var err error
			tk, err = tx.Ticket(ctx, f.ticket.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	repo := db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app", DefaultBranch: "main"}
	running := func(pr int) db.Grade {
		t.Helper()
		head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": time.Now().String()})
		var g db.Grade
		if err := f.d.Tx(ctx, func(tx *db.Tx) error {
			var err error
			g, _, err = tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: pr, HeadSHA: head, Digest: "sha256:1", VersionNumber: 1, InstallationID: 3, State: pipeline.GradeRunning})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if g.CheckRunID, _ = f.sync.grades.ensureCheckRun(ctx, f.gi, repo, g, pipeline.RunningCheckRun(head, 1, pipeline.PhaseGrading, ""), pipeline.GradeRunning); g.CheckRunID == 0 {
			t.Fatal("no check run")
		}
		return g
	}
	conclusion := func(g db.Grade) string {
		for _, r := range f.gh.CheckRuns("octo-org", "app") {
			if r.ID == g.CheckRunID {
				return r.Conclusion
			}
		}
		return "no run"
	}

	g1 := running(8)
	work(issueDelivery(t, "unlabeled", map[string]any{"label": map[string]any{"name": "test-first"}}))
	if tk := ticket(); tk.WithdrawnAt.IsZero() {
		t.Error("unlabeled: the ticket is not withdrawn")
	}
	if got := conclusion(g1); got != "cancelled" {
		t.Errorf("unlabeled: the running grade's check run is %q, want cancelled", got)
	}
	// Another label coming off changes nothing.
	work(issueDelivery(t, "unlabeled", map[string]any{"label": map[string]any{"name": "bug"}}))

	// Labelled again: the worker asks GitHub whether the label is on the
	// issue now before it takes the ticket up again.
	f.gh.LabelIssue("octo-org", "app", 7, "test-first")
	work(issueDelivery(t, "labeled", map[string]any{"label": map[string]any{"name": "test-first"}}))
	if tk := ticket(); !tk.WithdrawnAt.IsZero() {
		t.Error("labeled again: the ticket is still withdrawn")
	}

	// Each change is made on GitHub first, as a person makes it: the
	// worker asks GitHub how the issue is before it follows a delivery.
	f.gh.EditIssue("octo-org", "app", 7, "Totals, rounded", "- [ ] counts\n- [ ] rounds")
	work(issueDelivery(t, "edited", map[string]any{"issue.title": "Totals, rounded", "issue.body": "- [ ] counts\n- [ ] rounds"}))
	if tk := ticket(); tk.Title != "Totals, rounded" || tk.Body != "- [ ] counts\n- [ ] rounds" {
		t.Errorf("edited: ticket text %q / %q", tk.Title, tk.Body)
	}

	g2 := running(9)
	f.gh.CloseIssue("octo-org", "app", 7)
	work(issueDelivery(t, "closed", nil))
	if tk := ticket(); tk.ClosedAt.IsZero() {
		t.Error("closed: the ticket is not closed")
	}
	if got := conclusion(g2); got != "cancelled" {
		t.Errorf("closed: the running grade's check run is %q, want cancelled", got)
	}
	f.gh.ReopenIssue("octo-org", "app", 7)
	work(issueDelivery(t, "reopened", nil))
	if tk := ticket(); !tk.ClosedAt.IsZero() {
		t.Error("reopened: the ticket is still closed")
	}
	assertAudit(t, f, "ticket.unlabeled", "ticket.relabeled", "ticket.edited", "ticket.closed", "ticket.reopened", "grade.cancelled")
}

// fixtureDelivery is a real payload of event/action (from file), moved
// onto octo-org/app (id 30) of installation 3, with fields set.
func fixtureDelivery(t *testing.T, event, file string, set map[string]any) DeliveryArgs {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(webhookFixtures, event, file))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["repository"] = map[string]any{"id": 30, "name": "app", "default_branch": "main", "owner": map[string]any{"login": "octo-org", "type": "Organization"}}
	doc["installation"] = map[string]any{"id": 3}
	for k, v := range set {
		parent, key := doc, k
		for {
			p, rest, ok := strings.Cut(key, ".")
			if !ok {
				break
			}
			parent, key = parent[p].(map[string]any), rest
		}
		parent[key] = v
	}
	payload, _ := json.Marshal(doc)
	return DeliveryArgs{Delivery: "d-" + event + "-" + file, Event: event, Action: doc["action"].(string), Installation: 3, Payload: payload}
}

// TestPullClosedAndSuiteRerun: closing a pull request cancels its running
// grade; "Re-run all checks" on a head grades it again against the
// approved tests.
func TestPullClosedAndSuiteRerun(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s.%s: %v", a.Event, a.Action, err)
		}
	}
	v := f.push(t)
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	f.gh.AddPull("octo-org", "app", 8, head, "main", "Fixes #7", "")
	pr := map[string]any{"number": 8, "pull_request.number": 8, "pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"}
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", pr))
	runs := f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Status != "queued" {
		t.Fatalf("after opened: %+v; want one run queued", runs)
	}

	// Re-run all checks while it is queued changes nothing: it is being graded.
	suite := map[string]any{"check_suite.head_sha": head}
	work(fixtureDelivery(t, "check_suite", "rerequested.payload.json", suite))
	if n := len(f.gh.CheckRuns("octo-org", "app")); n != 1 {
		t.Fatalf("a re-run of a head being graded made %d runs", n)
	}

	pr["pull_request.state"] = "closed"
	work(fixtureDelivery(t, "pull_request", "closed.payload.json", pr))
	runs = f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Conclusion != "cancelled" {
		t.Fatalf("after closed: %+v; want the run cancelled", runs)
	}

	// The grade is finished (cancelled): a re-run grades the head again.
	work(fixtureDelivery(t, "check_suite", "rerequested.payload.json", suite))
	runs = f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Status != "queued" {
		t.Errorf("after a re-run: %+v; want the run queued again", runs)
	}
	assertAudit(t, f, "grade.queued", "grade.cancelled", "grade.rerequested")
}

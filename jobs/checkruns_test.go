package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestCheckRunNeverAbsentNorStale follows one pull request's check run
// through its ticket's life, with real payloads: opened before any
// approval it is queued at once, waiting, and says what for; a version
// announced ready says so; the approval's grade adopts that run (one run,
// queued with its place); a grade that passed is completed again as
// superseded when a new version reopens the approval, and as withdrawn
// when the label is removed; /testfirst regrade while the next version
// awaits approval says so instead of "Grading … again".
func TestCheckRunNeverAbsentNorStale(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	f.gh.SetPermission("octo-org", "app", "maria", "write")
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log, publicURL: "https://tf.example/"}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s.%s: %v", a.Event, a.Action, err)
		}
	}
	only := func(when string) fakegithub.CheckRun {
		t.Helper()
		runs := f.gh.CheckRuns("octo-org", "app")
		if len(runs) != 1 {
			t.Fatalf("%s: %d check runs, want exactly one: %+v", when, len(runs), runs)
		}
		return runs[0]
	}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	f.gh.AddPull("octo-org", "app", 8, head, "main", "Fixes #7", "")

	// Opened before any tests: queued, waiting, at once.
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"}))
	r := only("opened before any tests")
	if r.Status != "queued" || r.Name != "testfirst" || r.Title != "waiting for approved hidden tests (no tests pushed yet)" {
		t.Errorf("opened before any tests: %+v", r)
	}

	// A re-run of the waiting run says again what it waits for.
	updates := func() int {
		n := 0
		for _, q := range f.gh.Requests() {
			if q.Method == "PATCH" && strings.Contains(q.Path, "/check-runs/") {
				n++
			}
		}
		return n
	}
	before := updates()
	work(fixtureDelivery(t, "check_run", "rerequested.payload.json", map[string]any{"check_run.name": "testfirst",
		"check_run.external_id": r.ExternalID, "check_run.head_sha": head}))
	if r2 := only("waiting run re-run"); updates() != before+1 || r2.Status != "queued" || r2.Title != r.Title {
		t.Errorf("re-run of the waiting run: %d updates, run %+v; want it said again", updates()-before, r2)
	}

	// v1 checked and announced ready: the waiting run says it awaits review.
	v1 := f.push(t)
	f.run(t)
	setCheck(t, f, 1, `{"tests":["tests/test_count.py::test_count"],"base":{"failing":["tests/test_count.py::test_count"]},"trust":"isolated"}`)
	f.run(t)
	if r := only("v1 ready"); r.Status != "queued" || r.Title != "waiting for approved hidden tests (v1 awaits review)" ||
		!strings.Contains(r.Summary, "closes #7") || !strings.Contains(r.DetailsURL, "/tickets/octo-org/app/7/versions/1") {
		t.Errorf("v1 ready: %+v", r)
	}

	// The approval grades the head on that same run.
	if _, err := f.w.Approve(ctx, f.st, v1.Number, v1.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	r = only("approved")
	g := gradeOf(t, f, head)
	if r.Status != "queued" || r.ExternalID != fmt.Sprint(g.ID) || !strings.HasPrefix(r.Title, "queued: next in line for a sandbox · hidden tests v1") {
		t.Errorf("approved: %+v; want the waiting run adopted by grade %d, queued", r, g.ID)
	}

	// The grade passes.
	g.State, g.Verdict, g.Trust, g.Passed, g.Total, g.FinishedAt = pipeline.GradeCompleted, "pass", "isolated", 1, 1, time.Now()
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { return tx.UpdateGrade(ctx, g) }); err != nil {
		t.Fatal(err)
	}
	repo := db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app", DefaultBranch: "main"}
	pass := checkrun.Run{Status: "completed", Conclusion: "success", Title: "1/1 hidden tests passed · trust: isolated", Summary: "pass"}
	if err := f.sync.grades.completeCheckRuns(ctx, f.gi, repo, g, pass); err != nil {
		t.Fatal(err)
	}

	// /testfirst status on the issue lists the pull request with its
	// verdict and grade page, and the card.
	work(issueComment(t, "/testfirst status", 7, false))
	cs := f.gh.Comments("octo-org", "app", 7)
	status := cs[len(cs)-1].Body
	for _, want := range []string{fmt.Sprintf("- #8 at `%.12s`: hidden tests v1: pass, 1/1 passed, trust isolated ([grade](https://tf.example/grades/%d))", head, g.ID),
		"- approval card: https://tf.example/tickets/octo-org/app/7/versions/1"} {
		if !strings.Contains(status, want) {
			t.Errorf("status reply lacks %q:\n%s", want, status)
		}
	}

	// v2 reopens the approval: no stale green.
	f.push(t)
	f.run(t)
	r = only("v2 pushed")
	if r.Status != "completed" || r.Conclusion != "action_required" || r.Title != "superseded: graded against v1, which v2 replaces; awaiting approval" ||
		!strings.Contains(r.Summary, "1/1 hidden tests passed") {
		t.Errorf("v2 pushed: %+v; want the green run completed again as superseded", r)
	}

	// /testfirst regrade on the pull request while v2 awaits approval says so.
	work(issueComment(t, "/testfirst regrade", 8, true))
	cs = f.gh.Comments("octo-org", "app", 8)
	if len(cs) != 1 || strings.Contains(cs[0].Body, "Grading") || !strings.Contains(cs[0].Body, "#7 (v2 is being checked) has no approved hidden tests yet") {
		t.Errorf("regrade reply %+v; want it to say #7 waits for v2", cs)
	}

	// The label removed by someone with triage access only, who is not the
	// requester: the ticket stays, its runs are unchanged, the issue says
	// who may withdraw it.
	f.gh.SetPermission("octo-org", "app", "trina", "triage")
	runsBefore := f.gh.CheckRuns("octo-org", "app")
	work(issueDelivery(t, "unlabeled", map[string]any{"label": map[string]any{"name": "test-first"}, "sender.login": "trina"}))
	if after := f.gh.CheckRuns("octo-org", "app"); fmt.Sprint(after) != fmt.Sprint(runsBefore) {
		t.Errorf("check runs changed on a refused withdrawal:\n%+v\nwas\n%+v", after, runsBefore)
	}
	cs = f.gh.Comments("octo-org", "app", 7)
	if len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "`trina` removed the `test-first` label, but only the requester") {
		t.Errorf("comments on #7 %+v; want the refusal of trina's withdrawal", cs)
	}
	// Removed by a writer: withdrawn, at once, and blocking by default.
	work(issueDelivery(t, "unlabeled", map[string]any{"label": map[string]any{"name": "test-first"}, "sender.login": "maria"}))
	for _, r := range f.gh.CheckRuns("octo-org", "app") {
		if r.Status != "completed" || r.Conclusion != "action_required" || r.Title != "withdrawn: #7 no longer carries the test-first label" ||
			!strings.Contains(r.Summary, "removed from #7 by `maria`") || !strings.Contains(r.Summary, "cannot merge on this check") {
			t.Errorf("after the label was removed: %+v; want every run withdrawn, naming who, still blocking", r)
		}
	}
	// A pull request opened on the withdrawn ticket is told so, too.
	other := f.gh.Commit("octo-org", "app", "pr2", map[string]string{"README.md": "other\n"})
	f.gh.AddPull("octo-org", "app", 9, other, "main", "Fixes #7", "")
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 9, "pull_request.number": 9,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": other, "pull_request.state": "open"}))
	n := 0
	for _, r := range f.gh.CheckRuns("octo-org", "app") {
		if r.HeadSHA == other {
			n++
			if r.Conclusion != "action_required" || !strings.HasPrefix(r.Title, "withdrawn: #7") {
				t.Errorf("pull request on a withdrawn ticket: %+v", r)
			}
		}
	}
	if n != 1 {
		t.Errorf("pull request on a withdrawn ticket: %d runs, want 1", n)
	}
}

// TestCheckRunPerTicket: a pull request that closes two tickets gets one
// check run per ticket, each named for its ticket.
func TestCheckRunPerTicket(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		_, _, err := tx.OpenTicket(ctx, db.Ticket{RepositoryID: 30, IssueNumber: 12, Requester: "bob", BaseSHA: f.ticket.BaseSHA, State: pipeline.TicketWriting, Label: "test-first"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	f.gh.AddPull("octo-org", "app", 8, head, "main", "Fixes #7, fixes #12", "")
	a := fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7, fixes #12", "pull_request.head.sha": head, "pull_request.state": "open"})
	if err := w.Work(ctx, &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range f.gh.CheckRuns("octo-org", "app") {
		names[r.Name] = true
		if !strings.Contains(r.Summary, "closes #"+strings.TrimPrefix(r.Name, "testfirst · #")) {
			t.Errorf("run %q does not say which ticket it is for: %s", r.Name, r.Summary)
		}
	}
	if len(names) != 2 || !names["testfirst · #7"] || !names["testfirst · #12"] {
		t.Errorf("check run names %v; want testfirst · #7 and testfirst · #12", names)
	}

	// The description edited to fix #7 only: its run is "testfirst" again.
	a = fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"action": "edited", "number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"})
	if err := w.Work(ctx, &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 2, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}); err != nil {
		t.Fatal(err)
	}
	names = map[string]bool{}
	for _, r := range f.gh.CheckRuns("octo-org", "app") {
		names[r.Name] = true
		if r.Name == "testfirst · #12" && (r.Status != "completed" || r.Title != "not graded: this pull request no longer fixes #12") {
			t.Errorf("#12's waiting run after the edit: %+v; want it completed, unlinked", r)
		}
	}
	if !names["testfirst"] || names["testfirst · #7"] {
		t.Errorf("after the edit, check run names %v; want #7's run named testfirst", names)
	}
}

// setCheck records version k's base check as the check worker would.
func setCheck(t *testing.T, f *syncFixture, k int, check string) {
	t.Helper()
	ctx := t.Context()
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		v, err := tx.Version(ctx, f.ticket.ID, k)
		if err != nil {
			return err
		}
		return tx.SetVersionCheck(ctx, v.ID, []byte(check), time.Now())
	}); err != nil {
		t.Fatal(err)
	}
}

// gradeOf is the one grade of head.
func gradeOf(t *testing.T, f *syncFixture, head string) db.Grade {
	t.Helper()
	var gs []db.Grade
	if err := f.d.Tx(t.Context(), func(tx *db.Tx) error {
		var err error
		gs, err = tx.GradesOfHead(t.Context(), head)
		return err
	}); err != nil || len(gs) != 1 {
		t.Fatalf("grades of %s: %+v, %v; want one", head, gs, err)
	}
	return gs[0]
}

// TestConfigReadAgainOnNextEvent: a label put on while the repository's
// config is broken gets the error on the issue; once the config is fixed,
// a comment or an edit of someone with write access opens the ticket
// without labelling the issue again, as the error comment says, and the
// opening comment says what comes next. A comment or an edit of someone
// without write access opens nothing: the label took triage access, they
// would become the requester.
func TestConfigReadAgainOnNextEvent(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log, publicURL: "https://tf.example"}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s: %v", a.Action, err)
		}
	}
	f.gh.SetPermission("octo-org", "app", "maria", "write")
	f.gh.SetPermission("octo-org", "app", "rita", "read")
	labels := []any{map[string]any{"name": "test-first"}}
	comment := func(issue int, login, body string) DeliveryArgs {
		a := issueComment(t, body, issue, false)
		var doc map[string]any
		if err := json.Unmarshal(a.Payload, &doc); err != nil {
			t.Fatal(err)
		}
		doc["comment"].(map[string]any)["user"].(map[string]any)["login"] = login
		doc["issue"].(map[string]any)["labels"] = labels
		a.Payload, _ = json.Marshal(doc)
		a.Delivery += login
		return a
	}
	broken := map[string]string{"README.md": "base\n", ".github/testfirst.yml": "lable: test-first\n"}
	fixed := map[string]string{"README.md": "base\n", ".github/testfirst.yml": "label: test-first\n"}
	brokenOn := func(issue int) {
		t.Helper()
		f.gh.AddIssue("octo-org", "app", issue, "alice", "Another")
		f.gh.LabelIssue("octo-org", "app", issue, "test-first")
		f.gh.Commit("octo-org", "app", "main", broken)
		work(issueDelivery(t, "labeled", map[string]any{"issue.number": issue, "label": map[string]any{"name": "test-first"}, "issue.labels": labels}))
		cs := f.gh.Comments("octo-org", "app", issue)
		if len(cs) != 1 || !strings.Contains(cs[0].Body, `unknown key "lable"; the valid keys here are label`) ||
			!strings.Contains(cs[0].Body, "then comment `/testfirst status` on this issue or edit it") {
			t.Fatalf("comments %+v; want the config error, naming the valid keys and what to do", cs)
		}
		// Recorded for the app's home page, which shows the repository's
		// admins the error while it lasts.
		var es []db.AuditEvent
		f.d.Tx(ctx, func(tx *db.Tx) error { es, _ = tx.RecentAudit(ctx, pipeline.AuditConfigError, 1); return nil })
		if len(es) != 1 || !strings.Contains(string(es[0].Detail), fmt.Sprintf(`"issue":%d`, issue)) || !strings.Contains(string(es[0].Detail), "lable") {
			t.Fatalf("audit %+v; want the config error recorded for issue %d", es, issue)
		}
		f.gh.Commit("octo-org", "app", "main", fixed)
	}
	opened := func(issue int, how string) {
		t.Helper()
		cs := f.gh.Comments("octo-org", "app", issue)
		if len(cs) < 2 || !strings.Contains(cs[1].Body, fmt.Sprintf("testfirst opened a ticket for #%d", issue)) ||
			!strings.Contains(cs[1].Body, fmt.Sprintf("testfirst tests push --ticket octo-org/app#%d --installation 3 DIR", issue)) {
			t.Fatalf("comments %+v; want the ticket opened on %s, with the push command", cs, how)
		}
	}

	// The edit of someone with write access.
	brokenOn(9)
	work(issueDelivery(t, "edited", map[string]any{"issue.number": 9, "issue.labels": labels, "sender.login": "rita"}))
	if cs := f.gh.Comments("octo-org", "app", 9); len(cs) != 1 {
		t.Fatalf("comments %+v after an edit by a reader; want no ticket", cs)
	}
	work(issueDelivery(t, "edited", map[string]any{"issue.number": 9, "issue.labels": labels, "sender.login": "maria"}))
	opened(9, "maria's edit")

	// A late edit whose payload still lists the label, which has come off
	// on GitHub since: the labels are GitHub's, no ticket.
	f.gh.AddIssue("octo-org", "app", 12, "alice", "Unlabelled since")
	work(issueDelivery(t, "edited", map[string]any{"issue.number": 12, "issue.labels": labels, "sender.login": "maria"}))
	if cs := f.gh.Comments("octo-org", "app", 12); len(cs) != 0 {
		t.Fatalf("comments %+v after a late edit listing a label the issue no longer has; want no ticket", cs)
	}

	// /testfirst status, as the error comment says: a plain comment reads
	// nothing, a reader's command opens nothing and says who can, a
	// writer's opens the ticket and is answered for it.
	brokenOn(11)
	work(comment(11, "maria", "fixed it, please go"))
	if cs := f.gh.Comments("octo-org", "app", 11); len(cs) != 1 {
		t.Fatalf("comments %+v after a plain comment; want none", cs)
	}
	work(comment(11, "rita", "/testfirst status"))
	if cs := f.gh.Comments("octo-org", "app", 11); len(cs) != 2 || strings.Contains(cs[1].Body, "opened a ticket") ||
		!strings.Contains(cs[1].Body, "someone with write access to octo-org/app opens it by commenting `/testfirst status` here") {
		t.Fatalf("comments %+v after a reader's command; want no ticket, and who can open it", cs)
	}
	work(comment(11, "maria", "/testfirst status"))
	cs := f.gh.Comments("octo-org", "app", 11)
	if len(cs) != 4 || !strings.Contains(cs[2].Body, "testfirst opened a ticket for #11") || strings.Contains(cs[3].Body, "is not a testfirst ticket") {
		t.Fatalf("comments %+v; want the ticket opened on maria's command, then /testfirst status answered for it", cs)
	}
	tk := ticketOf(t, f.d, 11)
	if tk.Requester != "maria" {
		t.Errorf("requester %q; want maria, whose comment opened the ticket", tk.Requester)
	}
	// A second command on the ticket opens nothing more.
	work(comment(11, "maria", "/testfirst status"))
	if cs := f.gh.Comments("octo-org", "app", 11); len(cs) != 5 || strings.Contains(cs[4].Body, "opened a ticket") {
		t.Errorf("comments %+v after a second command; want its answer alone", cs)
	}

	// An edit of a labelled issue while the config is broken says nothing
	// more (the label's event said it).
	f.gh.AddIssue("octo-org", "app", 10, "alice", "Third")
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "lable: x\n"})
	work(issueDelivery(t, "edited", map[string]any{"issue.number": 10, "issue.labels": labels, "sender.login": "maria"}))
	if cs := f.gh.Comments("octo-org", "app", 10); len(cs) != 0 {
		t.Errorf("comments on an edit while the config is broken: %+v", cs)
	}
}

// ticketOf reads the ticket of issue in octo-org/app.
func ticketOf(t *testing.T, d *db.DB, issue int) db.Ticket {
	t.Helper()
	var tk db.Ticket
	if err := d.Tx(t.Context(), func(tx *db.Tx) error {
		r, err := tx.RepositoryByName(t.Context(), "octo-org", "app")
		if err != nil {
			return err
		}
		tk, err = tx.TicketByIssue(t.Context(), r.ID, issue)
		return err
	}); err != nil {
		t.Fatalf("ticket of #%d: %v", issue, err)
	}
	return tk
}

// issueComment is a real issue_comment payload of maria's on issue (a pull
// request when pull).
func issueComment(t *testing.T, body string, issue int, pull bool) DeliveryArgs {
	t.Helper()
	set := map[string]any{"comment.body": body, "comment.user.login": "maria", "comment.user.type": "User", "issue.number": issue, "issue.pull_request": nil}
	if pull {
		set["issue.pull_request"] = map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/octo-org/app/pulls/%d", issue)}
	}
	a := fixtureDelivery(t, "issue_comment", "created.payload.json", set)
	a.Delivery += fmt.Sprint("-", issue, "-", body)
	return a
}

// TestLatePhaseKeepsCancelledRun: a grade cancelled while it runs keeps
// its cancelled check run when the grade job reaches its next phase.
func TestLatePhaseKeepsCancelledRun(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	repo := db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app", DefaultBranch: "main"}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	var g db.Grade
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		g, _, err = tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: 8, HeadSHA: head, Digest: "sha256:1", VersionNumber: 1, InstallationID: 3, State: pipeline.GradeRunning})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	q := f.sync.grades
	var err error
	if g.CheckRunID, err = q.ensureCheckRun(ctx, f.gi, repo, g, pipeline.RunningCheckRun(head, 1, pipeline.PhaseFetching, ""), pipeline.GradeRunning); err != nil {
		t.Fatal(err)
	}
	if err := q.cancel(ctx, f.gi, repo, []db.Grade{g}, "A newer commit was pushed."); err != nil {
		t.Fatal(err)
	}
	if err := q.phase(ctx, f.gi, repo, g, pipeline.PhaseGrading); err != nil {
		t.Fatal(err)
	}
	runs := f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Conclusion != "cancelled" {
		t.Errorf("check runs %+v; want the one run still cancelled", runs)
	}
}

// TestLatePhaseOfATakenOverGrade: a grade cancelled while it runs, whose
// run a newer grade of the ticket then took over, opens no run of its own
// when its job reaches its next phase: the takeover left it without one,
// and a run nothing completes would stay in progress on the head.
func TestLatePhaseOfATakenOverGrade(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	repo := db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app", DefaultBranch: "main"}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	create := func(digest string, v int) db.Grade {
		var g db.Grade
		if err := f.d.Tx(ctx, func(tx *db.Tx) error {
			var err error
			g, _, err = tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: 8, HeadSHA: head, Digest: digest, VersionNumber: v, InstallationID: 3, State: pipeline.GradeRunning})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return g
	}
	q := f.sync.grades
	old := create("sha256:1", 1)
	var err error
	if old.CheckRunID, err = q.ensureCheckRun(ctx, f.gi, repo, old, pipeline.RunningCheckRun(head, 1, pipeline.PhaseFetching, ""), pipeline.GradeRunning); err != nil {
		t.Fatal(err)
	}
	if err := q.cancel(ctx, f.gi, repo, []db.Grade{old}, "v2 was approved."); err != nil {
		t.Fatal(err)
	}
	newer := create("sha256:2", 2)
	taken, err := q.ensureCheckRun(ctx, f.gi, repo, newer, pipeline.RunningCheckRun(head, 2, pipeline.PhaseFetching, ""), pipeline.GradeRunning)
	if err != nil || taken != old.CheckRunID {
		t.Fatalf("the newer grade's run: %d, %v; want it to take over %d", taken, err, old.CheckRunID)
	}
	if err := q.phase(ctx, f.gi, repo, old, pipeline.PhaseGrading); err != nil {
		t.Fatal(err)
	}
	runs := f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].ID != taken || runs[0].Status != "in_progress" || runs[0].ExternalID != fmt.Sprint(newer.ID) {
		t.Errorf("check runs %+v; want the one run, the newer grade's, in progress", runs)
	}
}

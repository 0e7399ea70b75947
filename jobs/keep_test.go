package jobs

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// keep_tests: commit on a fork's pull request: the app cannot push to the
// fork, so the ticket is told once and the tests wait for the merge; once
// merged they go into a follow-up pull request of the app's (a branch off
// the default branch, the approved file without its canary, "Refs #7"),
// kept once and audited; every later grade of the ticket is contaminated,
// naming the follow-up.
func TestKeepForkFallsBackToFollowUp(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	const hidden = "from counter import count\n\n\ndef test_count():\n    assert count(\"a b\") == 2\n"
	v, err := f.w.Push(ctx, f.st, store.Draft{Author: "writer-bot", Files: []store.File{{Path: "tests/test_count.py", Data: []byte(hidden)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "keep_tests: commit\n"})
	// The fake's merge takes the head's tree: the head holds the config.
	head := f.gh.Commit("octo-org", "app", "fork-fix", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "keep_tests: commit\n", "counter.py": "def count(s):\n    return len(s.split())\n"})
	f.gh.AddPull("octo-org", "app", 9, head, "main", "Fixes #7", "mallory/app")
	f.gh.SetPermission("octo-org", "app", "rita", "write")
	f.gh.AddReview("octo-org", "app", 9, "rita", "APPROVED", "")
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpsertPullRequest(ctx, db.PullRequest{RepositoryID: 30, Number: 9, HeadSHA: head, Author: "mallory", Open: true, Links: []int{7}}); err != nil {
			return err
		}
		g, _, err := tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: 9, HeadSHA: head, Digest: v.Digest, VersionNumber: v.Number,
			InstallationID: 3, State: pipeline.GradeQueued})
		if err != nil {
			return err
		}
		g.State, g.Verdict, g.Trust = pipeline.GradeCompleted, string(report.VerdictPass), string(report.TrustIsolated)
		return tx.UpdateGrade(ctx, g)
	}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	w := &KeepTestsWorker{db: f.d, github: testkit.Clients(t, f.gh), store: f.w, log: log}
	work := func() {
		t.Helper()
		job := &river.Job[KeepTestsArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, Kind: KeepTestsArgs{}.Kind()}, Args: KeepTestsArgs{Ticket: f.ticket.ID, PR: 9}}
		if err := w.Work(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	told := func() int {
		n := 0
		for _, c := range f.gh.Comments("octo-org", "app", 7) {
			if strings.Contains(c.Body, "in a fork, which testfirst cannot push to") {
				n++
			}
		}
		return n
	}
	kept := func() (db.KeptTests, error) {
		var k db.KeptTests
		err := f.d.Tx(ctx, func(tx *db.Tx) error { var err error; k, err = tx.KeptTestsOf(ctx, f.ticket.ID); return err })
		return k, err
	}

	work()
	work()
	if n := told(); n != 1 {
		t.Errorf("the ticket was told of the fork %d times, want once", n)
	}
	if k, err := kept(); err != nil || k.State != db.KeptWaitingMerge || k.ApprovedBy != "rita" || k.Mode != pipeline.KeepFollowUp {
		t.Errorf("before the merge: %+v, %v", k, err)
	}
	if ops := f.gh.OpenedPulls("octo-org", "app"); len(ops) != 0 {
		t.Fatalf("a follow-up before the merge: %+v", ops)
	}

	merge := f.gh.MergePull("octo-org", "app", 9)
	work()
	work()
	ops := f.gh.OpenedPulls("octo-org", "app")
	if len(ops) != 1 {
		t.Fatalf("follow-up pull requests: %+v", ops)
	}
	op := ops[0]
	if op.HeadRef != "testfirst/keep-tests-7" || op.BaseRef != "main" || op.Author != "testfirst[bot]" || !strings.Contains(op.Body, "Refs #7") ||
		len(pipeline.Links(op.Body, "octo-org", "app")) != 0 || len(op.Commits) != 1 {
		t.Errorf("follow-up: %+v", op)
	}
	if op.Files["tests/test_count.py"] != hidden || op.Files["counter.py"] == "" {
		t.Errorf("follow-up's tree: %q", op.Files)
	}
	c, _ := f.gh.CommitOf("octo-org", "app", op.HeadSHA)
	if c.Parent != merge || c.Author != "testfirst[bot]" || !strings.Contains(c.Message, pipeline.KeptTrailerLine(7, v.Digest)) {
		t.Errorf("follow-up commit: %+v", c)
	}
	k, err := kept()
	if err != nil || k.State != db.KeptDone || k.FollowUpPR != op.Number || k.CommitSHA != op.HeadSHA || k.KeptAt.IsZero() {
		t.Errorf("kept: %+v, %v", k, err)
	}
	var events []db.AuditEvent
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { var err error; events, err = tx.AuditLog(ctx, f.ticket.ID); return err }); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range events {
		counts[e.Kind]++
	}
	if counts[pipeline.AuditTestsKept] != 1 || counts["tests.keep_waiting"] != 1 {
		t.Errorf("audit: %v", counts)
	}

	rep := &report.Report{Verdict: report.VerdictPass}
	if err := applyKept(ctx, f.d, f.ticket.ID, "feedface", rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != report.VerdictContaminated || !rep.Contaminated || len(rep.Reasons) != 1 ||
		!strings.Contains(rep.Reasons[0], "public") || !strings.Contains(rep.Reasons[0], "pull request #") {
		t.Errorf("a later grade: %+v", rep)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// keep_tests: commit, retried after its commit reached the pull request's
// branch but before it was recorded (the replica died): the job finds its
// commit by its trailer and records it, and commits nothing again; a later
// grade of that commit keeps its verdict and says the tests are public.
func TestKeepCommitRetryFindsItsCommit(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	const hidden = "def test_one():\n    assert 1\n"
	v, err := f.w.Push(ctx, f.st, store.Draft{Author: "writer-bot", Files: []store.File{{Path: "tests/test_one.py", Data: []byte(hidden)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "keep_tests: commit\n"})
	head := f.gh.Commit("octo-org", "app", "fix", map[string]string{"README.md": "fixed\n"})
	f.gh.AddPull("octo-org", "app", 4, head, "main", "Fixes #7", "")
	// The earlier attempt's commit, as it made it.
	sha, err := f.gi.CommitOnto(ctx, "octo-org", "app", "fix", head, pipeline.KeptCommitMessage(7, v.Number, v.Digest, "alice"),
		[]github.FileChange{{Path: "tests/test_one.py", Content: []byte(hidden)}})
	if err != nil {
		t.Fatal(err)
	}
	w := &KeepTestsWorker{db: f.d, github: testkit.Clients(t, f.gh), store: f.w, log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	work := func() {
		t.Helper()
		if err := w.Work(ctx, &river.Job[KeepTestsArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 2}, Args: KeepTestsArgs{Ticket: f.ticket.ID, PR: 4}}); err != nil {
			t.Fatal(err)
		}
	}
	notKept := func(what string) {
		t.Helper()
		if err := f.d.Tx(ctx, func(tx *db.Tx) error { _, err := tx.KeptTestsOf(ctx, f.ticket.ID); return err }); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("%s: the tests are recorded kept (%v)", what, err)
		}
	}
	// The trailer alone is anyone's to write: before the parent passed
	// and was approved, the commit is not taken for testfirst's.
	work()
	notKept("no pass, no approval")
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpsertPullRequest(ctx, db.PullRequest{RepositoryID: 30, Number: 4, HeadSHA: sha, Author: "octo-org", Open: true, Links: []int{7}}); err != nil {
			return err
		}
		g, _, err := tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: 4, HeadSHA: head, Digest: v.Digest, VersionNumber: v.Number,
			InstallationID: 3, State: pipeline.GradeQueued})
		if err != nil {
			return err
		}
		g.State, g.Verdict, g.Trust = pipeline.GradeCompleted, string(report.VerdictPass), string(report.TrustIsolated)
		return tx.UpdateGrade(ctx, g)
	}); err != nil {
		t.Fatal(err)
	}
	f.gh.SetPermission("octo-org", "app", "rita", "write")
	f.gh.AddReview("octo-org", "app", 4, "rita", "APPROVED", "")
	for range 2 {
		work()
	}
	if c, _ := f.gh.CommitOf("octo-org", "app", "fix"); c.SHA != sha {
		t.Errorf("the branch moved to %s; want the earlier attempt's %s", c.SHA, sha)
	}
	var k db.KeptTests
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { var err error; k, err = tx.KeptTestsOf(ctx, f.ticket.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if k.State != db.KeptDone || k.CommitSHA != sha || k.ParentSHA != head || k.Branch != "fix" {
		t.Errorf("recorded %+v", k)
	}
	rep := &report.Report{Verdict: report.VerdictPass}
	if err := applyKept(ctx, f.d, f.ticket.ID, sha, rep); err != nil || rep.Verdict != report.VerdictPass || len(rep.Reasons) != 1 ||
		!strings.Contains(rep.Reasons[0], "public from this commit on") {
		t.Errorf("the kept commit's grade: %+v, %v", rep, err)
	}
}

// An author's commit that borrows the kept-tests trailer onto a passing,
// approved head, but changes the code too, is not taken for testfirst's:
// nothing is recorded, later grades of it are not spared.
func TestKeepTrailerAloneIsNotKept(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	const hidden = "def test_one():\n    assert 1\n"
	v, err := f.w.Push(ctx, f.st, store.Draft{Author: "writer-bot", Files: []store.File{{Path: "tests/test_one.py", Data: []byte(hidden)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "keep_tests: commit\n"})
	head := f.gh.Commit("octo-org", "app", "fix", map[string]string{"README.md": "fixed\n"})
	f.gh.AddPull("octo-org", "app", 4, head, "main", "Fixes #7", "")
	forged, err := f.gi.CommitOnto(ctx, "octo-org", "app", "fix", head, pipeline.KeptCommitMessage(7, v.Number, v.Digest, "alice"),
		[]github.FileChange{{Path: "tests/test_one.py", Content: []byte(hidden)}, {Path: "README.md", Content: []byte("changed after the pass\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		g, _, err := tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: 4, HeadSHA: head, Digest: v.Digest, VersionNumber: v.Number,
			InstallationID: 3, State: pipeline.GradeQueued})
		if err != nil {
			return err
		}
		g.State, g.Verdict, g.Trust = pipeline.GradeCompleted, string(report.VerdictPass), string(report.TrustIsolated)
		return tx.UpdateGrade(ctx, g)
	}); err != nil {
		t.Fatal(err)
	}
	f.gh.SetPermission("octo-org", "app", "rita", "write")
	f.gh.AddReview("octo-org", "app", 4, "rita", "APPROVED", "")
	w := &KeepTestsWorker{db: f.d, github: testkit.Clients(t, f.gh), store: f.w, log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	if err := w.Work(ctx, &river.Job[KeepTestsArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1}, Args: KeepTestsArgs{Ticket: f.ticket.ID, PR: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { _, err := tx.KeptTestsOf(ctx, f.ticket.ID); return err }); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("the forged commit was recorded as kept tests (%v)", err)
	}
	if c, _ := f.gh.CommitOf("octo-org", "app", "fix"); c.SHA != forged {
		t.Errorf("the branch moved to %s", c.SHA)
	}
	rep := &report.Report{Verdict: report.VerdictPass}
	if err := applyKept(ctx, f.d, f.ticket.ID, forged, rep); err != nil || rep.Verdict != report.VerdictPass || len(rep.Reasons) != 0 {
		t.Errorf("the forged head's grade: %+v, %v", rep, err)
	}
}

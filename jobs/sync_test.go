package jobs

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// syncFixture is a ticket on issue #7 of octo-org/app, a file store and a
// sync worker over them.
type syncFixture struct {
	gh     *fakegithub.Server
	d      *db.DB
	w      *store.Writer
	r      *store.Reader
	gi     *github.Installation
	sync   *SyncWorker
	st     store.Ticket
	ticket db.Ticket
}

func newSyncFixture(t *testing.T) *syncFixture {
	t.Helper()
	ctx := t.Context()
	gh := fakegithub.New(t)
	gh.AddInstallation(3, "octo-org")
	gh.AddRepo(3, "octo-org", "app", "main")
	base := gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n"})
	gh.AddIssue("octo-org", "app", 7, "alice", "- [ ] counts")
	clients, d := testkit.Clients(t, gh), testkit.DB(t)
	w, r := testkit.Store(t)
	gi, err := clients.Installation(3)
	if err != nil {
		t.Fatal(err)
	}
	f := &syncFixture{gh: gh, d: d, w: w, r: r, gi: gi, st: store.Ticket{Installation: 3, Owner: "octo-org", Repo: "app", Issue: 7}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	q := &gradeQueue{db: d, store: w, publicURL: "https://tf.example", log: log}
	f.sync = &SyncWorker{db: d, github: clients, store: w, grades: q, publicURL: "https://tf.example", log: log}
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpsertRepository(ctx, db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app", DefaultBranch: "main"}); err != nil {
			return err
		}
		f.ticket, _, err = tx.OpenTicket(ctx, db.Ticket{RepositoryID: 30, IssueNumber: 7, Requester: "alice", BaseSHA: base, State: pipeline.TicketWriting, Label: "test-first"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *syncFixture) push(t *testing.T) store.Version {
	t.Helper()
	v, err := f.w.Push(t.Context(), f.st, store.Draft{Author: "writer-bot",
		Files: []store.File{{Path: "tests/test_count.py", Data: []byte("def test_count():\n    assert 1\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// run runs one sync of every active ticket.
func (f *syncFixture) run(t *testing.T) {
	t.Helper()
	job := &river.Job[SyncArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, Kind: SyncArgs{}.Kind()}}
	if err := f.sync.Work(t.Context(), job); err != nil {
		t.Fatal(err)
	}
}

// configReads counts the requests for the repository's config file.
func (f *syncFixture) configReads() int {
	n := 0
	for _, r := range f.gh.Requests() {
		if strings.HasSuffix(r.Path, "/contents/.github/testfirst.yml") {
			n++
		}
	}
	return n
}

func (f *syncFixture) comments() []string {
	var out []string
	for _, c := range f.gh.Comments("octo-org", "app", 7) {
		out = append(out, c.Body)
	}
	return out
}

func (f *syncFixture) state(t *testing.T) pipeline.TicketState {
	t.Helper()
	return readTx(t, f.d, func(tx *db.Tx) (db.Ticket, error) { return tx.Ticket(t.Context(), f.ticket.ID) }).State
}

// readTx is what get reads in a transaction of d; an error fails the test.
func readTx[T any](t *testing.T, d *db.DB, get func(*db.Tx) (T, error)) T {
	t.Helper()
	var v T
	if err := d.Tx(t.Context(), func(tx *db.Tx) error {
		var err error
		v, err = get(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSyncStopsTicketAfterRejections rejects three versions: each
// rejection is announced once and without its reason, and the third stops
// the ticket with lane:pair and a comment that says so.
func TestSyncStopsTicketAfterRejections(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	for i := 1; i <= 3; i++ {
		v := f.push(t)
		f.run(t)
		if got := f.state(t); got != pipeline.TicketChecking {
			t.Errorf("after pushing v%d: state %s, want %s (its base check is queued)", i, got, pipeline.TicketChecking)
		}
		if _, err := f.w.Reject(ctx, f.st, v.Number, v.Digest, "alice", "secret reason about test_count"); err != nil {
			t.Fatal(err)
		}
		f.run(t)
		// A second sync changes nothing, and does not read the repository's
		// config for the cap again.
		reads := f.configReads()
		f.run(t)
		if n := f.configReads(); n != reads {
			t.Errorf("after v%d: a sync with nothing new read the repo config %d more time(s)", i, n-reads)
		}
	}
	comments := f.comments()
	// Each rejection notifies the version's writer and points to the card.
	want := []string{"**v1** were rejected; a new version is needed. @writer-bot, the writer of v1, finds the requester's reason on the approval card " +
		"(it is never posted on GitHub): https://tf.example/tickets/octo-org/app/7/versions/1", "**v2** were rejected", "**v3** were rejected", "rejected 3 times"}
	if len(comments) != len(want) {
		t.Fatalf("comments = %q; want one per rejection and one stop", comments)
	}
	for i, w := range want {
		if !strings.Contains(comments[i], w) || strings.Contains(comments[i], "secret reason") {
			t.Errorf("comment %d = %q; want %q and no reason", i, comments[i], w)
		}
	}
	if got := f.gh.IssueLabels("octo-org", "app", 7); !slices.Contains(got, "lane:pair") {
		t.Errorf("labels = %v; want lane:pair", got)
	}
	if got := f.state(t); got != pipeline.TicketStopped {
		t.Errorf("state = %s; want %s", got, pipeline.TicketStopped)
	}
	// A new version takes the stopped ticket up again.
	f.push(t)
	f.run(t)
	if got := f.state(t); got != pipeline.TicketChecking {
		t.Errorf("after a new version: state %s, want %s", got, pipeline.TicketChecking)
	}
	assertAudit(t, f, "version.pushed", "version.rejected", "ticket.stopped")
}

// TestSyncApprovalAndReopen approves a version, then pushes a new one: the
// approval is announced and labelled, then reopened, unlabelled and its
// running grades cancelled.
func TestSyncApprovalAndReopen(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	v1 := f.push(t)
	if _, err := f.w.Approve(ctx, f.st, 1, v1.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	if got := f.gh.IssueLabels("octo-org", "app", 7); !slices.Contains(got, "test-first:approved") {
		t.Errorf("labels = %v; want test-first:approved", got)
	}
	if got := f.state(t); got != pipeline.TicketApproved {
		t.Errorf("state = %s; want approved", got)
	}
	// A grade in progress against v1, as a pull request would have.
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	var g db.Grade
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		g, _, err = tx.CreateGrade(ctx, db.Grade{TicketID: f.ticket.ID, PRNumber: 8, HeadSHA: head, Digest: v1.Digest, VersionNumber: 1, InstallationID: 3, State: pipeline.GradeRunning})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	gi, _ := f.sync.github.Installation(3)
	if _, err := f.sync.grades.ensureCheckRun(ctx, gi, db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app"}, g, pipeline.RunningCheckRun(head, 1, pipeline.PhaseGrading, ""), pipeline.GradeRunning); err != nil {
		t.Fatal(err)
	}

	f.push(t)
	f.run(t)
	comments := f.comments()
	if len(comments) != 2 || !strings.Contains(comments[0], "**v1** were approved") || !strings.Contains(comments[1], "v1 was reopened: v2 replaces it") {
		t.Errorf("comments = %q; want the approval, then the reopening", comments)
	}
	if got := f.gh.IssueLabels("octo-org", "app", 7); slices.Contains(got, "test-first:approved") {
		t.Errorf("labels = %v; want test-first:approved removed", got)
	}
	runs := f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Conclusion != "cancelled" {
		t.Errorf("check runs = %+v; want the v1 grade's run cancelled", runs)
	}
	assertAudit(t, f, "version.approved", "version.superseded", "grade.cancelled")
}

func assertAudit(t *testing.T, f *syncFixture, kinds ...string) {
	t.Helper()
	var got []string
	if err := f.d.Tx(context.Background(), func(tx *db.Tx) error {
		es, err := tx.AuditLog(context.Background(), f.ticket.ID)
		for _, e := range es {
			got = append(got, e.Kind)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if !slices.Contains(got, k) {
			t.Errorf("audit log %v lacks %s", got, k)
		}
	}
}

// TestGradeReportsBrokenRepoConfig grades with a .github/testfirst.yml
// that does not parse: the check run fails saying exactly what is wrong,
// without reaching the sandbox.
func TestGradeReportsBrokenRepoConfig(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	v := f.push(t)
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "grading:\n  timeout: forever\n"})
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	repo := db.Repository{ID: 30, InstallationID: 3, Owner: "octo-org", Name: "app", DefaultBranch: "main"}
	if err := f.sync.grades.grade(ctx, f.gi, repo, f.ticket, 8, head, v, false); err != nil {
		t.Fatal(err)
	}
	var g db.Grade
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		g, err = tx.GradeByHead(ctx, head, v.Digest)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	w := &GradeWorker{db: f.d, github: f.sync.github, reader: f.r, grades: f.sync.grades, log: f.sync.log}
	job := &river.Job[GradeArgs]{JobRow: &rivertype.JobRow{ID: g.JobID, Attempt: 1, MaxAttempts: gradeMaxAttempts, Kind: GradeArgs{}.Kind()}, Args: GradeArgs{Grade: g.ID}}
	if err := w.Work(ctx, job); err != nil {
		t.Fatalf("Work = %v; want the grade refused, not retried", err)
	}
	runs := f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "failure" ||
		!strings.Contains(runs[0].Summary, `grading.timeout "forever": want a duration`) {
		t.Errorf("check runs = %+v; want one failed run naming the problem", runs)
	}
}

// TestSyncAsksForTheSignatureEnforceNeeds: under enforce, a version signed
// once on the card is not approved; the issue asks for the signature it
// still needs, once, notifying the requester when someone else signed
// first.
func TestSyncAsksForTheSignatureEnforceNeeds(t *testing.T) {
	for _, tt := range []struct {
		signer, want string
	}{
		{"alice", "signed by `alice`, the requester. This repository's approval policy is `enforce`: missing, a second signature from anyone with write access"},
		{"wes", "signed by `wes`. This repository's approval policy is `enforce`: missing, the requester's signature. @alice, as the requester, please review them and sign"},
	} {
		t.Run(tt.signer, func(t *testing.T) {
			f := newSyncFixture(t)
			f.gh.SetPermission("octo-org", "app", "alice", "admin")
			f.gh.SetPermission("octo-org", "app", "wes", "write")
			f.gh.SetPermission("octo-org", "app", "rita", "read")
			ctx := t.Context()
			v := f.push(t)
			f.run(t)
			setCheck(t, f, 1, `{"tests":["tests/test_count.py::test_count"],"base":{"failing":["tests/test_count.py::test_count"]},"trust":"isolated"}`)
			f.run(t)
			if err := f.d.Tx(ctx, func(tx *db.Tx) error {
				dv, err := tx.Version(ctx, f.ticket.ID, 1)
				if err != nil {
					return err
				}
				_, err = tx.Approve(ctx, db.Approval{VersionID: dv.ID, ApprovedBy: tt.signer, ApprovedAt: time.Now(), Digest: v.Digest})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			f.run(t)
			f.run(t)
			comments := f.comments()
			if len(comments) != 2 || !strings.Contains(comments[0], "**v1** are ready for review") {
				t.Fatalf("comments = %q; want the ready comment, then one asking for the signature", comments)
			}
			if !strings.Contains(comments[1], tt.want) || !strings.Contains(comments[1], "https://tf.example/tickets/octo-org/app/7/versions/1") {
				t.Errorf("comment = %q; want %q and the card's link", comments[1], tt.want)
			}
			// The second signer is asked by name: those with write access
			// who are neither the requester nor a reader.
			if tt.signer == "alice" && (!strings.Contains(comments[1], "@wes can sign.") || strings.Contains(comments[1], "rita")) {
				t.Errorf("comment = %q; want @wes named as who can sign, and no reader", comments[1])
			}
			if got := f.state(t); got != pipeline.TicketAwaitingApproval {
				t.Errorf("state = %s; want %s", got, pipeline.TicketAwaitingApproval)
			}
		})
	}
}

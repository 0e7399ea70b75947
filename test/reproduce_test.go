package test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// reproduceEnv is a recorded grade of the sample's fixed tree in real
// SQLite, its trees in the fake GitHub and its tests in a store.
type reproduceEnv struct {
	d       *db.DB
	clients *github.Clients
	reader  *store.Reader
	writer  *store.Writer
	st      store.Ticket
	grade   db.Grade
	report  *report.Report
}

// fetchTree downloads a commit as the grade job does.
func fetchTree(t *testing.T, clients *github.Clients, sha string) *tree.Tree {
	t.Helper()
	gi, err := clients.Installation(1)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := gi.Tarball(t.Context(), pipeOwner, pipeRepo, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	entries, err := github.ExtractTarball(rc)
	if err != nil {
		t.Fatal(err)
	}
	var fs []tree.File
	for _, e := range entries {
		fs = append(fs, tree.File{Path: e.Path, Mode: e.Mode, Data: e.Data, Link: e.Link})
	}
	tr, err := tree.New(fs)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func newReproduceEnv(t *testing.T, g *app.Grading) *reproduceEnv {
	t.Helper()
	ctx := t.Context()
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	base, patch, fixed := sampleVersion(t)
	baseSHA := gh.Commit(pipeOwner, pipeRepo, pipeBranch, files(base))
	headSHA := gh.Commit(pipeOwner, pipeRepo, "feature", files(fixed))
	clients, err := github.NewClients(github.AppConfig{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), BaseURL: gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	e := &reproduceEnv{clients: clients, st: store.Ticket{Installation: 1, Owner: pipeOwner, Repo: pipeRepo, Issue: 1}}

	graderID, _ := age.GenerateX25519Identity()
	cardID, _ := age.GenerateX25519Identity()
	blobs, err := store.NewFileBlobs(filepath.Join(t.TempDir(), "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	if e.writer, err = store.NewWriter(blobs, []age.Recipient{graderID.Recipient()}, []age.Recipient{cardID.Recipient()}, []age.Identity{cardID}); err != nil {
		t.Fatal(err)
	}
	if e.reader, err = store.NewReader(blobs, []age.Identity{graderID}); err != nil {
		t.Fatal(err)
	}
	v := e.approve(t, patch)

	if e.d, err = db.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "testfirst.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.d.Close() })
	if err := e.d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// The grade as the grade job makes it: trees fetched by SHA, tests
	// fresh from the store.
	content, _, err := e.reader.Open(ctx, e.st, v.Digest)
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := content.HiddenTree()
	if err != nil {
		t.Fatal(err)
	}
	if e.report, err = g.Grader.Grade(ctx, grader.Request{Repo: fetchTree(t, clients, headSHA), Hidden: hidden, Base: fetchTree(t, clients, baseSHA),
		Reference: content.Reference, TestsDigest: v.Digest, Timeout: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if e.report.Verdict != report.VerdictPass {
		t.Fatalf("recorded grade: %s %q", e.report.Verdict, e.report.Reasons)
	}
	if err := e.d.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpsertRepository(ctx, db.Repository{ID: 500, InstallationID: 1, Owner: pipeOwner, Name: pipeRepo, DefaultBranch: pipeBranch}); err != nil {
			return err
		}
		tk, _, err := tx.OpenTicket(ctx, db.Ticket{RepositoryID: 500, IssueNumber: 1, Requester: "alice", BaseSHA: baseSHA, State: pipeline.TicketApproved, Label: "test-first", Title: "Word statistics"})
		if err != nil {
			return err
		}
		if e.grade, _, err = tx.CreateGrade(ctx, db.Grade{TicketID: tk.ID, PRNumber: 2, HeadSHA: headSHA, Digest: v.Digest, VersionNumber: v.Number, InstallationID: 1, State: pipeline.GradeQueued}); err != nil {
			return err
		}
		e.grade.State, e.grade.Verdict, e.grade.Trust = pipeline.GradeCompleted, string(e.report.Verdict), string(e.report.Trust)
		return tx.UpdateGrade(ctx, e.grade)
	}); err != nil {
		t.Fatal(err)
	}
	e.setReport(t, e.report)
	return e
}

// approve pushes the sample's hidden tests with patch as the ticket's next
// version and approves it.
func (e *reproduceEnv) approve(t *testing.T, patch []byte) store.Version {
	t.Helper()
	hidden := testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden"))
	var fs []store.File
	for _, f := range hidden.Files {
		fs = append(fs, store.File{Path: f.Path, Data: f.Data})
	}
	v, err := e.writer.Push(t.Context(), e.st, store.Draft{Files: fs, Reference: patch, Author: "writer-bot"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.writer.Approve(t.Context(), e.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	return v
}

// setReport records rep as the grade's report.
func (e *reproduceEnv) setReport(t *testing.T, rep *report.Report) {
	t.Helper()
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.d.Tx(t.Context(), func(tx *db.Tx) error { return tx.SetGradeReport(t.Context(), e.grade.ID, data) }); err != nil {
		t.Fatal(err)
	}
}

// TestReproduceGrade: a recorded grade is graded again from the same
// commits (fetched again from GitHub by SHA), the same approved tests
// (from the store, also once a newer version superseded them) and the same
// image, and comes out the same; inputs that are not the recorded ones are
// refused before any sandbox runs.
func TestReproduceGrade(t *testing.T) {
	g := testenv.Grading(t)
	e := newReproduceEnv(t, g)
	rp := jobs.NewReproducer(e.d, e.clients, e.reader, g.Grader, g.ImageID, g.Docker)
	check := func(t *testing.T) {
		t.Helper()
		got, err := rp.Reproduce(t.Context(), e.grade.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := report.WriteSideBySide(&out, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", out.String())
		if !got.Same || !strings.Contains(out.String(), "reproduced: the same verdict") {
			t.Errorf("not reproduced:\n%s", out.String())
		}
	}
	t.Run("same inputs, same grade", check)
	t.Run("after a newer version superseded the tests", func(t *testing.T) {
		patch, err := os.ReadFile(filepath.Join(sampleDir, "reference.patch"))
		if err != nil {
			t.Fatal(err)
		}
		e.approve(t, patch)
		check(t)
	})
	t.Run("the image is gone", func(t *testing.T) {
		gone := *e.report
		gone.Image = "sha256:" + strings.Repeat("0", 64)
		e.setReport(t, &gone)
		defer e.setReport(t, e.report)
		_, err := rp.Reproduce(t.Context(), e.grade.ID)
		if err == nil || !strings.Contains(err.Error(), "is not on this engine") {
			t.Errorf("err %v, want the image named as missing", err)
		}
	})
	t.Run("a report of another tree", func(t *testing.T) {
		other := *e.report
		other.RepoDigest = "sha256:" + strings.Repeat("1", 64)
		e.setReport(t, &other)
		defer e.setReport(t, e.report)
		_, err := rp.Reproduce(t.Context(), e.grade.ID)
		if !errors.Is(err, grader.ErrNotReproducible) {
			t.Errorf("err %v, want ErrNotReproducible", err)
		}
	})
	t.Run("a grade with no report", func(t *testing.T) {
		if err := e.d.Tx(t.Context(), func(tx *db.Tx) error {
			g := e.grade
			g.State = pipeline.GradeRunning
			return tx.UpdateGrade(t.Context(), g)
		}); err != nil {
			t.Fatal(err)
		}
		_, err := rp.Reproduce(t.Context(), e.grade.ID)
		if err == nil || !strings.Contains(err.Error(), "only a completed grade") {
			t.Errorf("err %v", err)
		}
	})
}

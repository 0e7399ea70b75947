package db

import (
	"github.com/testfirst-app/testfirst/pipeline"

	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPipelineMirror covers what the service keeps beyond the ticket: the
// store's versions and their checks, pull requests and their links, and
// grades with their jobs and reports, on each engine.
func TestPipelineMirror(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		var tk Ticket
		must(d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}); err != nil {
				return err
			}
			var err error
			tk, _, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "dev", BaseSHA: "b1", State: "writing", Label: "test-first", Title: "Add totals", Body: "- [ ] sums"})
			return err
		}))
		if tk.Title != "Add totals" || tk.Body != "- [ ] sums" {
			t.Fatalf("ticket = %+v; want the issue's title and body", tk)
		}

		// Tickets: closing or withdrawing takes a ticket off the active
		// list; reopening puts it back.
		active := func(done ...pipeline.TicketState) []int64 {
			t.Helper()
			var ids []int64
			must(d.Tx(ctx, func(tx *Tx) error {
				tks, err := tx.ActiveTickets(ctx, done...)
				for _, tk := range tks {
					ids = append(ids, tk.ID)
				}
				return err
			}))
			return ids
		}
		if got := active(); len(got) != 1 {
			t.Fatalf("ActiveTickets = %v; want the ticket", got)
		}
		if got := active("writing"); len(got) != 0 {
			t.Fatalf("ActiveTickets(writing) = %v; want none", got)
		}
		must(d.Tx(ctx, func(tx *Tx) error { return tx.SetTicketClosed(ctx, tk.ID, time.Now()) }))
		if got := active(); len(got) != 0 {
			t.Fatalf("ActiveTickets after close = %v; want none", got)
		}
		must(d.Tx(ctx, func(tx *Tx) error { return tx.SetTicketClosed(ctx, tk.ID, time.Time{}) }))
		must(d.Tx(ctx, func(tx *Tx) error { return tx.SetTicketWithdrawn(ctx, tk.ID, time.Now()) }))
		if got := active(); len(got) != 0 {
			t.Fatalf("ActiveTickets after unlabel = %v; want none", got)
		}
		must(d.Tx(ctx, func(tx *Tx) error {
			if err := tx.SetTicketWithdrawn(ctx, tk.ID, time.Time{}); err != nil {
				return err
			}
			return tx.SetTicketIssue(ctx, tk.ID, "Add totals", "- [ ] sums\n- [ ] rounding")
		}))
		if got := active(); len(got) != 1 {
			t.Fatalf("ActiveTickets after relabel = %v; want the ticket", got)
		}

		// Versions mirrored from the store keep the store's numbers.
		must(d.Tx(ctx, func(tx *Tx) error {
			v, created, err := tx.MirrorVersion(ctx, Version{TicketID: tk.ID, Number: 2, Digest: "sha256:aa", State: "pending", Author: "writer"})
			if err != nil || !created || v.Number != 2 || v.Check != nil {
				t.Fatalf("MirrorVersion = %+v, %v, %v; want v2 created, unchecked", v, created, err)
			}
			if _, created, err = tx.MirrorVersion(ctx, Version{TicketID: tk.ID, Number: 2, Digest: "sha256:bb", State: "pending"}); err != nil || created {
				t.Fatalf("MirrorVersion again = %v, %v; want the existing one", created, err)
			}
			if err := tx.SetVersionCheck(ctx, v.ID, json.RawMessage(`not json`), time.Now()); err == nil {
				t.Error("SetVersionCheck took invalid JSON")
			}
			if err := tx.SetVersionCheck(ctx, v.ID, json.RawMessage(`{"guard_tests":["t::a"]}`), time.Now()); err != nil {
				return err
			}
			if err := tx.SetVersionReady(ctx, v.ID, time.Now()); err != nil {
				return err
			}
			if err := tx.SetVersionDecision(ctx, v.ID, "rejected", "covers nothing"); err != nil {
				return err
			}
			if ok, err := tx.ClaimAnnouncement(ctx, v.ID, "", "ready"); err != nil || !ok {
				t.Fatalf("ClaimAnnouncement = %v, %v; want claimed", ok, err)
			}
			if ok, err := tx.ClaimAnnouncement(ctx, v.ID, "", "ready"); err != nil || ok {
				t.Fatalf("ClaimAnnouncement again = %v, %v; want not claimed", ok, err)
			}
			if err := tx.SetVersionAnnounced(ctx, v.ID, "rejected"); err != nil {
				return err
			}
			got, err := tx.VersionByID(ctx, v.ID)
			if err != nil {
				return err
			}
			var check map[string]any
			if err := json.Unmarshal(got.Check, &check); err != nil || got.Digest != "sha256:aa" || got.CheckedAt.IsZero() || got.ReadyAt.IsZero() ||
				got.State != "rejected" || got.RejectionReason != "covers nothing" || got.Announced != "rejected" {
				t.Errorf("version = %+v (%v); want check, ready, rejected with reason, announced", got, err)
			}
			if _, err := tx.Version(ctx, tk.ID, 3); !errors.Is(err, ErrNotFound) {
				t.Errorf("Version(3) = %v; want ErrNotFound", err)
			}
			return nil
		}))

		// Pull requests and the issues they close.
		must(d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertPullRequest(ctx, PullRequest{RepositoryID: 100, Number: 5, HeadSHA: "h1", Author: "impl", Open: true, Links: []int{12, 13}}); err != nil {
				return err
			}
			if err := tx.UpsertPullRequest(ctx, PullRequest{RepositoryID: 100, Number: 6, HeadSHA: "h9", Open: false, Links: []int{12}}); err != nil {
				return err
			}
			prs, err := tx.OpenPullsClosing(ctx, 100, 12)
			if err != nil || len(prs) != 1 || prs[0].Number != 5 || prs[0].HeadSHA != "h1" {
				t.Errorf("OpenPullsClosing = %+v, %v; want #5 at h1", prs, err)
			}
			// An edit that drops the link and a push.
			if err := tx.UpsertPullRequest(ctx, PullRequest{RepositoryID: 100, Number: 5, HeadSHA: "h2", Author: "impl", Open: true, Links: []int{13}}); err != nil {
				return err
			}
			if prs, err := tx.OpenPullsClosing(ctx, 100, 12); err != nil || len(prs) != 0 {
				t.Errorf("OpenPullsClosing after edit = %+v, %v; want none", prs, err)
			}
			pr, err := tx.PullRequest(ctx, 100, 5)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(PullRequest{RepositoryID: 100, Number: 5, HeadSHA: "h2", Author: "impl", Open: true, Links: []int{13}}, pr, cmpIgnoreUpdated); diff != "" {
				t.Errorf("PullRequest (-want +got):\n%s", diff)
			}
			return nil
		}))

		// Grades: unfinished ones by ticket and by pull request, the
		// installation's queue, and the kept report.
		must(d.Tx(ctx, func(tx *Tx) error {
			g1, _, err := tx.CreateGrade(ctx, Grade{TicketID: tk.ID, PRNumber: 5, HeadSHA: "h1", Digest: "sha256:aa", VersionNumber: 2, InstallationID: 7, State: pipeline.GradeQueued})
			if err != nil {
				return err
			}
			g2, _, err := tx.CreateGrade(ctx, Grade{TicketID: tk.ID, PRNumber: 5, HeadSHA: "h2", Digest: "sha256:aa", VersionNumber: 2, InstallationID: 7, State: pipeline.GradeQueued})
			if err != nil {
				return err
			}
			if g1.VersionNumber != 2 || g1.InstallationID != 7 {
				t.Errorf("grade = %+v; want version 2, installation 7", g1)
			}
			g1.State, g1.JobID = pipeline.GradeRunning, 41
			if err := tx.UpdateGrade(ctx, g1); err != nil {
				return err
			}
			if n, err := tx.QueuedGrades(ctx, 7); err != nil || n != 1 {
				t.Errorf("QueuedGrades = %d, %v; want 1", n, err)
			}
			gs, err := tx.UnfinishedPullGrades(ctx, 100, 5)
			if err != nil || len(gs) != 2 || gs[0].JobID != 41 || gs[0].State != pipeline.GradeRunning {
				t.Errorf("UnfinishedPullGrades = %+v, %v; want both, the first running as job 41", gs, err)
			}
			g2.State = pipeline.GradeCancelled
			if err := tx.UpdateGrade(ctx, g2); err != nil {
				return err
			}
			if gs, err := tx.UnfinishedGrades(ctx, tk.ID); err != nil || len(gs) != 1 || gs[0].ID != g1.ID {
				t.Errorf("UnfinishedGrades = %+v, %v; want the running one", gs, err)
			}
			if r, err := tx.GradeReport(ctx, g1.ID); err != nil || r != nil {
				t.Errorf("GradeReport before = %s, %v; want none", r, err)
			}
			if err := tx.SetGradeReport(ctx, g1.ID, json.RawMessage(`{"verdict":"pass","output":"ok"}`)); err != nil {
				return err
			}
			r, err := tx.GradeReportForRequester(ctx, g1.ID)
			var rep map[string]string
			if err != nil || json.Unmarshal(r, &rep) != nil || rep["output"] != "ok" {
				t.Errorf("GradeReport = %s, %v; want the report", r, err)
			}

			// A running grade keeps no attempt; a finished one regraded
			// keeps what it said, twice over two regrades.
			if err := tx.KeepAttempt(ctx, g1.ID); err != nil {
				return err
			}
			if as, err := tx.GradeAttempts(ctx, g1.ID); err != nil || len(as) != 0 {
				t.Errorf("GradeAttempts of a running grade = %+v, %v; want none", as, err)
			}
			done := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
			g1.State, g1.Verdict, g1.Trust, g1.Passed, g1.Total, g1.FinishedAt = pipeline.GradeCompleted, "fail", "isolated", 3, 5, done
			if err := tx.UpdateGrade(ctx, g1); err != nil {
				return err
			}
			for range 2 {
				if err := tx.KeepAttempt(ctx, g1.ID); err != nil {
					return err
				}
			}
			as, err := tx.GradeAttempts(ctx, g1.ID)
			if err != nil || len(as) != 2 || as[1].Attempt != 2 || as[0].Verdict != "fail" || as[0].Passed != 3 || as[0].Total != 5 ||
				as[0].State != pipeline.GradeCompleted || !as[0].FinishedAt.Equal(done) {
				t.Errorf("GradeAttempts = %+v, %v; want two, the first a fail 3/5 finished at %s", as, err, done)
			}
			return nil
		}))
	})
}

var cmpIgnoreUpdated = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".UpdatedAt" }, cmp.Ignore())

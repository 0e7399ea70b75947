package db

import (
	"github.com/testfirst-app/testfirst/pipeline"

	"errors"
	"testing"
	"time"
)

// TestCardQueries covers what the approval card reads and writes: a
// repository by name, open tickets newest first, signatures with their
// review time (one per person), rejections counted, and a ticket's grades.
func TestCardQueries(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		var tk1, tk2 Ticket
		must(d.Tx(ctx, func(tx *Tx) error {
			for _, r := range []Repository{
				{ID: 100, InstallationID: 7, Owner: "Octo", Name: "App", DefaultBranch: "main"},
				{ID: 101, InstallationID: 7, Owner: "octo", Name: "gone"},
			} {
				if err := tx.UpsertRepository(ctx, r); err != nil {
					return err
				}
			}
			if err := tx.RemoveRepository(ctx, 7, 101, time.Now()); err != nil {
				return err
			}
			var err error
			if tk1, _, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 1, Requester: "dev", BaseSHA: "b", State: "writing", Label: "test-first"}); err != nil {
				return err
			}
			if tk2, _, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 2, Requester: "dev", BaseSHA: "b", State: "writing", Label: "test-first", Title: "Totals"}); err != nil {
				return err
			}
			if _, _, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 101, IssueNumber: 3, Requester: "dev", BaseSHA: "b", State: "writing", Label: "test-first"}); err != nil {
				return err
			}
			return tx.SetTicketClosed(ctx, tk1.ID, time.Now())
		}))

		must(d.Tx(ctx, func(tx *Tx) error {
			r, err := tx.RepositoryByName(ctx, "OCTO", "app")
			if err != nil || r.ID != 100 || r.InstallationID != 7 || r.DefaultBranch != "main" {
				t.Errorf("RepositoryByName = %+v, %v; want repository 100", r, err)
			}
			if _, err := tx.RepositoryByName(ctx, "octo", "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("RepositoryByName(nope) = %v; want ErrNotFound", err)
			}
			// Closed tickets and removed repositories are not listed.
			open, err := tx.OpenTickets(ctx, 10)
			if err != nil {
				return err
			}
			if len(open) != 1 || open[0].ID != tk2.ID || open[0].Title != "Totals" || open[0].Repo.Owner != "Octo" || open[0].Repo.InstallationID != 7 {
				t.Errorf("OpenTickets = %+v; want only ticket %d with its repository", open, tk2.ID)
			}
			return nil
		}))

		// Signatures: digest bound, one per person (case aside), review
		// time and fast flag kept.
		var v1, v2 Version
		must(d.Tx(ctx, func(tx *Tx) error {
			var err error
			if v1, _, err = tx.MirrorVersion(ctx, Version{TicketID: tk2.ID, Number: 1, Digest: "sha256:11", State: "pending", Author: "w"}); err != nil {
				return err
			}
			if v2, _, err = tx.MirrorVersion(ctx, Version{TicketID: tk2.ID, Number: 2, Digest: "sha256:22", State: "pending", Author: "w"}); err != nil {
				return err
			}
			if err := tx.SetVersionDecision(ctx, v1.ID, "rejected", "misses rounding"); err != nil {
				return err
			}
			if _, err := tx.Approve(ctx, Approval{VersionID: v2.ID, ApprovedBy: "dev", ApproverID: 41, Digest: "sha256:22", ReviewSeconds: 95, Fast: true}); err != nil {
				return err
			}
			if _, err := tx.Approve(ctx, Approval{VersionID: v2.ID, ApprovedBy: "DEV", Digest: "sha256:22"}); !errors.Is(err, ErrAlreadySigned) {
				t.Errorf("second signature by the same person = %v; want ErrAlreadySigned", err)
			}
			// The same account renamed: another login, its id.
			if _, err := tx.Approve(ctx, Approval{VersionID: v2.ID, ApprovedBy: "dev-renamed", ApproverID: 41, Digest: "sha256:22"}); !errors.Is(err, ErrAlreadySigned) {
				t.Errorf("second signature by the same account under another login = %v; want ErrAlreadySigned", err)
			}
			_, err = tx.Approve(ctx, Approval{VersionID: v2.ID, ApprovedBy: "lead", ApproverID: 42, Digest: "sha256:22", ReviewSeconds: 600})
			return err
		}))
		// The index holds it too, for a writer that skips Approve's check.
		if err := d.Tx(ctx, func(tx *Tx) error {
			_, err := tx.q.exec(ctx, "INSERT INTO approvals (version_id, approved_by, approver_id, approved_at, digest) VALUES ($1, 'someone', 41, $2, 'sha256:22')", v2.ID, tx.dia.time(time.Now()))
			return err
		}); err == nil {
			t.Error("a second row of account 41's signature of v2 was stored")
		}
		must(d.Tx(ctx, func(tx *Tx) error {
			as, err := tx.Approvals(ctx, v2.ID)
			if err != nil {
				return err
			}
			if len(as) != 2 || as[0].ApprovedBy != "dev" || as[0].ApproverID != 41 || as[0].ReviewSeconds != 95 || !as[0].Fast || as[1].ApprovedBy != "lead" || as[1].ApproverID != 42 || as[1].Fast {
				t.Errorf("Approvals = %+v; want dev (95s, fast) then lead", as)
			}
			if n, err := tx.Rejections(ctx, tk2.ID); err != nil || n != 1 {
				t.Errorf("Rejections = %d, %v; want 1", n, err)
			}
			return nil
		}))

		// Grades of a ticket, newest first.
		must(d.Tx(ctx, func(tx *Tx) error {
			for i, head := range []string{"h1", "h2"} {
				if _, _, err := tx.CreateGrade(ctx, Grade{TicketID: tk2.ID, PRNumber: 5 + i, HeadSHA: head, Digest: "sha256:22", State: pipeline.GradeQueued}); err != nil {
					return err
				}
			}
			gs, err := tx.TicketGrades(ctx, tk2.ID)
			if err != nil || len(gs) != 2 || gs[0].HeadSHA != "h2" || gs[1].HeadSHA != "h1" {
				t.Errorf("TicketGrades = %+v, %v; want h2 then h1", gs, err)
			}
			return nil
		}))
	})
}

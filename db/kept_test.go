package db

import (
	"errors"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// A ticket's tests are kept once: a waiting row is brought up to date, a
// kept row is never replaced (a retried job, a later pass), and a ticket
// with none says ErrNotFound.
func TestKeptTestsOnce(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		var tk Ticket
		if err := d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertInstallation(ctx, Installation{ID: 7, AccountLogin: "octo", AccountType: "Organization"}); err != nil {
				return err
			}
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}); err != nil {
				return err
			}
			var err error
			tk, _, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "dev", BaseSHA: "b1", State: pipeline.TicketApproved, Label: "test-first"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		read := func() (KeptTests, error) {
			var k KeptTests
			err := d.Tx(ctx, func(tx *Tx) error { var err error; k, err = tx.KeptTestsOf(ctx, tk.ID); return err })
			return k, err
		}
		save := func(k KeptTests) error { return d.Tx(ctx, func(tx *Tx) error { return tx.SaveKeptTests(ctx, k) }) }
		if _, err := read(); !errors.Is(err, ErrNotFound) {
			t.Fatalf("no row: %v; want ErrNotFound", err)
		}
		waiting := KeptTests{TicketID: tk.ID, PRNumber: 4, Mode: pipeline.KeepFollowUp, State: KeptWaitingMerge, Version: 1, Digest: "sha256:aa",
			ApprovedBy: "rita", Note: "a fork's branch"}
		if err := save(waiting); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
		kept := waiting
		kept.State, kept.Branch, kept.CommitSHA, kept.FollowUpPR, kept.KeptAt = KeptDone, "testfirst/keep-12", "c1", 9, at
		if err := save(kept); err != nil {
			t.Fatal(err)
		}
		again := kept
		again.CommitSHA, again.PRNumber = "c2", 5
		if err := save(again); !errors.Is(err, ErrKeptAlready) {
			t.Errorf("keeping twice: %v; want ErrKeptAlready", err)
		}
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if got.State != KeptDone || got.CommitSHA != "c1" || got.PRNumber != 4 || got.FollowUpPR != 9 || got.Note != "a fork's branch" ||
			!got.KeptAt.Equal(at) || got.CreatedAt.IsZero() || got.Branch != "testfirst/keep-12" || got.Digest != "sha256:aa" {
			t.Errorf("read back %+v", got)
		}
	})
}

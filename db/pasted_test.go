package db

import (
	"testing"

	"github.com/testfirst-app/testfirst/pipeline"
)

// A pasted sighting is kept once per place and hidden test (a redelivered
// comment adds none), read back whole, and found by the repository's
// tickets.
func TestPastedSightings(t *testing.T) {
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
		s := PastedSighting{TicketID: tk.ID, SeenIn: "a comment on issue #12", URL: "https://github.com/octo/app/issues/12#issuecomment-1", Author: "mallory",
			Version: 1, HiddenFile: "tests/test_a.py", Test: "test_x", Matched: 30, Of: 40, FirstLine: 3, LastLine: 11}
		for i, want := range []bool{true, false} {
			var created bool
			if err := d.Tx(ctx, func(tx *Tx) error { var err error; created, err = tx.AddPastedSighting(ctx, s); return err }); err != nil || created != want {
				t.Fatalf("add #%d: created %v, %v; want %v", i+1, created, err, want)
			}
		}
		other := s
		other.Test = "test_y"
		var got []PastedSighting
		var tickets []Ticket
		if err := d.Tx(ctx, func(tx *Tx) error {
			if _, err := tx.AddPastedSighting(ctx, other); err != nil {
				return err
			}
			var err error
			if got, err = tx.PastedSightings(ctx, tk.ID); err != nil {
				return err
			}
			tickets, err = tx.RepositoryTickets(ctx, 100)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Test != "test_x" || got[1].Test != "test_y" || got[0].SeenAt.IsZero() {
			t.Fatalf("sightings: %+v", got)
		}
		g := got[0]
		g.ID, g.SeenAt = 0, s.SeenAt
		if g != s {
			t.Errorf("read back %+v, stored %+v", g, s)
		}
		if len(tickets) != 1 || tickets[0].ID != tk.ID {
			t.Errorf("repository tickets: %+v", tickets)
		}
	})
}

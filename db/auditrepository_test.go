package db

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestRepositoryAuditLog: a repository's audit log holds the events of its
// tickets, and only those, in the order they were written, with each
// ticket's issue number, on every engine.
func TestRepositoryAuditLog(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		var kinds []string
		if err := d.Tx(ctx, func(tx *Tx) error {
			for _, r := range []Repository{{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}, {ID: 101, InstallationID: 7, Owner: "octo", Name: "other"}} {
				if err := tx.UpsertRepository(ctx, r); err != nil {
					return err
				}
			}
			var ids []int64
			for _, tk := range []Ticket{{RepositoryID: 100, IssueNumber: 4}, {RepositoryID: 100, IssueNumber: 9}, {RepositoryID: 101, IssueNumber: 4}} {
				tk.Requester, tk.BaseSHA, tk.State, tk.Label = "dev", "b", "writing", "test-first"
				opened, _, err := tx.OpenTicket(ctx, tk)
				if err != nil {
					return err
				}
				ids = append(ids, opened.ID)
			}
			for _, ev := range []struct {
				ticket int64
				kind   string
			}{{ids[0], "ticket.opened"}, {ids[2], "elsewhere"}, {ids[1], "ticket.opened"}, {ids[0], "version.pushed"}} {
				if err := tx.AppendAudit(ctx, AuditEvent{Actor: "dev", TicketID: ev.ticket, Kind: ev.kind, Detail: json.RawMessage(`{}`)}); err != nil {
					return err
				}
				if ev.ticket != ids[2] {
					kinds = append(kinds, ev.kind)
				}
			}
			es, issues, err := tx.RepositoryAuditLog(ctx, 100)
			if err != nil {
				return err
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Kind)
			}
			if !slices.Equal(got, kinds) {
				t.Errorf("events %v, want %v", got, kinds)
			}
			if issues[ids[0]] != 4 || issues[ids[1]] != 9 || len(issues) != 2 {
				t.Errorf("issues %v, want ticket %d → 4, %d → 9", issues, ids[0], ids[1])
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

package db

import (
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// TestRecordStoreVersion: a store version enters the database pending,
// whatever the store says of it by then, once; a second digest under its
// number is refused, on each engine.
func TestRecordStoreVersion(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		var tk Ticket
		if err := d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}); err != nil {
				return err
			}
			var err error
			tk, _, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "dev", BaseSHA: "b1", State: pipeline.TicketWriting, Label: "test-first"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		created := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
		if err := d.Tx(ctx, func(tx *Tx) error {
			v, fresh, err := tx.RecordStoreVersion(ctx, tk.ID, 1, "sha256:aa", "writer", created)
			if err != nil || !fresh || v.State != pipeline.VersionPending || v.Number != 1 || v.Author != "writer" {
				t.Errorf("first record = %+v, %t, %v; want v1 pending, created", v, fresh, err)
			}
			if err := tx.SetVersionDecision(ctx, v.ID, pipeline.VersionApproved, ""); err != nil {
				return err
			}
			again, fresh, err := tx.RecordStoreVersion(ctx, tk.ID, 1, "sha256:aa", "writer", created)
			if err != nil || fresh || again.ID != v.ID || again.State != pipeline.VersionApproved {
				t.Errorf("second record = %+v, %t, %v; want the recorded row unchanged", again, fresh, err)
			}
			if _, _, err := tx.RecordStoreVersion(ctx, tk.ID, 1, "sha256:bb", "writer", created); err == nil || !strings.Contains(err.Error(), "the store says sha256:bb, the database sha256:aa") {
				t.Errorf("another digest: %v; want it refused", err)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

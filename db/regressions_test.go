package db

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/testfirst-app/testfirst/pipeline"
)

// A grade's regression run is one row, queued and then completed with its
// report, output and check run; a report that is not JSON is refused.
func TestRegressionRuns(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := context.Background()
		err := d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertInstallation(ctx, Installation{ID: 7, AccountLogin: "octo", AccountType: "Organization"}); err != nil {
				return err
			}
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}); err != nil {
				return err
			}
			tk, _, err := tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "dev", BaseSHA: "b1", State: pipeline.TicketApproved, Label: "test-first"})
			if err != nil {
				return err
			}
			g, _, err := tx.CreateGrade(ctx, Grade{TicketID: tk.ID, PRNumber: 5, HeadSHA: "h1", Digest: "sha256:aa", VersionNumber: 1, InstallationID: 7, State: pipeline.GradeQueued})
			if err != nil {
				return err
			}
			if _, err := tx.RegressionRunOf(ctx, g.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("before any run: %v, want ErrNotFound", err)
			}
			if err := tx.SaveRegressionRun(ctx, RegressionRun{GradeID: g.ID, TicketID: g.TicketID, HeadSHA: g.HeadSHA, State: RegressionQueued}); err != nil {
				return err
			}
			if err := tx.SaveRegressionRun(ctx, RegressionRun{GradeID: g.ID, TicketID: g.TicketID, HeadSHA: g.HeadSHA, State: RegressionQueued, Report: json.RawMessage("{")}); err == nil {
				t.Error("a report that is not JSON was kept")
			}
			r, err := tx.RegressionRunOf(ctx, g.ID)
			if err != nil {
				return err
			}
			if r.State != RegressionQueued || r.Report != nil || r.CreatedAt.IsZero() || !r.FinishedAt.IsZero() {
				t.Errorf("queued run %+v", r)
			}
			r.State, r.Verdict, r.Report, r.Output, r.CheckRunID, r.FinishedAt = RegressionCompleted, "fail", json.RawMessage(`{"regressed":["a.py::t"]}`), "out", 7, now()
			if err := tx.SaveRegressionRun(ctx, r); err != nil {
				return err
			}
			got, err := tx.RegressionRunOf(ctx, g.ID)
			if err != nil {
				return err
			}
			if got.State != RegressionCompleted || got.Verdict != "fail" || string(got.Report) != `{"regressed":["a.py::t"]}` || got.Output != "out" ||
				got.CheckRunID != 7 || got.FinishedAt.IsZero() || !got.CreatedAt.Equal(r.CreatedAt) {
				t.Errorf("completed run %+v, saved %+v", got, r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

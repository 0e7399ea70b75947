package jobs

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
)

// TestGradeTwinExcludeFromTheBaseCheck: a pull request's grade leaves out
// the twins its version's base check found invalid or flaky, read from the
// version's stored check; a version whose check is not readable excludes
// nothing.
func TestGradeTwinExcludeFromTheBaseCheck(t *testing.T) {
	ctx := t.Context()
	d := testkit.DB(t)
	check := pipeline.VersionCheck{
		Tests: []string{"t.py::test_a", "t.py::test_b", "t.py::test_c"},
		Base:  report.BaseCheck{Flaky: []string{"t.py::test_c"}},
		Twins: &report.Twins{Twinned: 2, Of: 3, InvalidTwins: []string{"t.py::test_a"}},
	}
	raw, err := json.Marshal(check)
	if err != nil {
		t.Fatal(err)
	}
	var tk db.Ticket
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		repo := db.Repository{ID: 700, InstallationID: 7, Owner: "org", Name: "app", DefaultBranch: "main"}
		if err := tx.UpsertRepository(ctx, repo); err != nil {
			return err
		}
		if tk, _, err = tx.OpenTicket(ctx, db.Ticket{RepositoryID: repo.ID, IssueNumber: 1, Requester: "dev", BaseSHA: "abc", State: pipeline.TicketApproved, Label: "test-first"}); err != nil {
			return err
		}
		for i, c := range []json.RawMessage{raw, json.RawMessage(`{"tests": 3}`)} {
			n := i + 1
			v, err := tx.AddVersion(ctx, db.Version{TicketID: tk.ID, Number: n, Digest: "sha256:v" + string(rune('0'+n)), State: pipeline.VersionApproved, Author: "w", CreatedAt: time.Now()})
			if err != nil {
				return err
			}
			if err := tx.SetVersionCheck(ctx, v.ID, c, time.Now()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	w := &GradeWorker{db: d}
	got, err := w.twinExclude(ctx, tk.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"t.py::test_a", "t.py::test_c"}, got); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if got, err := w.twinExclude(ctx, tk.ID, 2); err != nil || got != nil {
		t.Errorf("an unreadable check excluded %v (%v), want nothing", got, err)
	}
	if _, err := w.twinExclude(ctx, tk.ID, 3); err == nil {
		t.Error("a version that is not recorded gave no error")
	}
}

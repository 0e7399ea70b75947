package db

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// TestAgentRuns: a round of a role is recorded once; its results, egress
// log and sightings are stored and read back; the run that pushed a head
// is found by it, on each engine.
func TestAgentRuns(t *testing.T) {
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
		if err := d.Tx(ctx, func(tx *Tx) error {
			w, created, err := tx.CreateAgentRun(ctx, AgentRun{TicketID: tk.ID, Role: pipeline.RoleWriter, Harness: "our-writer", ModelAPI: "anthropic",
				Round: 1, State: pipeline.AgentQueued})
			if err != nil || !created || w.ID == 0 || w.State != pipeline.AgentQueued || string(w.Egress) != "[]" {
				t.Errorf("writer round 1 = %+v, %t, %v", w, created, err)
			}
			again, created, err := tx.CreateAgentRun(ctx, AgentRun{TicketID: tk.ID, Role: pipeline.RoleWriter, Harness: "other", Round: 1, State: pipeline.AgentQueued})
			if err != nil || created || again.ID != w.ID || again.Harness != "our-writer" {
				t.Errorf("writer round 1 again = %+v, %t, %v; want the first, not created", again, created, err)
			}
			im, _, err := tx.CreateAgentRun(ctx, AgentRun{TicketID: tk.ID, Role: pipeline.RoleImplementer, Harness: "codex", Round: 1, Digest: "sha256:aa",
				VersionNumber: 1, State: pipeline.AgentQueued, Warnings: json.RawMessage(`["not independent"]`)})
			if err != nil {
				return err
			}
			im.State, im.Outcome, im.HeadSHA, im.PRNumber = pipeline.AgentCompleted, pipeline.OutcomeContaminated, "c0ffee", 13
			im.Duration, im.Summary, im.ExitCode = 1500*time.Millisecond, "# done\n", 0
			im.Egress = json.RawMessage(`[{"host":"api.openai.com:443","allowed":true}]`)
			im.Sightings = json.RawMessage(`[{"hidden_file":"tests/test_x.py","where":"stdout"}]`)
			im.StartedAt, im.FinishedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)
			if err := tx.UpdateAgentRun(ctx, im); err != nil {
				return err
			}
			got, err := tx.AgentRun(ctx, im.ID)
			if err != nil {
				return err
			}
			var sightings []map[string]string
			if err := json.Unmarshal(got.Sightings, &sightings); err != nil || len(sightings) != 1 || sightings[0]["where"] != "stdout" {
				t.Errorf("sightings %s: %v", got.Sightings, err)
			}
			if got.ID != im.ID || got.Outcome != pipeline.OutcomeContaminated || got.PRNumber != 13 || got.Duration != 1500*time.Millisecond ||
				got.Summary != "# done\n" || !got.FinishedAt.Equal(im.FinishedAt) || string(got.Warnings) == "[]" {
				t.Errorf("implementer run = %+v", got)
			}
			all, err := tx.AgentRuns(ctx, tk.ID)
			if err != nil || len(all) != 2 || all[0].ID != w.ID || all[1].ID != im.ID {
				t.Errorf("runs = %+v, %v", all, err)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

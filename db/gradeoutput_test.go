package db

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/pipeline"
)

// hiddenBody is a line of a hidden test as pytest quotes it in a failing
// run's output.
const hiddenBody = "assert total([1, 2]) == 3  # hidden-body-7f3a"

// TestGradeOutputKeptApart: a grade's report as anyone who reads the
// repository may see it (GradeReport, and the grades.report column) holds
// no runner output and no parametrized case's real name, which quote the
// hidden tests; the requester's copy (GradeReportForRequester) has them.
// A grade whose row is read by the wrong code path, or by whoever reads
// the report column, learns counts, ids and outcomes only.
func TestGradeOutputKeptApart(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		full := `{"verdict":"fail","counts":{"passed":1,"failed":1,"total":2},"failed":["test_t.py::test_sum"],` +
			`"output":"E       ` + hiddenBody + `","output_truncated":true,"case_names":{"test_t.py::test_x[case-1]":"test_t.py::test_x[` + hiddenBody + `]"}}`
		var id int64
		err := d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}); err != nil {
				return err
			}
			tk, _, err := tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "dev", BaseSHA: "b1", State: "writing", Label: "test-first"})
			if err != nil {
				return err
			}
			g, _, err := tx.CreateGrade(ctx, Grade{TicketID: tk.ID, PRNumber: 5, HeadSHA: "h1", Digest: "sha256:aa", VersionNumber: 1, InstallationID: 7, State: pipeline.GradeQueued})
			if err != nil {
				return err
			}
			id = g.ID
			return tx.SetGradeReport(ctx, g.ID, json.RawMessage(full))
		})
		if err != nil {
			t.Fatal(err)
		}
		err = d.Tx(ctx, func(tx *Tx) error {
			shared, err := tx.GradeReport(ctx, id)
			if err != nil {
				return err
			}
			if strings.Contains(string(shared), "hidden-body-7f3a") {
				t.Errorf("GradeReport quotes the hidden test: %s", shared)
			}
			var r struct {
				Verdict string         `json:"verdict"`
				Failed  []string       `json:"failed"`
				Counts  map[string]int `json:"counts"`
			}
			if err := json.Unmarshal(shared, &r); err != nil || r.Verdict != "fail" || len(r.Failed) != 1 || r.Counts["total"] != 2 {
				t.Errorf("GradeReport = %s (%v); want the verdict, the failed ids and the counts kept", shared, err)
			}
			var column string
			if err := tx.q.queryRow(ctx, "SELECT CAST(report AS TEXT) FROM grades WHERE id = $1", id).Scan(&column); err != nil {
				return err
			}
			if strings.Contains(column, "hidden-body-7f3a") {
				t.Errorf("grades.report quotes the hidden test: %s", column)
			}
			requesters, err := tx.GradeReportForRequester(ctx, id)
			if err != nil {
				return err
			}
			var want, got map[string]any
			if err := json.Unmarshal([]byte(full), &want); err != nil {
				return err
			}
			if err := json.Unmarshal(requesters, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("GradeReportForRequester = %s (%v); want the whole report back:\n%s", requesters, err, full)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		// A report kept whole before the split (an older version wrote
		// it) is moved apart by the migration.
		ms, err := migrations(d.Engine())
		if err != nil {
			t.Fatal(err)
		}
		var move []string
		for _, m := range ms {
			if m.name != "grade_output" {
				continue
			}
			for _, stmt := range strings.Split(m.sql, ";\n") {
				var code []string
				for _, l := range strings.Split(stmt, "\n") {
					if !strings.HasPrefix(strings.TrimSpace(l), "--") {
						code = append(code, l)
					}
				}
				if c := strings.TrimSpace(strings.Join(code, "\n")); strings.HasPrefix(c, "UPDATE") {
					move = append(move, c)
				}
			}
		}
		if len(move) != 2 {
			t.Fatalf("migration grade_output: %d UPDATE statements, want 2 (grades, grade_attempts)", len(move))
		}
		err = d.Tx(ctx, func(tx *Tx) error {
			if _, err := tx.q.exec(ctx, "UPDATE grades SET report = $2, requester_only = NULL WHERE id = $1", id, full); err != nil {
				return err
			}
			for _, stmt := range move {
				if _, err := tx.q.exec(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w", stmt, err)
				}
			}
			shared, err := tx.GradeReport(ctx, id)
			if err != nil {
				return err
			}
			if strings.Contains(string(shared), "hidden-body-7f3a") || !strings.Contains(string(shared), "test_t.py::test_sum") {
				t.Errorf("after the migration, GradeReport = %s; want the ids without the hidden test", shared)
			}
			requesters, err := tx.GradeReportForRequester(ctx, id)
			if err != nil {
				return err
			}
			var want, got map[string]any
			json.Unmarshal([]byte(full), &want)
			if err := json.Unmarshal(requesters, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("after the migration, GradeReportForRequester = %s (%v); want the whole report back", requesters, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

package db

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPipelineQueries walks one ticket through the tables on each engine.
func TestPipelineQueries(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		var ticket Ticket
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(d.Tx(ctx, func(tx *Tx) error {
			if err := tx.UpsertInstallation(ctx, Installation{ID: 7, AccountLogin: "octo", AccountType: "Organization"}); err != nil {
				return err
			}
			if err := tx.SetInstallationSuspended(ctx, 7, time.Now()); err != nil {
				return err
			}
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app", DefaultBranch: "main"}); err != nil {
				return err
			}
			// Refreshing without a default branch keeps the known one.
			if err := tx.UpsertRepository(ctx, Repository{ID: 100, InstallationID: 7, Owner: "octo", Name: "app"}); err != nil {
				return err
			}
			var created bool
			var err error
			ticket, created, err = tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "dev", BaseSHA: "b1", State: "writing", Label: "test-first"})
			if err != nil || !created {
				t.Fatalf("OpenTicket = %v, %v; want created", created, err)
			}
			again, created, err := tx.OpenTicket(ctx, Ticket{RepositoryID: 100, IssueNumber: 12, Requester: "other", BaseSHA: "b2", State: "writing", Label: "test-first"})
			if err != nil || created || again.ID != ticket.ID || again.BaseSHA != "b1" {
				t.Fatalf("OpenTicket again = %+v, %v, %v; want the first ticket unchanged", again, created, err)
			}
			return tx.AppendAudit(ctx, AuditEvent{Actor: "dev", TicketID: ticket.ID, Kind: "ticket.opened", Detail: json.RawMessage(`{"issue":12}`)})
		}))

		must(d.Tx(ctx, func(tx *Tx) error {
			in, err := tx.Installation(ctx, 7)
			if err != nil || in.SuspendedAt.IsZero() || in.AccountLogin != "octo" {
				t.Errorf("Installation = %+v, %v; want suspended octo", in, err)
			}
			r, err := tx.Repository(ctx, 100)
			if err != nil || r.DefaultBranch != "main" {
				t.Errorf("Repository = %+v, %v; want default branch main", r, err)
			}
			if _, err := tx.Ticket(ctx, 999); !errors.Is(err, ErrNotFound) {
				t.Errorf("Ticket(999) = %v, want ErrNotFound", err)
			}
			v1, err := tx.AddVersion(ctx, Version{TicketID: ticket.ID, Digest: "sha256:aa", State: "awaiting_approval", Author: "writer"})
			if err != nil {
				return err
			}
			v2, err := tx.AddVersion(ctx, Version{TicketID: ticket.ID, Digest: "sha256:bb", State: "awaiting_approval", Author: "writer"})
			if err != nil {
				return err
			}
			if v1.Number != 1 || v2.Number != 2 {
				t.Errorf("version numbers %d, %d; want 1, 2", v1.Number, v2.Number)
			}
			if err := tx.SetVersionState(ctx, v1.ID, "rejected"); err != nil {
				return err
			}
			if _, err := tx.Approve(ctx, Approval{VersionID: v2.ID, ApprovedBy: "dev", Digest: "sha256:aa"}); !errors.Is(err, ErrDigestMismatch) {
				t.Errorf("Approve with the wrong digest = %v, want ErrDigestMismatch", err)
			}
			if _, err := tx.Approve(ctx, Approval{VersionID: v2.ID, ApprovedBy: "dev", Digest: "sha256:bb"}); err != nil {
				return err
			}
			vs, err := tx.Versions(ctx, ticket.ID)
			if err != nil {
				return err
			}
			if len(vs) != 2 || vs[0].State != "rejected" || vs[1].Digest != "sha256:bb" {
				t.Errorf("Versions = %+v", vs)
			}
			return tx.SetTicketState(ctx, ticket.ID, "approved")
		}))

		must(d.Tx(ctx, func(tx *Tx) error {
			g, created, err := tx.CreateGrade(ctx, Grade{TicketID: ticket.ID, PRNumber: 5, HeadSHA: "h1", Digest: "sha256:bb", State: "queued"})
			if err != nil || !created {
				t.Fatalf("CreateGrade = %v, %v; want created", created, err)
			}
			if _, created, err := tx.CreateGrade(ctx, Grade{TicketID: ticket.ID, PRNumber: 5, HeadSHA: "h1", Digest: "sha256:bb", State: "queued"}); err != nil || created {
				t.Errorf("CreateGrade again = %v, %v; want the existing grade", created, err)
			}
			started := time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)
			// The check run: claimed once, then recorded; a stale copy of
			// the grade cannot undo it.
			if ok, err := tx.ClaimCheckRun(ctx, g.ID); err != nil || !ok {
				t.Fatalf("ClaimCheckRun = %v, %v; want claimed", ok, err)
			}
			if ok, err := tx.ClaimCheckRun(ctx, g.ID); err != nil || ok {
				t.Fatalf("ClaimCheckRun again = %v, %v; want refused", ok, err)
			}
			if err := tx.SetCheckRun(ctx, g.ID, 99); err != nil {
				return err
			}
			g.State, g.Verdict, g.Trust = "completed", "fail", "isolated"
			g.Total, g.Passed, g.Failed = 14, 12, 2
			g.StartedAt, g.FinishedAt = started, started.Add(3*time.Second)
			if err := tx.UpdateGrade(ctx, g); err != nil {
				return err
			}
			g.CheckRunID = 99
			got, err := tx.Grade(ctx, g.ID)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(g, got); diff != "" {
				t.Errorf("Grade after UpdateGrade (-want +got):\n%s", diff)
			}
			done, err := tx.GradesInState(ctx, "completed")
			if err != nil || len(done) != 1 {
				t.Errorf("GradesInState(completed) = %d grades, %v; want 1", len(done), err)
			}
			tk, err := tx.Ticket(ctx, ticket.ID)
			if err != nil || tk.State != "approved" {
				t.Errorf("Ticket = %+v, %v; want approved", tk, err)
			}
			log, err := tx.AuditLog(ctx, ticket.ID)
			if err != nil {
				return err
			}
			if len(log) != 1 || log[0].Kind != "ticket.opened" || log[0].TicketID != ticket.ID {
				t.Fatalf("AuditLog = %+v", log)
			}
			var detail map[string]int
			if err := json.Unmarshal(log[0].Detail, &detail); err != nil || detail["issue"] != 12 {
				t.Errorf("audit detail = %s, %v", log[0].Detail, err)
			}
			if err := tx.AppendAudit(ctx, AuditEvent{Actor: "x", Kind: "bad", Detail: json.RawMessage("{")}); err == nil {
				t.Error("AppendAudit with invalid JSON: nil error")
			}
			return tx.DeleteInstallation(ctx, 7, time.Now())
		}))
	})
}

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"mysql://u:secret@h/db", []string{"unknown scheme", "TESTFIRST_DATABASE_URL"}},
		{"just-a-path.db", []string{"not a URL", "TESTFIRST_DATABASE_URL"}},
		{"sqlite://", []string{"names no file"}},
		{"postgres://u:secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", []string{"127.0.0.1:1", "start PostgreSQL", "TESTFIRST_DATABASE_URL"}},
	} {
		d, err := Open(ctx, tc.url)
		if err == nil {
			_ = d.Close()
			t.Errorf("Open(%q): nil error", tc.url)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%q) = %q, want it to mention %q", tc.url, err, w)
			}
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) = %q leaks the password", tc.url, err)
		}
	}
}

func TestSQLiteSettings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	d, err := Open(t.Context(), "sqlite://./var/nested/testfirst.db")
	if err != nil {
		t.Fatalf("Open relative path: %v", err)
	}
	defer d.Close()
	if d.Engine() != SQLite {
		t.Fatalf("Engine = %s", d.Engine())
	}
	for pragma, want := range map[string]string{
		"journal_mode":       "wal",
		"synchronous":        "1", // NORMAL
		"foreign_keys":       "1",
		"busy_timeout":       "10000",
		"wal_autocheckpoint": "10000",
	} {
		var got string
		if err := d.eng.querier().queryRow(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if !strings.EqualFold(got, want) {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	if n := d.eng.(*sqliteEngine).db.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("SQLite pool allows %d connections, want 1", n)
	}
}

// TestMigrationsMatch keeps both engines' migration folders in step.
func TestMigrationsMatch(t *testing.T) {
	names := func(e Engine) []string {
		ms, err := migrations(e)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.name)
		}
		return out
	}
	if diff := cmp.Diff(names(SQLite), names(Postgres)); diff != "" {
		t.Errorf("migrations differ between engines (-sqlite +postgres):\n%s", diff)
	}
}

package db

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEvent is one entry of the audit log: who did what to which ticket.
type AuditEvent struct {
	ID       int64
	At       time.Time
	Actor    string // GitHub login, or "testfirst" for the app itself
	TicketID int64  // 0 when the event concerns no ticket
	Kind     string // e.g. ticket.opened, version.approved, grade.completed
	Detail   json.RawMessage
}

// AppendAudit writes an audit event; At defaults to now and Detail to {}.
// It fails when Detail is not valid JSON.
func (t *Tx) AppendAudit(ctx context.Context, e AuditEvent) error {
	if e.At.IsZero() {
		e.At = now()
	}
	detail := "{}"
	if len(e.Detail) > 0 {
		if !json.Valid(e.Detail) {
			return fmt.Errorf("append audit %s: detail is not valid JSON", e.Kind)
		}
		detail = string(e.Detail)
	}
	var ticket any
	if e.TicketID != 0 {
		ticket = e.TicketID
	}
	if _, err := t.q.exec(ctx, "INSERT INTO audit_events (at, actor, ticket_id, kind, detail) VALUES ($1, $2, $3, $4, $5)",
		t.dia.time(e.At), e.Actor, ticket, e.Kind, detail); err != nil {
		return fmt.Errorf("append audit %s: %w", e.Kind, err)
	}
	return nil
}

// AuditLog lists a ticket's audit events in the order they were written.
func (t *Tx) AuditLog(ctx context.Context, ticketID int64) ([]AuditEvent, error) {
	return t.auditEvents(ctx, fmt.Sprintf("read audit log of ticket %d", ticketID),
		"SELECT id, at, actor, ticket_id, kind, detail FROM audit_events WHERE ticket_id = $1 ORDER BY id", ticketID)
}

// auditEvents runs query, which selects id, at, actor, ticket_id, kind
// and detail, and returns its events; errors say what was being read.
func (t *Tx) auditEvents(ctx context.Context, what, query string, args ...any) ([]AuditEvent, error) {
	rs, err := t.q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rs.Close()
	var es []AuditEvent
	for rs.Next() {
		var (
			e      AuditEvent
			ticket *int64
			detail string
		)
		if err := rs.Scan(&e.ID, timeCol{&e.At}, &e.Actor, &ticket, &e.Kind, &detail); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if ticket != nil {
			e.TicketID = *ticket
		}
		e.Detail = json.RawMessage(detail)
		es = append(es, e)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return es, nil
}

// RecentAudit lists the newest limit audit events of kind, newest first.
func (t *Tx) RecentAudit(ctx context.Context, kind string, limit int) ([]AuditEvent, error) {
	return t.auditEvents(ctx, "read recent "+kind+" events",
		"SELECT id, at, actor, ticket_id, kind, detail FROM audit_events WHERE kind = $1 ORDER BY id DESC LIMIT $2", kind, limit)
}

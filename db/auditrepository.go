package db

import (
	"context"
	"encoding/json"
	"fmt"
)

// RepositoryAuditLog lists the audit events of every ticket of a
// repository, in the order they were written, with each event's ticket's
// issue number.
func (t *Tx) RepositoryAuditLog(ctx context.Context, repositoryID int64) ([]AuditEvent, map[int64]int, error) {
	rs, err := t.q.query(ctx, `SELECT a.id, a.at, a.actor, a.ticket_id, a.kind, a.detail, k.issue_number
FROM audit_events a JOIN tickets k ON a.ticket_id = k.id WHERE k.repository_id = $1 ORDER BY a.id`, repositoryID)
	if err != nil {
		return nil, nil, fmt.Errorf("read audit log of repository %d: %w", repositoryID, err)
	}
	defer rs.Close()
	var es []AuditEvent
	issues := map[int64]int{}
	for rs.Next() {
		var (
			e      AuditEvent
			detail string
			issue  int
		)
		if err := rs.Scan(&e.ID, timeCol{&e.At}, &e.Actor, &e.TicketID, &e.Kind, &detail, &issue); err != nil {
			return nil, nil, fmt.Errorf("read audit log of repository %d: %w", repositoryID, err)
		}
		e.Detail = json.RawMessage(detail)
		issues[e.TicketID] = issue
		es = append(es, e)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("read audit log of repository %d: %w", repositoryID, err)
	}
	return es, issues, nil
}

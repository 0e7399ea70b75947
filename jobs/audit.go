package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/testfirst-app/testfirst/db"
)

// audit appends an audit event with a JSON detail.
func audit(ctx context.Context, tx *db.Tx, actor string, ticket int64, kind string, detail map[string]any) error {
	data, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit %s: %w", kind, err)
	}
	return tx.AppendAudit(ctx, db.AuditEvent{Actor: actor, TicketID: ticket, Kind: kind, Detail: data})
}

package db

import (
	"context"
	"fmt"
	"time"
)

// EndSession records that the card's sign-in id ended (signed out) before
// until, when its cookie expires, and drops the records of sign-ins whose
// cookies have expired since.
func (t *Tx) EndSession(ctx context.Context, id string, until time.Time) error {
	if _, err := t.q.exec(ctx, "DELETE FROM ended_sessions WHERE expires_at < $1", t.dia.time(now())); err != nil {
		return fmt.Errorf("drop expired ended sessions: %w", err)
	}
	if _, err := t.q.exec(ctx, "INSERT INTO ended_sessions (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", id, t.dia.time(until)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// SessionEnded reports whether the card's sign-in id ended.
func (t *Tx) SessionEnded(ctx context.Context, id string) (bool, error) {
	var n int
	if err := t.q.queryRow(ctx, "SELECT COUNT(*) FROM ended_sessions WHERE id = $1", id).Scan(&n); err != nil {
		return false, fmt.Errorf("read ended sessions: %w", err)
	}
	return n > 0, nil
}

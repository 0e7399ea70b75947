package db

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DeliveryRetention is how long delivery records must at least be kept:
// GitHub redelivers for up to three days, and a redelivery must still be
// recognised. PruneDeliveries refuses a cutoff younger than this.
const DeliveryRetention = 72 * time.Hour

// Delivery is one webhook delivery as GitHub identified it.
type Delivery struct {
	ID           string // X-GitHub-Delivery
	Event        string // X-GitHub-Event
	Action       string // payload "action", empty when the event has none
	Installation int64  // payload installation.id, 0 when absent
	ReceivedAt   time.Time
	// Payload is the body as GitHub signed it, kept for the delivery's job
	// (see DeliveryPayload); nil for a delivery that needs none.
	Payload []byte
	// PayloadSHA256 is the SHA-256 of the body as signed, of every
	// delivery (see PayloadDigest): a second delivery with the same one is
	// a duplicate whatever its id. Nil records none.
	PayloadSHA256 []byte
}

// PayloadDigest is a body's PayloadSHA256.
func PayloadDigest(body []byte) []byte {
	sum := sha256.Sum256(body)
	return sum[:]
}

// RecordDelivery records d once. duplicate is true when a delivery with the
// same ID, or with the same PayloadSHA256, was already recorded, in which case nothing changes and the caller
// must not enqueue its work again. Pass the transaction that enqueues the
// work so both commit together; a nil tx records it in a transaction of its
// own. It fails when d has no ID or the database fails.
func (d *DB) RecordDelivery(ctx context.Context, tx *Tx, del Delivery) (duplicate bool, err error) {
	if tx != nil {
		return tx.RecordDelivery(ctx, del)
	}
	err = d.Tx(ctx, func(tx *Tx) error {
		duplicate, err = tx.RecordDelivery(ctx, del)
		return err
	})
	return duplicate, err
}

// RecordDelivery is DB.RecordDelivery in this transaction.
func (t *Tx) RecordDelivery(ctx context.Context, del Delivery) (duplicate bool, err error) {
	if del.ID == "" {
		return false, fmt.Errorf("record delivery: empty delivery id")
	}
	n, err := t.q.exec(ctx, `INSERT INTO deliveries (id, event, action, installation_id, received_at, payload, payload_sha256)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT DO NOTHING`, t.deliveryRow(del)...)
	if err != nil {
		return false, fmt.Errorf("record delivery %s: %w", del.ID, err)
	}
	return n == 0, nil
}

// deliveryRow is a delivery's deliveries columns (id, event, action,
// installation_id, received_at, payload, payload_sha256) as query
// arguments: received now unless said, and a NULL payload or digest, not
// an empty blob, when there is none.
func (t *Tx) deliveryRow(del Delivery) []any {
	at := del.ReceivedAt
	if at.IsZero() {
		at = now()
	}
	var payload any
	if del.Payload != nil {
		payload = del.Payload
	}
	var digest any
	if del.PayloadSHA256 != nil {
		digest = del.PayloadSHA256
	}
	return []any{del.ID, del.Event, del.Action, del.Installation, t.dia.time(at), payload, digest}
}

// DeliveryPayload returns the payload recorded with delivery id. It returns
// ErrNotFound, wrapped, when no delivery with that id is recorded (never,
// or pruned) or it was recorded without a payload.
func (d *DB) DeliveryPayload(ctx context.Context, id string) ([]byte, error) {
	var payload []byte
	err := d.eng.querier().queryRow(ctx, "SELECT payload FROM deliveries WHERE id = $1", id).Scan(&payload)
	if err == nil && payload == nil {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read payload of delivery %s: %w", id, err)
	}
	return payload, nil
}

// recordRows bounds the rows of one INSERT in RecordDeliveries: seven bound
// parameters each, well under SQLite's and PostgreSQL's limits.
const recordRows = 1000

// deliveryColumns is how many columns deliveryRow gives.
const deliveryColumns = 7

// RecordDeliveries is RecordDelivery for several deliveries in one
// statement, so a batch pays for one statement, not one per delivery. It
// reports, per delivery, whether it is a duplicate (its id or its
// PayloadSHA256 recorded before); a delivery repeated in dels, by id or by
// digest, is a duplicate from its second time on. It fails when a delivery has
// no ID (before writing anything) or the database fails.
func (t *Tx) RecordDeliveries(ctx context.Context, dels []Delivery) ([]bool, error) {
	for i, del := range dels {
		if del.ID == "" {
			return nil, fmt.Errorf("record deliveries: delivery %d of %d has an empty id", i+1, len(dels))
		}
	}
	dup := make([]bool, len(dels))
	for start := 0; start < len(dels); start += recordRows {
		chunk := dels[start:min(start+recordRows, len(dels))]
		var q strings.Builder
		q.WriteString("INSERT INTO deliveries (id, event, action, installation_id, received_at, payload, payload_sha256) VALUES ")
		args := make([]any, 0, deliveryColumns*len(chunk))
		for i, del := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for j := range deliveryColumns {
				if j > 0 {
					q.WriteString(", ")
				}
				q.WriteString("$" + strconv.Itoa(len(args)+j+1))
			}
			q.WriteString(")")
			args = append(args, t.deliveryRow(del)...)
		}
		// No conflict target: a row whose id or digest is recorded
		// already is skipped, and so is one repeating an earlier row of
		// this statement (SQLite and PostgreSQL both check each row
		// against those inserted before it).
		q.WriteString(" ON CONFLICT DO NOTHING RETURNING id")
		inserted, err := t.insertedIDs(ctx, q.String(), args)
		if err != nil {
			return nil, fmt.Errorf("record %d deliveries: %w", len(chunk), err)
		}
		for i, del := range chunk {
			dup[start+i] = !inserted[del.ID]
			delete(inserted, del.ID) // a repeat in the batch is a duplicate
		}
	}
	return dup, nil
}

// insertedIDs runs an INSERT … RETURNING id and collects the ids.
func (t *Tx) insertedIDs(ctx context.Context, query string, args []any) (map[string]bool, error) {
	rs, err := t.q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	ids := make(map[string]bool)
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rs.Err()
}

// PruneDeliveries deletes delivery records received before olderThan, their
// payloads with them, and returns how many it deleted. A delivery job that
// is still retrying then can no longer read its payload. olderThan must be at least DeliveryRetention
// in the past, so a redelivery is never taken for a new delivery.
func (d *DB) PruneDeliveries(ctx context.Context, olderThan time.Time) (int64, error) {
	if limit := now().Add(-DeliveryRetention); olderThan.After(limit) {
		return 0, fmt.Errorf("prune deliveries: cutoff %s is less than %s ago: delivery records must be kept at least that long",
			olderThan.UTC().Format(time.RFC3339), DeliveryRetention)
	}
	n, err := d.eng.querier().exec(ctx, "DELETE FROM deliveries WHERE received_at < $1", d.eng.dialect().time(olderThan))
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	return n, nil
}

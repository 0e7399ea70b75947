package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// recordedBatch bounds how many ids one RecordedDeliveries query asks about,
// well under SQLite's limit on bound parameters.
const recordedBatch = 500

// RecordedDeliveries reports which of the delivery ids (X-GitHub-Delivery)
// are recorded: the returned set holds those that are. Duplicate and empty
// ids are allowed. It fails only when the database fails.
func (d *DB) RecordedDeliveries(ctx context.Context, ids []string) (map[string]bool, error) {
	recorded := make(map[string]bool)
	q := d.eng.querier()
	for start := 0; start < len(ids); start += recordedBatch {
		batch := ids[start:min(start+recordedBatch, len(ids))]
		marks := make([]string, len(batch))
		args := make([]any, len(batch))
		for i, id := range batch {
			marks[i] = "$" + strconv.Itoa(i+1)
			args[i] = id
		}
		rs, err := q.query(ctx, "SELECT id FROM deliveries WHERE id IN ("+strings.Join(marks, ", ")+")", args...)
		if err != nil {
			return nil, fmt.Errorf("look up %d delivery ids: %w", len(batch), err)
		}
		for rs.Next() {
			var id string
			if err := rs.Scan(&id); err != nil {
				rs.Close()
				return nil, fmt.Errorf("look up delivery ids: %w", err)
			}
			recorded[id] = true
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("look up delivery ids: %w", err)
		}
	}
	return recorded, nil
}

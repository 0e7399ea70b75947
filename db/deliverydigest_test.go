package db

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRecordDeliveryDigest: a body recorded before is a duplicate under a
// new delivery id, alone or in a batch, and so is a body repeated within
// one batch; deliveries recorded without a digest never collide.
func TestRecordDeliveryDigest(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		body := []byte(`{"action":"labeled"}`)
		if dup, err := d.RecordDelivery(ctx, nil, Delivery{ID: "first", Event: "issues", PayloadSHA256: PayloadDigest(body)}); err != nil || dup {
			t.Fatalf("first: duplicate %v, %v", dup, err)
		}
		if dup, err := d.RecordDelivery(ctx, nil, Delivery{ID: "replayed", Event: "issues", PayloadSHA256: PayloadDigest(body)}); err != nil || !dup {
			t.Fatalf("the same body under a new id: duplicate %v, %v; want a duplicate", dup, err)
		}
		other := []byte(`{"action":"unlabeled"}`)
		batch := []Delivery{
			{ID: "replayed-again", Event: "issues", PayloadSHA256: PayloadDigest(body)},
			{ID: "new", Event: "issues", PayloadSHA256: PayloadDigest(other)},
			{ID: "new-replayed", Event: "issues", PayloadSHA256: PayloadDigest(other)},
			{ID: "no-digest-1", Event: "ping"},
			{ID: "no-digest-2", Event: "ping"},
		}
		var dup []bool
		if err := d.Tx(ctx, func(tx *Tx) error {
			var err error
			dup, err = tx.RecordDeliveries(ctx, batch)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]bool{true, false, true, false, false}, dup); diff != "" {
			t.Errorf("duplicates (-want +got):\n%s", diff)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries"); n != 4 {
			t.Errorf("deliveries has %d rows, want 4", n)
		}
	})
}

package db

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRecordedDeliveries(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		// More recorded ids than one query asks about, so batching shows.
		var ids []string
		want := map[string]bool{}
		for i := range recordedBatch + 3 {
			id := fmt.Sprintf("rec-%04d", i)
			ids = append(ids, id)
			if i%2 == 0 {
				if _, err := d.RecordDelivery(ctx, nil, Delivery{ID: id, Event: "ping"}); err != nil {
					t.Fatal(err)
				}
				want[id] = true
			}
		}
		ids = append(ids, "", "rec-0000", "never-seen")
		got, err := d.RecordedDeliveries(ctx, ids)
		if err != nil {
			t.Fatalf("RecordedDeliveries: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RecordedDeliveries (-want +got):\n%s", diff)
		}
		if got, err := d.RecordedDeliveries(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("RecordedDeliveries(nil) = %v, %v; want empty, nil", got, err)
		}
	})
}

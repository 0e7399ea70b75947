package jobs

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
)

// TestDeliveryJobCarriesNoPayload records a delivery that needs a job on
// each engine and checks that the job's args hold no payload, that
// DeliveryWorker.payload reads it back byte for byte, and that a delivery
// no longer recorded cancels its job with an error naming it.
func TestDeliveryJobCarriesNoPayload(t *testing.T) {
	urls := map[string]string{"sqlite": ""}
	if u := os.Getenv("TESTFIRST_TEST_POSTGRES_URL"); u != "" {
		urls["postgres"] = u
	}
	fixture, err := os.ReadFile(filepath.Join(webhookFixtures, "installation_repositories", "added.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if url == "" {
				url = "sqlite://" + filepath.Join(t.TempDir(), "testfirst.db")
			}
			d, err := db.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			if err := d.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			id := runID() + "-slim"
			// The body is this run's own: the PostgreSQL database is
			// shared between runs, and the intake takes a body it has
			// recorded for a duplicate whatever the delivery id.
			body := append([]byte(`{"test_delivery":"`+id+`",`), bytes.TrimLeft(fixture, " \t\r\n")[1:]...)
			if dup, err := NewIntake(d).Accept(ctx, github.Delivery{ID: id, Event: "installation_repositories", Action: "added", Installation: 957387, Handled: true, Payload: body}); err != nil || dup {
				t.Fatalf("Accept = %v, %v", dup, err)
			}
			jobs, err := d.NewJobClient(river.NewWorkers(), nil)
			if err != nil {
				t.Fatal(err)
			}
			list, err := jobs.JobList(ctx, river.NewJobListParams().Kinds(DeliveryArgs{}.Kind()).OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(10))
			if err != nil {
				t.Fatal(err)
			}
			var args []byte
			for _, j := range list.Jobs {
				if bytes.Contains(j.EncodedArgs, []byte(id)) {
					args = j.EncodedArgs
				}
			}
			if args == nil {
				t.Fatalf("no job for delivery %s", id)
			}
			if bytes.Contains(args, []byte("payload")) || len(args) > 200 {
				t.Errorf("job args carry more than the delivery's headers: %s", args)
			}

			w := &DeliveryWorker{db: d, log: slog.New(slog.DiscardHandler)}
			got, err := w.payload(ctx, DeliveryArgs{Delivery: id, Event: "installation_repositories", Action: "added"})
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("payload of %s = %d bytes, %v; want the %d bytes as signed", id, len(got), err, len(body))
			}
			// A job enqueued before payloads moved out of the args.
			inline := []byte(`{"action":"added"}`)
			if got, err := w.payload(ctx, DeliveryArgs{Delivery: "never-recorded", Payload: inline}); err != nil || !bytes.Equal(got, inline) {
				t.Errorf("inline payload = %s, %v; want it unchanged", got, err)
			}
			_, err = w.payload(ctx, DeliveryArgs{Delivery: "never-recorded"})
			var cancel *river.JobCancelError
			if !errors.As(err, &cancel) || !errors.Is(err, db.ErrNotFound) || !strings.Contains(err.Error(), "never-recorded") {
				t.Errorf("payload of an unrecorded delivery: %v; want a job cancel naming it", err)
			}
		})
	}
}

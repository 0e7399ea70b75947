package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// redeliverSetup starts the fake GitHub and a migrated SQLite database, and
// returns a sweep over both whose log lines land in the returned buffer.
func redeliverSetup(t *testing.T) (*fakegithub.Server, *db.DB, *RedeliverWorker, *bytes.Buffer) {
	t.Helper()
	s := fakegithub.New(t)
	clients, d := testkit.Clients(t, s), testkit.DB(t)
	var logs bytes.Buffer
	w := NewRedeliverWorker(d, clients, slog.New(slog.NewJSONHandler(&logs, nil)))
	return s, d, w, &logs
}

func sweepJob() *river.Job[RedeliverArgs] {
	return &river.Job[RedeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, Kind: RedeliverArgs{}.Kind()}}
}

func TestRedeliverSweep(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	failed := func(guid string, at time.Time) fakegithub.Delivery {
		return fakegithub.Delivery{GUID: guid, Event: "issues", Action: "labeled", InstallationID: 77,
			StatusCode: 502, Status: "Invalid HTTP Response: 502", DeliveredAt: at}
	}
	ok := func(guid string, at time.Time) fakegithub.Delivery {
		return fakegithub.Delivery{GUID: guid, Event: "issues", Action: "labeled", InstallationID: 77,
			StatusCode: 202, Status: "OK", DeliveredAt: at}
	}
	timedOut := func(guid string, at time.Time) fakegithub.Delivery {
		return fakegithub.Delivery{GUID: guid, Event: "pull_request", Action: "opened", InstallationID: 78,
			Status: "timed out", DeliveredAt: at}
	}
	redelivery := func(d fakegithub.Delivery) fakegithub.Delivery { d.Redelivery = true; return d }

	for _, tc := range []struct {
		name       string
		log        []fakegithub.Delivery // oldest first
		recorded   []string
		want       []int // indexes into log of the attempts redelivered, in order
		wantLogged []string
	}{
		{
			name:       "failed and unrecorded is redelivered once",
			log:        []fakegithub.Delivery{failed("a", ago(time.Hour))},
			want:       []int{0},
			wantLogged: []string{"a"},
		},
		{
			name: "no answer at all counts as failed",
			log:  []fakegithub.Delivery{timedOut("t", ago(time.Hour))},
			want: []int{0}, wantLogged: []string{"t"},
		},
		{
			name:     "failed but recorded is not",
			log:      []fakegithub.Delivery{failed("a", ago(time.Hour))},
			recorded: []string{"a"},
		},
		{
			name: "failed with a later successful redelivery is not",
			log:  []fakegithub.Delivery{failed("a", ago(2*time.Hour)), redelivery(ok("a", ago(time.Hour)))},
		},
		{
			name: "successful is not",
			log:  []fakegithub.Delivery{ok("a", ago(time.Hour))},
		},
		{
			name: "older than the window is not",
			log:  []fakegithub.Delivery{failed("old", ago(db.DeliveryRetention+time.Minute)), failed("young", ago(db.DeliveryRetention-time.Minute))},
			want: []int{1}, wantLogged: []string{"young"},
		},
		{
			name: "several failed attempts of one delivery: the newest is redelivered, once",
			log:  []fakegithub.Delivery{failed("a", ago(3*time.Hour)), redelivery(failed("a", ago(2*time.Hour))), failed("b", ago(time.Hour))},
			want: []int{2, 1}, wantLogged: []string{"b", "a"},
		},
		{
			name: "a mix",
			log: []fakegithub.Delivery{
				failed("rec", ago(5*time.Hour)),
				failed("fixed", ago(4*time.Hour)),
				ok("fine", ago(3*time.Hour)),
				failed("lost", ago(2*time.Hour)),
				redelivery(ok("fixed", ago(time.Hour))),
			},
			recorded: []string{"rec", "fine"},
			want:     []int{3}, wantLogged: []string{"lost"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, d, w, logs := redeliverSetup(t)
			ctx := t.Context()
			ids := make([]int64, len(tc.log))
			for i, del := range tc.log {
				ids[i] = s.AddDelivery(del)
			}
			for _, guid := range tc.recorded {
				if _, err := d.RecordDelivery(ctx, nil, db.Delivery{ID: guid, Event: "issues"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Work(ctx, sweepJob()); err != nil {
				t.Fatalf("Work: %v", err)
			}
			var want []int64
			for _, i := range tc.want {
				want = append(want, ids[i])
			}
			if diff := cmp.Diff(want, s.Redeliveries()); diff != "" {
				t.Errorf("redeliveries (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLogged, loggedDeliveries(t, logs)); diff != "" {
				t.Errorf("logged redeliveries (-want +got):\n%s", diff)
			}
		})
	}
}

// loggedDeliveries returns the delivery key of each "asked GitHub to
// redeliver" log line, checking it also names the installation.
func loggedDeliveries(t *testing.T, logs *bytes.Buffer) []string {
	t.Helper()
	var out []string
	dec := json.NewDecoder(bytes.NewReader(logs.Bytes()))
	for dec.More() {
		var line struct {
			Msg          string `json:"msg"`
			Delivery     string `json:"delivery"`
			Installation *int64 `json:"installation"`
		}
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("log line: %v", err)
		}
		if line.Msg != "asked GitHub to redeliver a failed delivery" {
			continue
		}
		if line.Installation == nil || *line.Installation == 0 {
			t.Errorf("log line for %s has no installation", line.Delivery)
		}
		out = append(out, line.Delivery)
	}
	return out
}

// TestRedeliverSweepPrunes: the sweep deletes delivery records older than
// GitHub's redelivery window plus a day, and keeps younger ones.
func TestRedeliverSweepPrunes(t *testing.T) {
	_, d, w, _ := redeliverSetup(t)
	ctx := t.Context()
	now := time.Now().UTC()
	for id, age := range map[string]time.Duration{"old": 97 * time.Hour, "kept": 95 * time.Hour, "new": time.Minute} {
		if _, err := d.RecordDelivery(ctx, nil, db.Delivery{ID: id, Event: "issues", ReceivedAt: now.Add(-age)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Work(ctx, sweepJob()); err != nil {
		t.Fatal(err)
	}
	got, err := d.RecordedDeliveries(ctx, []string{"old", "kept", "new"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"kept": true, "new": true}, got); diff != "" {
		t.Errorf("recorded after the sweep (-want +got):\n%s", diff)
	}
}

func TestRedeliverSweepPaginates(t *testing.T) {
	s, _, w, _ := redeliverSetup(t)
	start := time.Now().Add(-48 * time.Hour)
	var want []int64
	for i := range 250 {
		d := fakegithub.Delivery{GUID: fmt.Sprintf("g-%d", i), Event: "issues", Action: "labeled", InstallationID: 77,
			StatusCode: 500, DeliveredAt: start.Add(time.Duration(i) * time.Minute)}
		if i%5 == 0 {
			d.StatusCode = 200
		}
		id := s.AddDelivery(d)
		if i%5 != 0 {
			want = append([]int64{id}, want...)
		}
	}
	if err := w.Work(t.Context(), sweepJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	if diff := cmp.Diff(want, s.Redeliveries()); diff != "" {
		t.Errorf("redeliveries (-want +got):\n%s", diff)
	}
	pages := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet && r.Path == "/app/hook/deliveries" {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("listed %d pages, want 3", pages)
	}
}

func TestRedeliverSweepGitHubErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		method    string
		path      string
		status    int
		retryable bool
		// redelivered is how many attempts were redelivered before the
		// failure stopped the sweep.
		redelivered int
		// times is how often the fault is answered: a read is tried
		// again inside the call, so its 502 must outlast every attempt.
		times int
	}{
		{"list 502", http.MethodGet, "/app/hook/deliveries", http.StatusBadGateway, true, 0, github.DefaultRetryAttempts},
		{"list 401", http.MethodGet, "/app/hook/deliveries", http.StatusUnauthorized, false, 0, 1},
		{"redeliver 502", http.MethodPost, "/app/hook/deliveries/", http.StatusBadGateway, true, 0, 1},
		{"redeliver 422", http.MethodPost, "/app/hook/deliveries/", http.StatusUnprocessableEntity, false, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, w, _ := redeliverSetup(t)
			s.AddDelivery(fakegithub.Delivery{GUID: "a", Event: "issues", StatusCode: 502, DeliveredAt: time.Now().Add(-2 * time.Hour)})
			s.AddDelivery(fakegithub.Delivery{GUID: "b", Event: "issues", StatusCode: 502, DeliveredAt: time.Now().Add(-time.Hour)})
			s.FailNextN(tc.times, tc.method, tc.path, tc.status, nil)
			err := w.Work(t.Context(), sweepJob())
			if err == nil {
				t.Fatal("Work: nil error, want the GitHub failure")
			}
			if retry, _ := github.IsRetryable(err); retry != tc.retryable {
				t.Errorf("retryable = %v, want %v: %v", retry, tc.retryable, err)
			}
			if got := len(s.Redeliveries()); got != tc.redelivered {
				t.Errorf("%d redelivered before the failure, want %d", got, tc.redelivered)
			}
			// The next run (River's retry or the next sweep) does the work.
			if err := w.Work(t.Context(), sweepJob()); err != nil {
				t.Fatalf("second Work: %v", err)
			}
			if got := len(s.Redeliveries()); got != tc.redelivered+2 {
				t.Errorf("after the second run %d redelivered, want %d", got, tc.redelivered+2)
			}
		})
	}
}

// TestRedeliverPeriodicJobRuns proves the periodic job is accepted by a real
// River client on SQLite and that its first sweep runs at start.
func TestRedeliverPeriodicJobRuns(t *testing.T) {
	s, d, w, _ := redeliverSetup(t)
	id := s.AddDelivery(fakegithub.Delivery{GUID: "a", Event: "issues", StatusCode: 502, InstallationID: 77})
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	jobs, err := d.NewJobClient(workers, map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		db.WithRiverConfig(func(c *river.Config) {
			c.PeriodicJobs = append(c.PeriodicJobs, RedeliverPeriodicJob(time.Hour))
			c.Logger = slog.New(slog.DiscardHandler)
		}))
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	ctx, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	if err := jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = jobs.Stop(context.Background()) }()
	select {
	case ev := <-events:
		if ev.Kind != river.EventKindJobCompleted || ev.Job.Kind != "redeliver" {
			t.Fatalf("event %s for a %s job (errors %v), want a completed redeliver job", ev.Kind, ev.Job.Kind, ev.Job.Errors)
		}
		if ev.Job.MaxAttempts != redeliverMaxAttempts {
			t.Errorf("MaxAttempts = %d, want %d", ev.Job.MaxAttempts, redeliverMaxAttempts)
		}
	case <-ctx.Done():
		t.Fatal("no redeliver job ran within 30s of start")
	}
	if diff := cmp.Diff([]int64{id}, s.Redeliveries()); diff != "" {
		t.Errorf("redeliveries (-want +got):\n%s", diff)
	}
}

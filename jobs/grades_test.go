package jobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// recordGrades is a grade worker that records the order grades run in.
type recordGrades struct {
	river.WorkerDefaults[GradeArgs]
	mu    sync.Mutex
	order []int64
	done  chan struct{}
	want  int
}

func (r *recordGrades) Work(ctx context.Context, job *river.Job[GradeArgs]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.order = append(r.order, job.Args.Grade)
	if len(r.order) == r.want {
		close(r.done)
	}
	return nil
}

// TestGradesAreFairAcrossInstallations queues a burst of five pull
// requests from one installation, then one from another, and runs them
// with River one at a time: the second installation's grade runs second,
// not sixth. Each grade also gets its in-progress check run at once.
func TestGradesAreFairAcrossInstallations(t *testing.T) {
	ctx := t.Context()
	gh := fakegithub.New(t)
	clients, d := testkit.Clients(t, gh), testkit.DB(t)
	q := &gradeQueue{db: d, publicURL: "https://tf.example", log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	type side struct {
		inst  int64
		owner string
		prs   int
	}
	var want []int64
	gradeOf := map[string]int64{}
	for _, sd := range []side{{1, "busy-org", 5}, {2, "quiet-org", 1}} {
		gh.AddInstallation(sd.inst, sd.owner)
		gh.AddRepo(sd.inst, sd.owner, "app", "main")
		base := gh.Commit(sd.owner, "app", "main", map[string]string{"README.md": "base\n"})
		repo := db.Repository{ID: sd.inst * 100, InstallationID: sd.inst, Owner: sd.owner, Name: "app", DefaultBranch: "main"}
		var tk db.Ticket
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			if err := tx.UpsertRepository(ctx, repo); err != nil {
				return err
			}
			var err error
			tk, _, err = tx.OpenTicket(ctx, db.Ticket{RepositoryID: repo.ID, IssueNumber: 1, Requester: "dev", BaseSHA: base, State: pipeline.TicketApproved, Label: "test-first"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		gi, err := clients.Installation(sd.inst)
		if err != nil {
			t.Fatal(err)
		}
		for pr := 1; pr <= sd.prs; pr++ {
			head := gh.Commit(sd.owner, "app", fmt.Sprintf("pr-%d", pr), map[string]string{"README.md": fmt.Sprintf("change %d\n", pr)})
			v := store.Version{Number: 1, Digest: "sha256:" + fmt.Sprint(sd.inst), State: store.StateApproved}
			if err := q.grade(ctx, gi, repo, tk, pr+1, head, v, false); err != nil {
				t.Fatal(err)
			}
			if err := d.Tx(ctx, func(tx *db.Tx) error {
				g, err := tx.GradeByHead(ctx, head, v.Digest)
				gradeOf[fmt.Sprintf("%s#%d", sd.owner, pr)] = g.ID
				if err == nil && g.CheckRunID == 0 {
					t.Errorf("grade %d has no check run", g.ID)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want = []int64{gradeOf["busy-org#1"], gradeOf["quiet-org#1"], gradeOf["busy-org#2"], gradeOf["busy-org#3"], gradeOf["busy-org#4"], gradeOf["busy-org#5"]}
	for _, r := range gh.CheckRuns("quiet-org", "app") {
		// Queued, at its place: behind busy-org's first grade only.
		if r.Status != "queued" || r.ExternalID != fmt.Sprint(gradeOf["quiet-org#1"]) || !strings.HasPrefix(r.Title, "queued: 1 grade ahead") {
			t.Errorf("quiet-org's check run = %+v; want queued with 1 grade ahead, tied to its grade", r)
		}
	}

	rec := &recordGrades{done: make(chan struct{}), want: len(want)}
	workers := river.NewWorkers()
	river.AddWorker(workers, rec)
	jobs, err := d.NewJobClient(workers, map[string]river.QueueConfig{QueueSandbox: {MaxWorkers: 1}},
		db.WithRiverConfig(func(c *river.Config) { c.FetchPollInterval = 100 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop(context.WithoutCancel(ctx)) })
	select {
	case <-rec.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("ran %v; want all of %v", rec.order, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if fmt.Sprint(rec.order) != fmt.Sprint(want) {
		t.Errorf("grades ran in order %v; want %v (the quiet installation's one second)", rec.order, want)
	}
}

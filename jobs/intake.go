package jobs

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
)

// Group commit: concurrent Accept calls share one transaction. The caller
// that finds no batch gathering leads one: it waits up to groupCommitWindow
// for company (less when the batch fills), then commits every delivery
// gathered meanwhile. Up to the engine's commitsInFlight batches commit at
// once; the leader of the last one allowed keeps leadership while it
// commits, so deliveries arriving meanwhile form the next batch, which the
// first of them leads as soon as that commit ends, without waiting again.
//
// SQLite has one connection: a second batch committing at once would only
// queue for it, so one commits at a time and the next grows meanwhile.
// PostgreSQL commits in parallel on its pool, each commit waiting for its
// own WAL flush, so there two may overlap, leaving the rest of the pool
// (four connections on two cores) to River and the workers. Measured on
// PostgreSQL (10,000 deliveries at concurrency 16, four rounds, builds
// alternating): one at a time 1,945-2,913/s, two 2,151-3,199/s, four
// 2,148-2,529/s.
//
// The window was chosen with testfirst bench intake on SQLite (20,000
// deliveries at concurrency 16, builds alternating on the shared 2-core
// machine): 1 ms gave 1,521-3,036 deliveries/s, 0.5 ms 1,292-3,788, 0
// 1,842-3,213 with a wider p99, 2 ms 1,784-2,585 and 5 ms 1,413-1,643.
// See docs/benchmarks.md.
const (
	groupCommitWindow = time.Millisecond
	groupCommitMax    = 128
	// groupCommitTimeout bounds one batch's transaction. It does not
	// follow any one caller's context, so a client that hangs up cannot
	// fail the deliveries of the others.
	groupCommitTimeout = 10 * time.Second
)

// commitsInFlight is how many batches may commit at once, per engine.
var commitsInFlight = map[db.Engine]int{db.SQLite: 1, db.Postgres: 2}

// Intake records each webhook delivery once and, in the same transaction,
// enqueues the job that handles it. A delivery that needs a job is recorded
// with its payload, and the job carries only the delivery's id and headers.
// Concurrent deliveries are committed together (group commit); each still
// commits with its jobs or not at all. It implements handlers.Intake.
type Intake struct {
	db  *db.DB
	now func() time.Time

	// maxBatch, window and maxCommits tune group commit; maxBatch 1
	// commits every delivery in a transaction of its own.
	maxBatch   int
	window     time.Duration
	maxCommits int

	mu         sync.Mutex
	pending    []*acceptCall
	leading    bool          // a caller leads the pending batch
	committing int           // batches committing now
	full       chan struct{} // wakes the leader early when the batch is full
}

// NewIntake returns the intake on database d.
func NewIntake(d *db.DB) *Intake {
	return &Intake{db: d, now: time.Now, maxBatch: groupCommitMax, window: groupCommitWindow,
		maxCommits: max(1, commitsInFlight[d.Engine()]), full: make(chan struct{}, 1)}
}

// acceptCall is one Accept waiting for its batch.
type acceptCall struct {
	ctx       context.Context
	d         github.Delivery
	duplicate bool
	err       error
	done      chan struct{} // closed when duplicate and err are set
	lead      chan bool     // told to lead the batch it is in; true: gather first
}

// Accept implements handlers.Intake. A delivery whose context ends before
// its batch commits is not recorded and gets the context's error.
func (in *Intake) Accept(ctx context.Context, d github.Delivery) (bool, error) {
	if d.ID == "" {
		return false, fmt.Errorf("record delivery: empty delivery id")
	}
	c := &acceptCall{ctx: ctx, d: d, done: make(chan struct{}), lead: make(chan bool, 1)}
	in.mu.Lock()
	in.pending = append(in.pending, c)
	lead := !in.leading
	in.leading = true
	if len(in.pending) >= in.maxBatch {
		select {
		case in.full <- struct{}{}:
		default:
		}
	}
	in.mu.Unlock()
	if lead {
		in.leadBatch(true)
	}
	for {
		select {
		case <-c.done:
			return c.duplicate, c.err
		case gather := <-c.lead:
			in.leadBatch(gather)
		}
	}
}

// leadBatch takes up to maxBatch pending calls, first waiting at most the
// window for more when gather is set, and commits them. Leadership passes
// to the first call still pending when the batch is taken, if another
// commit may start, else when the commit ends; with none pending, intake
// has no leader until the next call.
func (in *Intake) leadBatch(gather bool) {
	in.mu.Lock()
	wait := gather && len(in.pending) < in.maxBatch
	in.mu.Unlock()
	if wait && in.window > 0 {
		t := time.NewTimer(in.window)
		select {
		case <-t.C:
		case <-in.full:
		}
		t.Stop()
	}
	in.mu.Lock()
	n := min(len(in.pending), in.maxBatch)
	batch := slices.Clone(in.pending[:n])
	in.pending = slices.Delete(in.pending, 0, n)
	in.committing++
	leading := in.committing >= in.maxCommits
	if !leading {
		in.handOff(true)
	}
	in.mu.Unlock()
	in.commit(batch)
	in.mu.Lock()
	in.committing--
	if leading {
		in.handOff(false)
	}
	in.mu.Unlock()
}

// handOff passes leadership to the first pending call, or leaves intake
// without a leader. Call it with in.mu held.
func (in *Intake) handOff(gather bool) {
	if len(in.pending) > 0 {
		in.pending[0].lead <- gather // leading stays true
		return
	}
	in.leading = false
	// A full signal sent for a batch already taken must not cut the next
	// leader's window short.
	select {
	case <-in.full:
	default:
	}
}

// commit records a batch in one transaction. When that fails, it records
// each delivery in a transaction of its own, so one bad delivery fails only
// itself.
func (in *Intake) commit(batch []*acceptCall) {
	live := batch[:0:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = fmt.Errorf("record delivery %s: %w", c.d.ID, err)
			close(c.done)
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), groupCommitTimeout)
	defer cancel()
	dups, err := in.record(ctx, live)
	if err != nil && len(live) > 1 {
		for _, c := range live {
			d, err := in.record(ctx, []*acceptCall{c})
			c.duplicate, c.err = d[0], err
			close(c.done)
		}
		return
	}
	for i, c := range live {
		c.duplicate, c.err = dups[i], err
		close(c.done)
	}
}

// record commits calls in one transaction and reports, per call, whether it
// was a duplicate. A delivery repeated within calls is a duplicate the
// second time.
func (in *Intake) record(ctx context.Context, calls []*acceptCall) ([]bool, error) {
	dups := make([]bool, len(calls))
	err := in.db.Tx(ctx, func(tx *db.Tx) error {
		recs := make([]db.Delivery, len(calls))
		needsJob := make([]bool, len(calls))
		for i, c := range calls {
			d := c.d
			recs[i] = db.Delivery{ID: d.ID, Event: d.Event, Action: d.Action, Installation: d.Installation, ReceivedAt: in.now()}
			if len(d.Payload) > 0 && !ActsOnGitHub(d.Event, d.Action) {
				// Only the body is signed: the same body under a new
				// delivery id is a duplicate too, unless its job reads
				// GitHub first (a quick relabel repeats a body).
				recs[i].PayloadSHA256 = db.PayloadDigest(d.Payload)
			}
			if needsJob[i] = NeedsJob(d.Event, d.Action); needsJob[i] {
				// The job's worker reads the payload from here: job args
				// stay small, so River's insert stays cheap.
				recs[i].Payload = d.Payload
			}
		}
		dup, err := tx.RecordDeliveries(ctx, recs)
		if err != nil {
			return err
		}
		copy(dups, dup)
		var jobs []river.InsertManyParams
		for i, d := range recs {
			if !dup[i] && needsJob[i] {
				jobs = append(jobs, river.InsertManyParams{Args: DeliveryArgs{Delivery: d.ID, Event: d.Event, Action: d.Action, Installation: d.Installation}})
			}
		}
		return tx.InsertJobs(ctx, jobs)
	})
	if err != nil {
		clear(dups)
		if len(calls) == 1 {
			return dups, fmt.Errorf("record delivery %s: %w", calls[0].d.ID, err)
		}
		return dups, fmt.Errorf("record %d deliveries: %w", len(calls), err)
	}
	return dups, nil
}

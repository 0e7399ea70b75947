package jobs_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// testLabel marks the containers of one test, for its checks and its
// clean-up.
const testLabel = "app.testfirst.test"

// Environment of the replica TestRescuedGradeRemovesTheDeadReplicasSandbox
// starts and kills.
const (
	replicaImageEnv = "TESTFIRST_TEST_REPLICA_IMAGE"
	replicaJobEnv   = "TESTFIRST_TEST_REPLICA_JOB"
)

// TestSandboxOfADeadReplica is not a test of its own: it is the replica
// TestRescuedGradeRemovesTheDeadReplicasSandbox kills mid-run, its sandbox
// labelled with the job it runs for, as a grade's are.
func TestSandboxOfADeadReplica(t *testing.T) {
	image := os.Getenv(replicaImageEnv)
	if image == "" {
		t.Skip("the replica TestRescuedGradeRemovesTheDeadReplicasSandbox kills")
	}
	d, err := docker.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.Run(context.Background(), sandbox.Spec{
		Image:      image,
		Entrypoint: []string{"/bin/sleep", "1000"},
		Timeout:    10 * time.Minute,
		Limits:     sandbox.DefaultLimits,
		Labels:     map[string]string{sandbox.LabelJob: os.Getenv(replicaJobEnv), testLabel: "TestRescuedGradeRemovesTheDeadReplicasSandbox"},
	})
	t.Fatal("the sandbox ended before its replica was killed")
}

// TestRescuedGradeRemovesTheDeadReplicasSandbox kills (SIGKILL) a replica
// whose sandbox runs for a grade's job: the sandbox runs on, and would until
// its deadline, counted in testfirst_sandboxes_running. The job's next
// attempt, as a rescue starts it, removes it before anything else; a first
// attempt leaves other sandboxes alone.
func TestRescuedGradeRemovesTheDeadReplicasSandbox(t *testing.T) {
	g := testenv.Grading(t)
	cli := testenv.EngineClient(t)
	mine := testLabel + "=" + t.Name()
	t.Cleanup(func() { testenv.RemoveLabelled(cli, mine) })
	jobID := time.Now().UnixNano() // no other test's job
	replica := exec.Command(os.Args[0], "-test.run=^TestSandboxOfADeadReplica$", "-test.count=1")
	replica.Env = append(os.Environ(), replicaImageEnv+"="+g.Image, replicaJobEnv+"="+strconv.FormatInt(jobID, 10))
	if err := replica.Start(); err != nil {
		t.Fatal(err)
	}
	defer replica.Process.Kill()
	testkit.WaitUntil(t, "the replica's sandbox running", 30*time.Second, func() bool { return len(testenv.Labelled(t, cli, mine, "running")) == 1 })
	if err := replica.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	replica.Wait()
	time.Sleep(time.Second)
	if len(testenv.Labelled(t, cli, mine, "running")) != 1 {
		t.Fatal("the dead replica's sandbox stopped by itself")
	}

	reg := prometheus.NewRegistry()
	m := jobs.NewMetrics(reg, testkit.DB(t))
	jobs.NewGradingSetup(jobs.Config{DB: testkit.DB(t), Metrics: m}, jobs.Sealed{Sandboxes: g.Docker})
	// The engine is read at each scrape; a loaded one may miss a scrape's
	// bound, which leaves the sample out.
	testkit.WaitUntil(t, "testfirst_sandboxes_running counting the dead replica's sandbox", 20*time.Second, func() bool {
		n, ok := sample(t, reg, "testfirst_sandboxes_running", "")
		return ok && n >= 1
	})
	w := jobs.NewGradeWorkerOn(testkit.DB(t), g.Docker, m)
	// The grade is not in this replica's database: the job ends at once,
	// cancelled, after what it does first.
	run := func(attempt int) {
		err := w.Work(context.Background(), &river.Job[jobs.GradeArgs]{JobRow: &rivertype.JobRow{ID: jobID, Attempt: attempt, MaxAttempts: 3},
			Args: jobs.GradeArgs{Grade: 1}})
		var cancel *river.JobCancelError
		if !errors.As(err, &cancel) || !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("attempt %d: %v, want the job cancelled, its grade not found", attempt, err)
		}
	}
	run(1)
	if len(testenv.Labelled(t, cli, mine, "running")) != 1 {
		t.Fatal("a first attempt removed a sandbox")
	}
	run(2)
	if left := testenv.Labelled(t, cli, mine, ""); len(left) != 0 {
		t.Errorf("the rescued job's old sandbox is still there: %s (%s)", left[0].ID, left[0].Status)
	}
	if n := gathered(t, reg, "testfirst_sandbox_leftovers_removed_total", "rescued_job"); n != 1 {
		t.Errorf("testfirst_sandbox_leftovers_removed_total{reason=rescued_job} = %v, want 1", n)
	}
}

// TestRescueLeavesAnotherServicesSandbox: two installations of the service
// (production and a staging copy, each with its own database) share one
// engine, and their job ids repeat. The rescued attempt of job 7 here
// removes the sandboxes of its own job 7 only: the other's job 7, running,
// is left alone.
func TestRescueLeavesAnotherServicesSandbox(t *testing.T) {
	g := testenv.Grading(t)
	cli := testenv.EngineClient(t)
	mine := testLabel + "=" + t.Name()
	t.Cleanup(func() { testenv.RemoveLabelled(cli, mine) })
	jobID := time.Now().UnixNano() // no other test's job
	created := time.Now().Add(-time.Minute).Round(time.Microsecond)
	theirs := &rivertype.JobRow{ID: jobID, CreatedAt: created.Add(-3 * time.Second), Attempt: 1}
	ours := &rivertype.JobRow{ID: jobID, CreatedAt: created, Attempt: 2, MaxAttempts: 3}
	start := func(job *rivertype.JobRow) string {
		return startSleeper(t, cli, g.Image, time.Now().Add(time.Hour), map[string]string{sandbox.LabelJob: jobs.JobLabel(job)})
	}
	other := start(theirs)
	start(&rivertype.JobRow{ID: jobID, CreatedAt: created, Attempt: 1}) // our first attempt's, left by a dead replica

	reg := prometheus.NewRegistry()
	m := jobs.NewMetrics(reg, testkit.DB(t))
	w := jobs.NewGradeWorkerOn(testkit.DB(t), g.Docker, m)
	err := w.Work(context.Background(), &river.Job[jobs.GradeArgs]{JobRow: ours, Args: jobs.GradeArgs{Grade: 1}})
	if !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("%v, want the job cancelled, its grade not found", err)
	}
	left := testenv.Labelled(t, cli, mine, "")
	if len(left) != 1 || left[0].ID != other || left[0].State != "running" {
		t.Errorf("left: %+v; want only the other service's sandbox, running", left)
	}
	if n := gathered(t, reg, "testfirst_sandbox_leftovers_removed_total", "rescued_job"); n != 1 {
		t.Errorf("testfirst_sandbox_leftovers_removed_total{reason=rescued_job} = %v, want 1", n)
	}
}

// TestSandboxSweepIsPeriodic: a sandbox past its deadline that appears
// after the replica started (no start-up sweep sees it) is removed by the
// replica's periodic sweep within its interval. Sweeps are engine-wide, so
// another process's sweep (another test's, on a shared engine) may remove it
// first: the test also checks, on the engine's own answers, that the
// replica swept at start and then once per interval, and counted what it
// removed.
func TestSandboxSweepIsPeriodic(t *testing.T) {
	g := testenv.Grading(t)
	cli := testenv.EngineClient(t)
	mine := testLabel + "=" + t.Name()
	t.Cleanup(func() { testenv.RemoveLabelled(cli, mine) })
	reg := prometheus.NewRegistry()
	m := jobs.NewMetrics(reg, testkit.DB(t))
	const interval = 2 * time.Second
	engine := &sweepLog{Sandboxes: g.Docker}
	setup := jobs.NewGradingSetup(jobs.Config{DB: testkit.DB(t), Metrics: m, SandboxSweepInterval: interval}, jobs.Sealed{Sandboxes: engine})
	if setup.Sweeper == nil {
		t.Fatal("a grading setup has no sandbox sweeper")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); setup.Sweeper.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			cancel()
			<-done
			stopped = true
		}
	}
	defer stop()
	time.Sleep(interval / 2) // past the sweep at start

	// A dead process's sandbox, still running, its deadline two minutes
	// gone.
	startSleeper(t, cli, g.Image, time.Now().Add(-2*time.Minute), nil)
	began := time.Now()
	// Within the interval, and the seconds a loaded engine may take to
	// kill and remove a container.
	testkit.WaitUntil(t, "the leftover removed by the next sweep", interval+10*time.Second, func() bool { return len(testenv.Labelled(t, cli, mine, "")) == 0 })
	t.Logf("the leftover went %s after it appeared; the sweep runs every %s", time.Since(began).Round(10*time.Millisecond), interval)
	testkit.WaitUntil(t, "a sweep after the leftover appeared", interval+10*time.Second, func() bool { return engine.sweptAfter(began) })
	stop()

	sweeps, ended, removed := engine.sweeps()
	if len(sweeps) < 2 {
		t.Fatalf("%d sweeps; want one at start and one per interval", len(sweeps))
	}
	// An interval from the end of one sweep to the start of the next: a
	// sweep a loaded engine answers slowly is not followed by another at
	// once.
	for i := 1; i < len(sweeps); i++ {
		if gap := sweeps[i].Sub(ended[i-1]); gap < interval-100*time.Millisecond || gap > interval+5*time.Second {
			t.Errorf("sweep %d came %s after the one before ended; the interval is %s", i, gap, interval)
		}
	}
	if n := gathered(t, reg, "testfirst_sandbox_leftovers_removed_total", "past_deadline"); n != float64(removed) {
		t.Errorf("testfirst_sandbox_leftovers_removed_total{reason=past_deadline} = %v; the sweeps removed %d", n, removed)
	}
}

// TestSlowSweepsAreNotBackToBack: an engine that takes longer than the
// interval to answer a sweep (a loaded one) is swept an interval after each
// sweep ended, never again at once.
func TestSlowSweepsAreNotBackToBack(t *testing.T) {
	const interval = 200 * time.Millisecond
	engine := &sweepLog{Sandboxes: slowSweeps{took: 3 * interval}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); jobs.NewSandboxSweeper(engine, interval, nil, nil).Run(ctx) }()
	testkit.WaitUntil(t, "four sweeps", 10*time.Second, func() bool { at, _, _ := engine.sweeps(); return len(at) >= 4 })
	cancel()
	<-done
	at, ended, _ := engine.sweeps()
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(ended[i-1]); gap < interval-20*time.Millisecond {
			t.Errorf("sweep %d started %s after the one before ended; the interval is %s", i, gap, interval)
		}
	}
}

// slowSweeps is an engine whose sweeps take took and remove nothing.
type slowSweeps struct {
	jobs.Sandboxes
	took time.Duration
}

func (s slowSweeps) Sweep(ctx context.Context, now time.Time) (int, error) {
	time.Sleep(s.took)
	return 0, nil
}

// sweepLog records when the engine it wraps was swept and how many
// containers the engine said each sweep removed.
type sweepLog struct {
	jobs.Sandboxes
	mu        sync.Mutex
	at, ended []time.Time
	removed   int
}

func (l *sweepLog) Sweep(ctx context.Context, now time.Time) (int, error) {
	n, err := l.Sandboxes.Sweep(ctx, now)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, now)
	l.ended = append(l.ended, time.Now())
	l.removed += n
	return n, err
}

// sweeps returns when each sweep started and ended, and how many
// containers they removed in all.
func (l *sweepLog) sweeps() (at, ended []time.Time, removed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.at), slices.Clone(l.ended), l.removed
}

func (l *sweepLog) sweptAfter(t time.Time) bool {
	at, _, _ := l.sweeps()
	return len(at) > 0 && at[len(at)-1].After(t)
}

// gathered is the value of metric name in reg, of its series with the
// given reason (or its only series, when reason is empty).
func gathered(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	v, ok := sample(t, reg, name, reason)
	if !ok {
		t.Fatalf("no metric %s{reason=%q}", name, reason)
	}
	return v
}

// sample is gathered's value, and whether reg has it.
func sample(t *testing.T, reg *prometheus.Registry, name, reason string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			ok := reason == ""
			for _, l := range m.GetLabel() {
				ok = ok || (l.GetName() == "reason" && l.GetValue() == reason)
			}
			if !ok {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue(), true
			}
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// startSleeper starts a sandbox container of the test (labelled with its
// name and more) that sleeps, its deadline at deadline, and returns its id.
func startSleeper(t *testing.T, cli *client.Client, image string, deadline time.Time, more map[string]string) string {
	t.Helper()
	labels := map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelDeadline: strconv.FormatInt(deadline.Unix(), 10), testLabel: t.Name()}
	maps.Copy(labels, more)
	resp, err := cli.ContainerCreate(context.Background(), &container.Config{Image: image, Entrypoint: []string{"/bin/sleep", "1000"}, Labels: labels},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerStart(context.Background(), resp.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	return resp.ID
}

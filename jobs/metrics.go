package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
)

// Metrics are the job system's and the grader's Prometheus metrics. A nil
// *Metrics records nothing.
type Metrics struct {
	verdicts     *prometheus.CounterVec
	gradeSeconds prometheus.Histogram
	jobWait      *prometheus.HistogramVec
	jobRun       *prometheus.HistogramVec
	jobs         *prometheus.CounterVec
	leftovers    *prometheus.CounterVec
	running      *sandboxesRunning
	agentRuns    *prometheus.CounterVec
	agentSeconds *prometheus.HistogramVec
	agentEgress  *prometheus.CounterVec
}

// NewMetrics registers the pipeline's metrics with reg, the queue
// depth read from d at each scrape among them.
func NewMetrics(reg prometheus.Registerer, d *db.DB) *Metrics {
	buckets := []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 120, 300, 600, 1800}
	m := &Metrics{
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_grades_total", Help: "Grades finished, by verdict and trust.",
		}, []string{"verdict", "trust"}),
		gradeSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "testfirst_grade_duration_seconds", Help: "Time from a grade's start to its check run's completion.", Buckets: buckets,
		}),
		jobWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "testfirst_job_wait_seconds", Help: "Time jobs waited in the queue before they ran, by kind.", Buckets: buckets,
		}, []string{"kind"}),
		jobRun: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "testfirst_job_run_seconds", Help: "Time jobs ran, by kind.", Buckets: buckets,
		}, []string{"kind"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_jobs_total", Help: "Job attempts ended, by kind and outcome (completed, failed, cancelled).",
		}, []string{"kind", "outcome"}),
		leftovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_sandbox_leftovers_removed_total",
			Help: "Sandbox containers a process left behind that this replica removed, by reason (past_deadline: the periodic sweep, of those past their deadline or created a minute ago and never started; rescued_job: a job taken over from a dead replica).",
		}, []string{"reason"}),
		running: &sandboxesRunning{desc: prometheus.NewDesc("testfirst_sandboxes_running",
			"Sandbox containers running on this replica's engine, whichever process started them (replicas sharing an engine report the same).", nil, nil)},
	}
	for _, r := range []string{leftoverPastDeadline, leftoverRescuedJob} {
		m.leftovers.WithLabelValues(r)
	}
	m.agentRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "testfirst_agent_runs_total", Help: "Agent runs ended, by role, harness and outcome.",
	}, []string{"role", "harness", "outcome"})
	m.agentSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "testfirst_agent_run_duration_seconds", Help: "Time an agent's sandbox ran, by role and harness.", Buckets: buckets,
	}, []string{"role", "harness"})
	m.agentEgress = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "testfirst_agent_egress_requests_total", Help: "Requests agents sent through the egress proxy, by role, harness and decision (allowed, refused).",
	}, []string{"role", "harness", "decision"})
	reg.MustRegister(m.agentRuns, m.agentSeconds, m.agentEgress)
	reg.MustRegister(m.verdicts, m.gradeSeconds, m.jobWait, m.jobRun, m.jobs, m.leftovers, m.running, &queueDepth{db: d,
		desc: prometheus.NewDesc("testfirst_job_queue_depth", "Jobs waiting or running, by queue and state.", []string{"queue", "state"}, nil)})
	return m
}

// leftoversRemoved counts n leftover sandboxes removed for reason.
func (m *Metrics) leftoversRemoved(reason string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.leftovers.WithLabelValues(reason).Add(float64(n))
}

// countSandboxes makes testfirst_sandboxes_running read s; before, a
// replica that does not grade, it reports nothing.
func (m *Metrics) countSandboxes(s Sandboxes) {
	if m == nil {
		return
	}
	m.running.mu.Lock()
	defer m.running.mu.Unlock()
	m.running.sandboxes = s
}

// graded counts one finished grade.
func (m *Metrics) graded(verdict, trust string, took time.Duration) {
	if m == nil {
		return
	}
	m.verdicts.WithLabelValues(verdict, trust).Inc()
	m.gradeSeconds.Observe(took.Seconds())
}

// agentRun counts one ended agent run and its egress requests.
func (m *Metrics) agentRun(role, harness, outcome string, took time.Duration, allowed, refused int) {
	if m == nil {
		return
	}
	m.agentRuns.WithLabelValues(role, harness, outcome).Inc()
	m.agentSeconds.WithLabelValues(role, harness).Observe(took.Seconds())
	m.agentEgress.WithLabelValues(role, harness, "allowed").Add(float64(allowed))
	m.agentEgress.WithLabelValues(role, harness, "refused").Add(float64(refused))
}

// Observe records job events until events is closed.
func (m *Metrics) Observe(events <-chan *river.Event) {
	for ev := range events {
		if m == nil || ev.Job == nil {
			continue
		}
		outcome := map[river.EventKind]string{river.EventKindJobCompleted: "completed", river.EventKindJobFailed: "failed",
			river.EventKindJobCancelled: "cancelled"}[ev.Kind]
		if outcome == "" {
			continue
		}
		m.jobs.WithLabelValues(ev.Job.Kind, outcome).Inc()
		if ev.JobStats != nil {
			m.jobWait.WithLabelValues(ev.Job.Kind).Observe(ev.JobStats.QueueWaitDuration.Seconds())
			m.jobRun.WithLabelValues(ev.Job.Kind).Observe(ev.JobStats.RunDuration.Seconds())
		}
	}
}

// sandboxesRunning reads the number of sandboxes running on the engine at
// each scrape. An engine that does not answer leaves the sample out rather
// than fail the whole scrape: the gap in the series shows it.
type sandboxesRunning struct {
	desc      *prometheus.Desc
	mu        sync.Mutex
	sandboxes Sandboxes
}

func (s *sandboxesRunning) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s *sandboxesRunning) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	sb := s.sandboxes
	s.mu.Unlock()
	if sb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := sb.Running(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, float64(n))
}

// queueDepth reads the number of waiting and running jobs at each scrape.
type queueDepth struct {
	db   *db.DB
	desc *prometheus.Desc
}

func (q *queueDepth) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

func (q *queueDepth) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	depth, err := q.db.QueueDepth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(q.desc, err)
		return
	}
	for _, d := range depth {
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(d.Jobs), d.Queue, d.State)
	}
}

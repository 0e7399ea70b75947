package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// Agents is what a service runs writer and implementer agents with: the
// agents' part of its configuration and the runner of their sandboxes.
type Agents struct {
	Config agent.Config
	Runner agent.Runner
}

// WriterArgs is the job of one writer run (an agent_runs row).
type WriterArgs struct {
	Run int64 `json:"run"`
}

// Kind implements river.JobArgs.
func (WriterArgs) Kind() string { return "writer" }

// InsertOpts implements river.JobArgsWithInsertOpts: a run is one job, in
// the agents' queue.
func (WriterArgs) InsertOpts() river.InsertOpts { return agentInsertOpts() }

// ImplementerArgs is the job of one implementer run.
type ImplementerArgs struct {
	Run int64 `json:"run"`
}

// Kind implements river.JobArgs.
func (ImplementerArgs) Kind() string { return "implementer" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ImplementerArgs) InsertOpts() river.InsertOpts { return agentInsertOpts() }

func agentInsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAgents, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
}

// QueueAgents is the job queue of the agents' runs: they take long, so
// grades and base checks never wait behind one.
const QueueAgents = "agents"

// agentQueue starts and cancels a ticket's agent runs. A nil *agentQueue
// is a service without agents: it starts nothing, and knows no harness.
type agentQueue struct {
	db  *db.DB
	cfg agent.Config
	log *slog.Logger
}

// names lists the service's harnesses, sorted.
func (q *agentQueue) names() []string {
	if q == nil {
		return nil
	}
	out := make([]string, 0, len(q.cfg.Harnesses))
	for n := range q.cfg.Harnesses {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// checkConfig says what of a repository's config names a harness the
// service does not have.
func (q *agentQueue) checkConfig(c pipeline.RepoConfig) error { return c.CheckHarnesses(q.names()) }

// withHarnesses is fc with an unknown harness counted as a config error.
func (q *agentQueue) withHarnesses(fc pipeline.FetchedConfig) pipeline.FetchedConfig {
	if fc.LoadError != nil || fc.ParseError != nil {
		return fc
	}
	if err := q.checkConfig(fc.Config); err != nil {
		return pipeline.FetchedConfig{Config: pipeline.DefaultRepoConfig(), ParseError: err}
	}
	return fc
}

// runWarnings are what a run of harness h makes every grade and the card
// say about itself.
func (q *agentQueue) runWarnings(h string) []string {
	var ws []string
	if q.cfg.Harnesses[h].EgressReachesGitHub(q.cfg.GitHubHost) {
		ws = append(ws, pipeline.EgressGitHubWarning)
	}
	if q.cfg.Harnesses[h].OnE2B() {
		ws = append(ws, pipeline.E2BEgressWarning)
	}
	return ws
}

// startWriter records the ticket's next writer round (with the
// requester's rejection reason as its feedback) and its job, in tx. It
// does nothing when the repository names no writer or the service has no
// agents.
func (q *agentQueue) startWriter(ctx context.Context, tx *db.Tx, tk db.Ticket, cfg pipeline.RepoConfig, feedback string) error {
	if q == nil || cfg.Writer == pipeline.AgentNone {
		return nil
	}
	runs, err := tx.AgentRuns(ctx, tk.ID)
	if err != nil {
		return err
	}
	round := 1
	for _, r := range runs {
		if r.Role == pipeline.RoleWriter {
			round = max(round, r.Round+1)
		}
	}
	return q.record(ctx, tx, db.AgentRun{TicketID: tk.ID, Role: pipeline.RoleWriter, Harness: cfg.Writer, Round: round, Feedback: feedback,
		ModelAPI: q.cfg.Harnesses[cfg.Writer].ModelAPI, State: pipeline.AgentQueued}, q.runWarnings(cfg.Writer))
}

// retryInvalid starts the writer's next round after the base check found
// version v, which the writer wrote, not a valid task: its feedback is the
// problems the issue was told, in counts. A writer gets cfg.MaxRounds
// invalid versions in a row; then people must push the tests. It returns
// the line the comment ends with ("" for a version a person
// pushed), and is idempotent: a retried announcement finds its round.
func (q *agentQueue) retryInvalid(ctx context.Context, tx *db.Tx, tk db.Ticket, cfg pipeline.RepoConfig, v store.Version, check pipeline.VersionCheck) (string, error) {
	harness, ok := pipeline.AgentHarnessOf(v.Author)
	if q == nil || !ok || cfg.Writer == pipeline.AgentNone {
		return "", nil
	}
	runs, err := tx.AgentRuns(ctx, tk.ID)
	if err != nil {
		return "", err
	}
	var writers []db.AgentRun
	for _, r := range runs {
		if r.Role == pipeline.RoleWriter {
			writers = append(writers, r)
		}
	}
	slices.SortFunc(writers, func(a, b db.AgentRun) int { return cmp.Compare(a.Round, b.Round) })
	feedback := pipeline.InvalidFeedback(v.Number, check)
	inARow := 1 // v itself
	for i := len(writers) - 1; i >= 0; i-- {
		if writers[i].Feedback == feedback {
			return pipeline.WriterRetryNote(cfg.Writer, writers[i].Round, cfg.MaxRounds), nil
		}
		if !strings.HasPrefix(writers[i].Feedback, pipeline.InvalidFeedbackPrefix) {
			break
		}
		inARow++
	}
	if inARow >= cfg.MaxRounds {
		return pipeline.WriterRetryNote(harness, 0, cfg.MaxRounds), nil
	}
	round := 1
	if len(writers) > 0 {
		round = writers[len(writers)-1].Round + 1
	}
	if err := q.startWriter(ctx, tx, tk, cfg, feedback); err != nil {
		return "", err
	}
	return pipeline.WriterRetryNote(cfg.Writer, round, cfg.MaxRounds), nil
}

// startImplementer records an implementer round against approved version
// v and its job, in tx, unless the repository names no implementer. The
// independence policy is applied here: a writer harness that is the
// implementer's (or of its vendor) warns, or under refuse records the run
// refused, with no job.
func (q *agentQueue) startImplementer(ctx context.Context, tx *db.Tx, tk db.Ticket, cfg pipeline.RepoConfig, v store.Version, round int, feedback string) (db.AgentRun, bool, error) {
	if q == nil || cfg.Implementer == pipeline.AgentNone {
		return db.AgentRun{}, false, nil
	}
	warnings := q.runWarnings(cfg.Implementer)
	run := db.AgentRun{TicketID: tk.ID, Role: pipeline.RoleImplementer, Harness: cfg.Implementer, Round: round, Digest: v.Digest,
		VersionNumber: v.Number, Feedback: feedback, ModelAPI: q.cfg.Harnesses[cfg.Implementer].ModelAPI, State: pipeline.AgentQueued}
	if writer, ok := pipeline.AgentHarnessOf(v.Author); ok && !q.cfg.Independent(writer, cfg.Implementer) {
		w := pipeline.IndependenceWarning(writer, cfg.Implementer)
		if q.cfg.Independence == agent.IndependenceRefuse {
			run.State, run.Outcome, run.Error = pipeline.AgentCompleted, pipeline.OutcomeRefused, w+" (agents.independence: refuse)"
			a, created, err := tx.CreateAgentRun(ctx, withWarnings(run, append(warnings, w)))
			if err != nil || !created {
				return a, false, err
			}
			return a, true, audit(ctx, tx, "testfirst", tk.ID, "agent.refused", map[string]any{"run": a.ID, "role": a.Role, "harness": a.Harness,
				"round": a.Round, "why": a.Error})
		}
		warnings = append(warnings, w)
	}
	return run, false, q.record(ctx, tx, run, warnings)
}

func withWarnings(a db.AgentRun, warnings []string) db.AgentRun {
	if len(warnings) > 0 {
		a.Warnings, _ = json.Marshal(warnings)
	}
	return a
}

// record creates a run and its job, once per round.
func (q *agentQueue) record(ctx context.Context, tx *db.Tx, run db.AgentRun, warnings []string) error {
	a, created, err := tx.CreateAgentRun(ctx, withWarnings(run, warnings))
	if err != nil || !created {
		return err
	}
	var args river.JobArgs = WriterArgs{Run: a.ID}
	if a.Role == pipeline.RoleImplementer {
		args = ImplementerArgs{Run: a.ID}
	}
	res, err := tx.InsertJobResult(ctx, args, nil)
	if err != nil {
		return err
	}
	a.JobID = res.Job.ID
	if err := tx.UpdateAgentRun(ctx, a); err != nil {
		return err
	}
	q.log.InfoContext(ctx, "agent run queued", "ticket", a.TicketID, "run", a.ID, "role", a.Role, "harness", a.Harness, "round", a.Round)
	return audit(ctx, tx, "testfirst", a.TicketID, "agent.queued", map[string]any{"run": a.ID, "role": a.Role, "harness": a.Harness,
		"model_api": a.ModelAPI, "round": a.Round, "version": a.VersionNumber, "digest": a.Digest})
}

// cancelImplementers cancels the ticket's unfinished implementer runs
// against any digest but keep; their jobs see it and stop their
// sandboxes.
func (q *agentQueue) cancelImplementers(ctx context.Context, tx *db.Tx, ticketID int64, keep, why string) error {
	return q.cancelRuns(ctx, tx, ticketID, func(r db.AgentRun) bool { return r.Role == pipeline.RoleImplementer && r.Digest != keep }, why)
}

// cancelAll cancels every unfinished run of the ticket (its label was
// removed, or its issue closed).
func (q *agentQueue) cancelAll(ctx context.Context, tx *db.Tx, ticketID int64, why string) error {
	return q.cancelRuns(ctx, tx, ticketID, func(db.AgentRun) bool { return true }, why)
}

func (q *agentQueue) cancelRuns(ctx context.Context, tx *db.Tx, ticketID int64, which func(db.AgentRun) bool, why string) error {
	if q == nil {
		return nil
	}
	runs, err := tx.AgentRuns(ctx, ticketID)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if !r.State.Unfinished() || !which(r) {
			continue
		}
		r.State, r.Error = pipeline.AgentCancelled, why
		if err := tx.UpdateAgentRun(ctx, r); err != nil {
			return err
		}
		if err := audit(ctx, tx, "testfirst", ticketID, "agent.cancelled", map[string]any{"run": r.ID, "role": r.Role, "harness": r.Harness,
			"round": r.Round, "why": why}); err != nil {
			return err
		}
	}
	return nil
}

// gradeContext is what the ticket's agent runs add to a grade of head:
// the warnings, and the implementer run that pushed head, if one did.
func gradeContext(ctx context.Context, d *db.DB, ticketID int64, head string) ([]string, *db.AgentRun, error) {
	var (
		warnings []string
		pushed   *db.AgentRun
	)
	err := d.Tx(ctx, func(tx *db.Tx) error {
		runs, err := tx.AgentRuns(ctx, ticketID)
		if err != nil {
			return err
		}
		warnings = db.TicketWarnings(runs) // egress that could reach GitHub, writer and implementer not independent
		for i := len(runs) - 1; i >= 0; i-- {
			if runs[i].Role == pipeline.RoleImplementer && runs[i].HeadSHA == head {
				pushed = &runs[i]
				break
			}
		}
		return nil
	})
	return warnings, pushed, err
}

// applyRun makes a grade of a contaminated implementer run's commit
// contaminated, with where its canaries were seen: the grader could not
// have seen what the run printed or sent.
func applyRun(rep *report.Report, run *db.AgentRun) {
	if run == nil || run.Outcome != pipeline.OutcomeContaminated {
		return
	}
	var seen []report.CanarySighting
	_ = json.Unmarshal(run.Sightings, &seen)
	rep.Contaminated, rep.Verdict = true, report.VerdictContaminated
	rep.Contamination = append(rep.Contamination, seen...)
	rep.Reasons = append(pipeline.ContaminationReasons(seen), rep.Reasons...)
}

// afterGrade starts the next implementer round when a grade of a run's
// commit failed with rounds left; never after a contaminated run.
func (q *agentQueue) afterGrade(ctx context.Context, tk db.Ticket, g db.Grade, rep *report.Report, run *db.AgentRun, cfg pipeline.RepoConfig) error {
	if q == nil || run == nil || run.Digest != g.Digest || run.Outcome != pipeline.OutcomeDelivered || cfg.Implementer != run.Harness ||
		!pipeline.NextRound(rep.Verdict, run.Round, cfg.MaxRounds) {
		return nil
	}
	return q.db.Tx(ctx, func(tx *db.Tx) error {
		dv, err := tx.Version(ctx, tk.ID, g.VersionNumber)
		if err != nil {
			return err
		}
		_, _, err = q.startImplementer(ctx, tx, tk, cfg, store.Version{Digest: g.Digest, Number: g.VersionNumber, Author: dv.Author},
			run.Round+1, pipeline.ImplementerFeedback(rep))
		return err
	})
}

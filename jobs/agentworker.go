package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// agentStore is what agent runs use of the store: the writer side pushes
// a writer's version, the grader side gives the canaries an implementer's
// results are scanned for.
type agentStore interface {
	Push(ctx context.Context, t store.Ticket, d store.Draft) (store.Version, error)
}

// ticketCanaries gives the canaries of every version of a ticket.
type ticketCanaries interface {
	Canaries(ctx context.Context, t store.Ticket) ([]detect.Canary, error)
}

// agentWorker runs one agent run: it downloads the ticket's base tree with
// the installation token outside the sandbox, runs the harness on it
// through the Runner (which holds no credential of ours), and carries the
// result into the pipeline: a writer's tests become a version in the
// store, an implementer's changes a commit on testfirst/issue-N and a pull
// request that is graded like any other. A run cancelled meanwhile stops
// its sandbox.
type agentWorker struct {
	db       *db.DB
	github   installationClients
	agents   *agentQueue
	runner   agent.Runner
	store    agentStore
	canaries ticketCanaries
	// pasted reads an implementer's task for pasted hidden tests.
	pasted      *pastedScanner
	grades      *gradeQueue
	metrics     *Metrics
	log         *slog.Logger
	rescueAfter time.Duration
}

// WriterWorker runs a ticket's writer; see agentWorker.
type WriterWorker struct {
	river.WorkerDefaults[WriterArgs]
	*agentWorker
}

// Work implements river.Worker.
func (w *WriterWorker) Work(ctx context.Context, job *river.Job[WriterArgs]) error {
	return w.run(ctx, job.Args.Run, job.Attempt >= job.MaxAttempts)
}

// Timeout implements river.Worker; see SandboxJobTimeout.
func (w *WriterWorker) Timeout(*river.Job[WriterArgs]) time.Duration {
	return SandboxJobTimeout(w.rescueAfter)
}

// ImplementerWorker runs a ticket's implementer; see agentWorker.
type ImplementerWorker struct {
	river.WorkerDefaults[ImplementerArgs]
	*agentWorker
}

// Work implements river.Worker.
func (w *ImplementerWorker) Work(ctx context.Context, job *river.Job[ImplementerArgs]) error {
	return w.run(ctx, job.Args.Run, job.Attempt >= job.MaxAttempts)
}

// Timeout implements river.Worker; see SandboxJobTimeout.
func (w *ImplementerWorker) Timeout(*river.Job[ImplementerArgs]) time.Duration {
	return SandboxJobTimeout(w.rescueAfter)
}

// errRunCancelled ends a run whose row was cancelled while it ran.
var errRunCancelled = errors.New("agent run cancelled")

// agentEnd is how a run ended, as the pipeline records it.
type agentEnd struct {
	outcome pipeline.AgentOutcome
	why     string
}

func (w *agentWorker) run(ctx context.Context, id int64, final bool) error {
	var (
		a    db.AgentRun
		tk   db.Ticket
		repo db.Repository
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if a, err = tx.AgentRun(ctx, id); err != nil {
			return err
		}
		if tk, err = tx.Ticket(ctx, a.TicketID); err != nil {
			return err
		}
		repo, err = tx.Repository(ctx, tk.RepositoryID)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil || !a.State.Unfinished() {
		return err
	}
	log := w.log.With("run", a.ID, "role", a.Role, "harness", a.Harness, "round", a.Round, "ticket", tk.ID, "repo", repo.Owner+"/"+repo.Name)
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	fc := w.agents.withHarnesses(pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch))
	switch {
	case fc.LoadError != nil:
		return retryOrCancel(fc.LoadError)
	case fc.ParseError != nil:
		return w.finish(ctx, log, gi, repo, tk, a, agent.Result{}, agentEnd{pipeline.OutcomeRefused, fc.ParseError.Error()})
	}
	if a.Role == pipeline.RoleWriter {
		if why, err := w.implementationExists(ctx, tk, repo); err != nil || why != "" {
			if err != nil {
				return err
			}
			return w.finish(ctx, log, gi, repo, tk, a, agent.Result{}, agentEnd{pipeline.OutcomeRefused, why})
		}
	}
	a.State, a.StartedAt = pipeline.AgentRunning, time.Now()
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		cur, err := tx.AgentRun(ctx, a.ID)
		if err != nil || !cur.State.Unfinished() {
			a.State = cur.State
			return err
		}
		if err := tx.UpdateAgentRun(ctx, a); err != nil {
			return err
		}
		return audit(ctx, tx, "testfirst", tk.ID, "agent.started", map[string]any{"run": a.ID, "role": a.Role, "harness": a.Harness, "round": a.Round})
	}); err != nil || a.State != pipeline.AgentRunning {
		return err
	}
	base, err := downloadTree(ctx, gi, repo, tk.BaseSHA)
	if err != nil {
		return retryOrCancel(err)
	}
	wctx, stop := w.watch(ctx, a.ID)
	defer stop()
	task := agent.Task{Role: agent.Role(a.Role), Repo: repo.Owner + "/" + repo.Name, Issue: tk.IssueNumber, Title: tk.Title, Body: tk.Body,
		BaseSHA: tk.BaseSHA, Round: a.Round, Feedback: a.Feedback}
	if a.Role == pipeline.RoleImplementer {
		// The task is the issue as last seen and the last round's
		// feedback: a hidden test pasted into it reaches the implementer.
		if _, err := w.pasted.scan(ctx, gi, repo, task.Title+"\n"+task.Body+"\n"+task.Feedback,
			pastedPlace{SeenIn: fmt.Sprintf("the task of the implementer `%s`, round %d", a.Harness, a.Round)}); err != nil {
			return err
		}
	}
	log.InfoContext(ctx, "agent running")
	res, err := w.runner.Run(wctx, agent.Request{Task: task, Harness: a.Harness, Base: base})
	if context.Cause(wctx) == errRunCancelled {
		log.InfoContext(ctx, "agent run stopped: cancelled")
		return nil
	}
	if err != nil {
		if !final {
			log.WarnContext(ctx, "agent run failed; River retries", "err", err)
			return err
		}
		return errors.Join(err, w.finish(ctx, log, gi, repo, tk, a, res, agentEnd{pipeline.OutcomeError, err.Error()}))
	}
	var end agentEnd
	if a.Role == pipeline.RoleWriter {
		end, err = w.wrote(ctx, repo, tk, &a, res)
	} else {
		end, err = w.commitChanges(ctx, gi, repo, tk, &a, res, fc.Config)
	}
	if err != nil {
		return err
	}
	return w.finish(ctx, log, gi, repo, tk, a, res, end)
}

// implementationExists says why a writer must not run: an implementation of the
// ticket exists (an implementer's commit, or an open pull request that
// closes it in repo, the ticket's repository) and the issue was not
// reopened since. "" lets it run.
func (w *agentWorker) implementationExists(ctx context.Context, tk db.Ticket, repo db.Repository) (string, error) {
	var why string
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		runs, err := tx.AgentRuns(ctx, tk.ID)
		if err != nil {
			return err
		}
		var since time.Time
		for _, r := range runs {
			if r.Role == pipeline.RoleImplementer && r.HeadSHA != "" && r.CreatedAt.After(since) {
				since = r.CreatedAt
				why = fmt.Sprintf("an implementation exists (pull request #%d): the writer does not run once one does, unless the issue is reopened", r.PRNumber)
			}
		}
		prs, err := tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
		if err != nil {
			return err
		}
		for _, pr := range prs {
			if pr.UpdatedAt.After(since) {
				since = pr.UpdatedAt
				why = fmt.Sprintf("an implementation exists (pull request #%d): the writer does not run once one does, unless the issue is reopened", pr.Number)
			}
		}
		if why == "" {
			return nil
		}
		events, err := tx.AuditLog(ctx, tk.ID)
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.Kind == "ticket.reopened" && e.At.After(since) {
				why = ""
			}
		}
		return nil
	})
	return why, err
}

// wrote stores a writer's tests as the ticket's next version, authored
// writer:<harness>, and asks for the sync that base-checks and announces
// it.
func (w *agentWorker) wrote(ctx context.Context, repo db.Repository, tk db.Ticket, a *db.AgentRun, res agent.Result) (agentEnd, error) {
	switch {
	case res.TimedOut:
		return agentEnd{pipeline.OutcomeTimedOut, "the writer was stopped at its time limit (agents.timeout)"}, nil
	case res.ExitCode != 0:
		return agentEnd{pipeline.OutcomeFailed, fmt.Sprintf("the writer exited with status %d", res.ExitCode)}, nil
	case len(res.Tests) == 0:
		return agentEnd{pipeline.OutcomeFailed, "the writer wrote no test file to /out/tests/"}, nil
	}
	d := store.Draft{Criteria: res.Criteria, Reference: res.ReferencePatch, Author: pipeline.AgentAuthor(a.Harness)}
	for _, f := range res.Tests {
		d.Files = append(d.Files, store.File{Path: f.Path, Data: f.Data})
	}
	v, err := w.store.Push(ctx, storeTicket(repo, tk.IssueNumber), d)
	if err != nil {
		return agentEnd{pipeline.OutcomeFailed, "the store refused the writer's tests: " + err.Error()}, nil
	}
	a.VersionNumber = v.Number
	return agentEnd{pipeline.OutcomeDelivered, ""}, nil
}

// commitChanges scans what an implementer handed back for the ticket's
// canaries, then commits its changes to the ticket's branch, opens the
// pull request on the first commit and grades the new head. A
// contaminated run whose changes themselves carry a canary commits
// nothing: hidden test text never goes to GitHub.
func (w *agentWorker) commitChanges(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, a *db.AgentRun, res agent.Result,
	cfg pipeline.RepoConfig) (agentEnd, error) {
	cs, err := w.canaries.Canaries(ctx, storeTicket(repo, tk.IssueNumber))
	if err != nil {
		return agentEnd{}, fmt.Errorf("canaries of ticket %d: %w", tk.ID, err)
	}
	seen, inChanges := scanResult(res, cs)
	if len(seen) > 0 {
		a.Sightings, _ = json.Marshal(seen)
	}
	end := agentEnd{outcome: pipeline.OutcomeDelivered}
	switch {
	case len(seen) > 0 && inChanges:
		return agentEnd{pipeline.OutcomeContaminated, "its changes carry a hidden test's canary; nothing was committed"}, nil
	case len(seen) > 0:
		end = agentEnd{pipeline.OutcomeContaminated, "what it printed, wrote in RESULT.md or sent out carries a hidden test's canary"}
	case res.TimedOut:
		return agentEnd{pipeline.OutcomeTimedOut, "the implementer was stopped at its time limit (agents.timeout)"}, nil
	case res.ExitCode != 0:
		return agentEnd{pipeline.OutcomeFailed, fmt.Sprintf("the implementer exited with status %d", res.ExitCode)}, nil
	}
	if len(res.Changes) == 0 {
		if end.outcome == pipeline.OutcomeContaminated {
			return end, nil
		}
		return agentEnd{pipeline.OutcomeFailed, "the implementer changed nothing in /workspace"}, nil
	}
	changes := make([]github.FileChange, len(res.Changes))
	for i, c := range res.Changes {
		changes[i] = github.FileChange{Path: c.Path, Content: c.Content, Executable: c.Executable, Deleted: c.Deleted}
	}
	sha, err := gi.CommitFiles(ctx, repo.Owner, repo.Name, pipeline.AgentBranch(tk.IssueNumber), tk.BaseSHA,
		pipeline.AgentCommitMessage(tk.IssueNumber, a.Round, a.Harness), changes)
	if err != nil {
		return agentEnd{}, retryOrCancel(err)
	}
	// The head first: a grade of it, started by the webhook, finds the
	// run that made it.
	a.HeadSHA, a.Outcome = sha, end.outcome
	var pr int
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpdateAgentRun(ctx, *a); err != nil {
			return err
		}
		runs, err := tx.AgentRuns(ctx, tk.ID)
		for _, r := range runs {
			if r.Role == pipeline.RoleImplementer && r.PRNumber != 0 {
				pr = r.PRNumber
			}
		}
		return err
	}); err != nil {
		return agentEnd{}, err
	}
	if pr == 0 {
		if pr, err = gi.OpenPull(ctx, repo.Owner, repo.Name, pipeline.AgentBranch(tk.IssueNumber), repo.DefaultBranch,
			pipeline.AgentPullTitle(tk.IssueNumber, tk.Title), pipeline.AgentPullBody(tk.IssueNumber, a.Harness, a.VersionNumber)); err != nil {
			return agentEnd{}, retryOrCancel(err)
		}
	}
	a.PRNumber = pr
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpdateAgentRun(ctx, *a); err != nil {
			return err
		}
		return tx.UpsertPullRequest(ctx, db.PullRequest{RepositoryID: repo.ID, Number: pr, HeadSHA: sha, Author: "testfirst[bot]", Open: true,
			Links: []int{tk.IssueNumber}})
	}); err != nil {
		return agentEnd{}, err
	}
	if _, err := w.grades.gradeTicket(ctx, gi, repo, tk, pr, sha, false); err != nil {
		return agentEnd{}, err
	}
	return end, nil
}

// scanResult finds the canaries of cs in everything an implementer
// handed back: its patch and changed files, RESULT.md, what it printed,
// and the bodies and URLs of its egress requests. inChanges is true when
// one is in the changes themselves.
func scanResult(res agent.Result, cs []detect.Canary) (seen []report.CanarySighting, inChanges bool) {
	add := func(where string, b []byte) bool {
		s := detect.ScanBytes(where, b, cs)
		seen = append(seen, s...)
		return len(s) > 0
	}
	inChanges = add("patch", res.Patch)
	for _, c := range res.Changes {
		inChanges = add("change:"+c.Path, c.Content) || add("change:"+c.Path, []byte(c.Path)) || inChanges
	}
	add("RESULT.md", res.Summary)
	add("stdout", res.Stdout)
	add("stderr", res.Stderr)
	for _, e := range res.Egress {
		add("egress body to "+e.Host, e.Body)
		add("egress URL", []byte(e.Host+e.Path))
	}
	return seen, inChanges
}

// maxSummary bounds the RESULT.md kept for the card.
const maxSummary = 64 << 10

// finish records how a run ended, with its audit event and metrics, and
// tells the issue when the run handed back nothing the pipeline goes on
// with. A writer's new version is synced.
func (w *agentWorker) finish(ctx context.Context, log *slog.Logger, gi *github.Installation, repo db.Repository, tk db.Ticket, a db.AgentRun,
	res agent.Result, end agentEnd) error {
	ctx = context.WithoutCancel(ctx)
	a.State, a.Outcome, a.Error, a.FinishedAt = pipeline.AgentCompleted, end.outcome, end.why, time.Now()
	a.ExitCode, a.Duration = res.ExitCode, res.Duration
	if len(res.Summary) > maxSummary {
		res.Summary = res.Summary[:maxSummary]
	}
	a.Summary = string(res.Summary)
	entries := make([]db.EgressEntry, len(res.Egress))
	allowed := 0
	for i, e := range res.Egress {
		entries[i] = db.EgressEntry{Host: e.Host, Method: e.Method, Path: e.Path, Status: e.Status, BytesIn: e.BytesIn, BytesOut: e.BytesOut,
			Allowed: e.Allowed, Refused: e.Refused}
		if e.Allowed {
			allowed++
		}
	}
	a.Egress, _ = json.Marshal(entries)
	if res.EgressReachesGitHub {
		if ws := a.WarningList(); !slices.Contains(ws, pipeline.EgressGitHubWarning) {
			a = withWarnings(a, append(ws, pipeline.EgressGitHubWarning))
		}
	}
	var cancelled bool
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		cur, err := tx.AgentRun(ctx, a.ID)
		if err != nil {
			return err
		}
		if cancelled = cur.State == pipeline.AgentCancelled; cancelled {
			return nil
		}
		if err := tx.UpdateAgentRun(ctx, a); err != nil {
			return err
		}
		if err := audit(ctx, tx, "testfirst", tk.ID, "agent."+string(a.Outcome), map[string]any{"run": a.ID, "role": a.Role, "harness": a.Harness,
			"model_api": a.ModelAPI, "round": a.Round, "version": a.VersionNumber, "pull_request": a.PRNumber, "head_sha": a.HeadSHA,
			"exit_code": a.ExitCode, "timed_out": res.TimedOut, "duration_seconds": a.Duration.Seconds(), "egress_allowed": allowed,
			"egress_refused": len(entries) - allowed, "why": a.Error}); err != nil {
			return err
		}
		if a.Role == pipeline.RoleWriter && a.Outcome == pipeline.OutcomeDelivered {
			return tx.InsertJob(ctx, SyncArgs{Ticket: tk.ID}, nil)
		}
		return nil
	}); err != nil || cancelled {
		return err
	}
	w.metrics.agentRun(string(a.Role), a.Harness, string(a.Outcome), res.Duration, allowed, len(entries)-allowed)
	log.InfoContext(ctx, "agent run ended", "outcome", a.Outcome, "why", a.Error, "exit_code", a.ExitCode, "duration", a.Duration,
		"version", a.VersionNumber, "pull_request", a.PRNumber, "head_sha", a.HeadSHA)
	if a.Outcome == pipeline.OutcomeDelivered || (a.Outcome == pipeline.OutcomeContaminated && a.HeadSHA != "") {
		return nil
	}
	_, err := gi.CreateComment(ctx, repo.Owner, repo.Name, tk.IssueNumber, pipeline.AgentRunComment(a.Role, a.Harness, a.Round, a.Outcome, a.Error))
	return retryOrCancel(err)
}

// watch returns a context that ends, with cause errRunCancelled, when the
// run's row is cancelled.
func (w *agentWorker) watch(ctx context.Context, id int64) (context.Context, func()) {
	return watchCancelled(ctx, w.db, errRunCancelled, func(tx *db.Tx) (bool, error) {
		a, err := tx.AgentRun(ctx, id)
		return a.State == pipeline.AgentCancelled, err
	})
}

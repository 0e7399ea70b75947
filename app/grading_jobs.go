package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/app/pipeline"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/store"
	"github.com/testfirst-app/testfirst/sandbox"
)

// approvedVersions is what the delivery worker reads of the store.
type approvedVersions interface {
	Versions(ctx context.Context, t store.Ticket) ([]store.Version, error)
}

// approvedVersion returns the ticket's approved version, if any: the
// newest version, when it is approved.
func approvedVersion(ctx context.Context, s approvedVersions, t store.Ticket) (*store.Version, error) {
	vs, err := s.Versions(ctx, t)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	if v := vs[len(vs)-1]; v.State == store.StateApproved {
		return &v, nil
	}
	return nil, nil
}

// pullRequest handles a pull request that was opened, pushed to, reopened,
// edited or made ready: every ticket of the repository its body closes,
// with an approved version, gets a grade of the head, once per (head,
// digest).
func (w *DeliveryWorker) pullRequest(ctx context.Context, a DeliveryArgs) error {
	var p struct {
		repoPayload
		Number      int `json:"number"`
		PullRequest struct {
			Body string `json:"body"`
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if w.store == nil {
		return nil
	}
	owner, name := p.Repository.Owner.Login, p.Repository.Name
	for _, ref := range pipeline.Links(p.PullRequest.Body, owner, name) {
		if !strings.EqualFold(ref.Owner, owner) || !strings.EqualFold(ref.Repo, name) {
			continue // tickets live in the pull request's own repository
		}
		if err := w.startGrade(ctx, a, p.repoPayload, ref.Number, p.Number, p.PullRequest.Head.SHA); err != nil {
			return err
		}
	}
	return nil
}

// startGrade records a grade of head for the ticket of issue, puts an
// in-progress check run on the head and enqueues the grade job.
func (w *DeliveryWorker) startGrade(ctx context.Context, a DeliveryArgs, p repoPayload, issue, pr int, head string) error {
	owner, name := p.Repository.Owner.Login, p.Repository.Name
	var (
		tk   db.Ticket
		repo db.Repository
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		tk, err = tx.TicketByIssue(ctx, repo.ID, issue)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil // the issue is no ticket
	}
	if err != nil {
		return err
	}
	st := store.Ticket{Installation: p.Installation.ID, Owner: owner, Repo: name, Issue: issue}
	v, err := approvedVersion(ctx, w.store, st)
	if err != nil || v == nil {
		return err // no approved hidden tests yet: nothing to grade against
	}
	var g db.Grade
	var created bool
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		g, created, err = tx.CreateGrade(ctx, db.Grade{TicketID: tk.ID, PRNumber: pr, HeadSHA: head, Digest: v.Digest, State: db.GradeQueued})
		return err
	}); err != nil {
		return err
	}
	if !created && g.CheckRunID != 0 {
		return nil // graded or being graded already: a redelivery does not grade twice
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	id, err := gi.CreateCheckRun(ctx, owner, name, github.CheckRun{
		Name: pipeline.CheckRunName, HeadSHA: head, Status: github.StatusInProgress, ExternalID: fmt.Sprint(g.ID),
		Title: fmt.Sprintf("grading against hidden tests v%d", v.Number), Summary: "The sealed grader is running the approved hidden tests.",
	})
	if err != nil {
		return retryOrCancel(err)
	}
	w.log.InfoContext(ctx, "grade queued", "delivery", a.Delivery, "installation", p.Installation.ID, "repo", owner+"/"+name, "ticket", tk.ID, "grade", g.ID, "head_sha", head, "digest", v.Digest)
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		g.CheckRunID = id
		if err := tx.UpdateGrade(ctx, g); err != nil {
			return err
		}
		return tx.InsertJob(ctx, GradeArgs{Grade: g.ID}, nil)
	})
}

// checkRun handles a Regrade request or a re-run from the checks tab.
func (w *DeliveryWorker) checkRun(ctx context.Context, a DeliveryArgs) error {
	var p struct {
		CheckRun struct {
			Name       string `json:"name"`
			ExternalID string `json:"external_id"`
		} `json:"check_run"`
		RequestedAction struct {
			Identifier string `json:"identifier"`
		} `json:"requested_action"`
	}
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if p.CheckRun.Name != pipeline.CheckRunName || (a.Action == "requested_action" && p.RequestedAction.Identifier != pipeline.RegradeAction.Identifier) {
		return nil
	}
	var id int64
	if _, err := fmt.Sscan(p.CheckRun.ExternalID, &id); err != nil || id <= 0 {
		return nil // not one of ours
	}
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		g, err := tx.Grade(ctx, id)
		if errors.Is(err, db.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		g.State = db.GradeQueued
		if err := tx.UpdateGrade(ctx, g); err != nil {
			return err
		}
		return tx.InsertJob(ctx, GradeArgs{Grade: g.ID, Regrade: true}, nil)
	})
}

// GradeArgs is the job that grades one pull request head.
type GradeArgs struct {
	Grade   int64 `json:"grade"`
	Regrade bool  `json:"regrade,omitempty"`
}

// Kind implements river.JobArgs.
func (GradeArgs) Kind() string { return "grade" }

// GradeWorker grades: it fetches the base and head trees with the
// installation token outside the sandbox, opens the approved version fresh
// from the store, runs the sealed grader and completes the check run.
type GradeWorker struct {
	river.WorkerDefaults[GradeArgs]
	db        *db.DB
	github    installationClients
	reader    *store.Reader
	grader    *grader.Grader
	publicURL string
	log       *slog.Logger
}

// Timeout bounds a grade job beyond the grade's own limit.
func (w *GradeWorker) Timeout(job *river.Job[GradeArgs]) time.Duration { return time.Hour }

// Work implements river.Worker.
func (w *GradeWorker) Work(ctx context.Context, job *river.Job[GradeArgs]) error {
	err := w.work(ctx, job)
	if err != nil {
		w.log.ErrorContext(ctx, "grade job failed", "grade", job.Args.Grade, "attempt", job.Attempt, "err", err)
	}
	return err
}

func (w *GradeWorker) work(ctx context.Context, job *river.Job[GradeArgs]) error {
	var (
		g    db.Grade
		tk   db.Ticket
		repo db.Repository
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if g, err = tx.Grade(ctx, job.Args.Grade); err != nil {
			return err
		}
		if tk, err = tx.Ticket(ctx, g.TicketID); err != nil {
			return err
		}
		if repo, err = tx.Repository(ctx, tk.RepositoryID); err != nil {
			return err
		}
		g.State, g.StartedAt = db.GradeRunning, time.Now()
		return tx.UpdateGrade(ctx, g)
	})
	if err != nil {
		return err
	}
	log := w.log.With("grade", g.ID, "ticket", tk.ID, "installation", repo.InstallationID, "repo", repo.Owner+"/"+repo.Name)
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	st := store.Ticket{Installation: repo.InstallationID, Owner: repo.Owner, Repo: repo.Name, Issue: tk.IssueNumber}
	content, v, err := w.reader.Open(ctx, st, g.Digest)
	if err != nil {
		return w.refuse(ctx, gi, repo, g, fmt.Sprintf("The hidden tests could not be opened: %v", err))
	}
	cfg, err := repoConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	if err != nil {
		cfg = pipeline.DefaultRepoConfig()
	}
	base, err := w.tree(ctx, gi, repo, tk.BaseSHA)
	if err != nil {
		return retryOrCancel(err)
	}
	head, err := w.tree(ctx, gi, repo, g.HeadSHA)
	if err != nil {
		return retryOrCancel(err)
	}
	hidden, err := content.HiddenTree()
	if err != nil {
		return w.refuse(ctx, gi, repo, g, "The hidden tests are not a valid tree: "+err.Error())
	}
	limits := sandbox.DefaultLimits
	limits.Memory, limits.NanoCPUs, limits.Pids = cfg.Memory, int64(cfg.CPUs*1e9), cfg.Pids
	rep, err := w.grader.Grade(ctx, grader.Request{Repo: head, Hidden: hidden, Base: base, Reference: content.Reference, TestsDigest: g.Digest, Timeout: cfg.Timeout, Limits: limits})
	if err != nil {
		return err // the engine failed: River retries
	}
	cr := pipeline.CompletedCheckRun(g.HeadSHA, pipeline.Graded{Report: rep, Version: v.Number, Digest: g.Digest, Criteria: content.Criteria,
		DetailsURL: strings.TrimSuffix(w.publicURL, "/") + fmt.Sprintf("/grades/%d", g.ID)})
	if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, g.CheckRunID, cr); err != nil {
		return retryOrCancel(err)
	}
	log.InfoContext(ctx, "graded", "verdict", rep.Verdict, "trust", rep.Trust)
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		g.State, g.FinishedAt = db.GradeCompleted, time.Now()
		g.Verdict, g.Trust = string(rep.Verdict), string(rep.Trust)
		c := rep.Counts
		g.Total, g.Passed, g.Failed, g.Errored, g.Skipped = c.Total, c.Passed, c.Failed, c.Errors, c.Skipped
		if err := tx.UpdateGrade(ctx, g); err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]any{"grade": g.ID, "verdict": rep.Verdict, "trust": rep.Trust, "head_sha": g.HeadSHA, "digest": g.Digest})
		return tx.AppendAudit(ctx, db.AuditEvent{Actor: "testfirst", TicketID: tk.ID, Kind: "grade.completed", Detail: detail})
	})
}

// tree downloads the tree at ref.
func (w *GradeWorker) tree(ctx context.Context, gi *github.Installation, repo db.Repository, ref string) (*grader.Tree, error) {
	rc, err := gi.Tarball(ctx, repo.Owner, repo.Name, ref)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	entries, err := github.ExtractTarball(rc)
	if err != nil {
		return nil, err
	}
	files := make([]grader.File, 0, len(entries))
	for _, e := range entries {
		files = append(files, grader.File{Path: e.Path, Mode: e.Mode, Data: e.Data, Link: e.Link})
	}
	return grader.NewTree(files)
}

// refuse completes the check run without grading, saying why.
func (w *GradeWorker) refuse(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, why string) error {
	err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, g.CheckRunID, github.CheckRun{Name: pipeline.CheckRunName, Status: github.StatusCompleted,
		Conclusion: github.ConclusionFailure, Title: "not graded", Summary: why})
	if err != nil {
		return retryOrCancel(err)
	}
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		g.State, g.Verdict, g.FinishedAt = db.GradeCompleted, string(grader.VerdictError), time.Now()
		return tx.UpdateGrade(ctx, g)
	})
}

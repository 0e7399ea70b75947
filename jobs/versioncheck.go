package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/tree"
)

// VersionCheckWorker runs a new version's hidden tests on the ticket's base
// commit (and on the base with the reference patch, when there is one) in
// the sealed sandbox, records which tests exist, which already pass and
// whether the reference passes them all, and asks for the ticket's sync,
// which announces the version.
type VersionCheckWorker struct {
	river.WorkerDefaults[VersionCheckArgs]
	db     *db.DB
	github installationClients
	store  pendingVersions
	grader *grader.Grader
	// sandboxes is the engine the grader runs on; nil when unknown.
	sandboxes Sandboxes
	metrics   *Metrics
	log       *slog.Logger
	// rescueAfter is the service's job rescue time; see SandboxJobTimeout.
	rescueAfter time.Duration
}

// Timeout implements river.Worker; see SandboxJobTimeout.
func (w *VersionCheckWorker) Timeout(*river.Job[VersionCheckArgs]) time.Duration {
	return SandboxJobTimeout(w.rescueAfter)
}

// Work implements river.Worker. An attempt after the first removes the
// sandboxes of the earlier ones first, as a grade's does.
func (w *VersionCheckWorker) Work(ctx context.Context, job *river.Job[VersionCheckArgs]) error {
	removeEarlierSandboxes(ctx, w.sandboxes, w.metrics, w.log, job.JobRow)
	var (
		dv   db.Version
		tk   db.Ticket
		repo db.Repository
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if dv, err = tx.VersionByID(ctx, job.Args.Version); err != nil {
			return err
		}
		if tk, err = tx.Ticket(ctx, dv.TicketID); err != nil {
			return err
		}
		repo, err = tx.Repository(ctx, tk.RepositoryID)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil || dv.Check != nil {
		return err
	}
	log := w.log.With("installation", repo.InstallationID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID, "version", dv.Number)
	content, _, err := w.store.OpenForCheck(ctx, storeTicket(repo, tk.IssueNumber), dv.Number, dv.Digest)
	if err != nil {
		// Decided or superseded meanwhile, or changed in the store: the
		// sync mirrors the first two; the third is refused for good.
		log.WarnContext(ctx, "base check skipped", "err", err)
		return river.JobCancel(err)
	}
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	var check pipeline.VersionCheck
	switch {
	case fc.LoadError != nil:
		return retryOrCancel(fc.LoadError)
	case fc.ParseError != nil:
		check = pipeline.ConfigErrorCheck(fc.ParseError)
	default:
		base, err := downloadTree(ctx, gi, repo, tk.BaseSHA)
		if err != nil {
			return retryOrCancel(err)
		}
		if check, err = w.check(ctx, base, content, fc.Config, jobLabels(job.JobRow, nil)); err != nil {
			return err // the engine failed: River retries
		}
	}
	data, err := json.Marshal(check)
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "base check", "tests", len(check.Tests), "guard_tests", len(check.Base.GuardTests), "valid", check.Valid())
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.SetVersionCheck(ctx, dv.ID, data, time.Now()); err != nil {
			return err
		}
		if err := audit(ctx, tx, "testfirst", tk.ID, "version.checked", map[string]any{"version": dv.Number, "digest": dv.Digest,
			"tests": len(check.Tests), "guard_tests": len(check.Base.GuardTests), "problems": check.Problems()}); err != nil {
			return err
		}
		return tx.InsertJob(ctx, SyncArgs{Ticket: tk.ID}, nil)
	})
}

// check grades the base (with the reference patch applied, when there is
// one) against the hidden tests, in sandboxes labelled with labels. It
// returns an error only when the sandbox engine failed.
func (w *VersionCheckWorker) check(ctx context.Context, base *tree.Tree, content *store.Content, cfg pipeline.RepoConfig, labels map[string]string) (pipeline.VersionCheck, error) {
	hidden, err := content.HiddenTree()
	if err != nil {
		return pipeline.VersionCheck{Error: "the hidden tests are not a valid tree: " + err.Error()}, nil
	}
	// The base is the tree under test and the base run at once (the grader
	// runs it once): the base check says which tests pass, skip or are
	// broken there.
	req := grader.Request{Repo: base, Base: base, Hidden: hidden, Timeout: cfg.Timeout, Limits: sandboxLimits(cfg),
		Python: cfg.Python, TrustedCollection: true, Labels: labels}
	if len(content.Reference) > 0 {
		patched, err := tree.ApplyPatch(base, content.Reference)
		if err != nil {
			return pipeline.VersionCheck{Error: "the reference patch does not apply to the base commit: " + err.Error()}, nil
		}
		// The reference is the tree under test and the reference run at
		// once; the strength checks find flaky tests and grade mutants of
		// the patch.
		req.Repo, req.Base, req.Reference = patched, base, content.Reference
		req.TestStrength = &grader.TestStrength{}
	}
	rep, err := w.grader.Grade(ctx, req)
	if err != nil {
		return pipeline.VersionCheck{}, err
	}
	check := pipeline.VersionCheck{Trust: rep.Trust, Twins: rep.Twins}
	for _, t := range rep.Tests {
		check.Tests = append(check.Tests, t.ID)
	}
	if rep.Verdict == report.VerdictTampered || (rep.Verdict == report.VerdictError && len(rep.Tests) == 0) {
		check.Error = fmt.Sprintf("the run was %s", rep.Verdict)
	}
	if rep.BaseCheck != nil {
		check.Base = *rep.BaseCheck
	}
	if req.Reference == nil {
		return check, nil
	}
	check.Reference = &report.ReferenceCheck{Failed: rep.Failed, Counts: rep.Counts,
		AllPass: rep.Counts.Total > 0 && rep.Counts.Passed > 0 && len(rep.Failed) == 0}
	if rep.ReferenceCheck != nil {
		check.Reference.Skipped = rep.ReferenceCheck.Skipped
		check.Reference.Mutation = rep.ReferenceCheck.Mutation
	}
	return check, nil
}

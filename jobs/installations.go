package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
)

// DeliveryArgs is the job of one webhook delivery that needs work. Intake
// leaves Payload out of the job and records it with the delivery; Work
// fills it in before dispatch (see DeliveryWorker.payload). Jobs enqueued
// before payloads moved out of the job carry it inline.
type DeliveryArgs struct {
	Delivery     string          `json:"delivery"`
	Event        string          `json:"event"`
	Action       string          `json:"action"`
	Installation int64           `json:"installation"`
	Payload      json.RawMessage `json:"payload,omitempty"`
}

// Kind implements river.JobArgs.
func (DeliveryArgs) Kind() string { return "delivery" }

// installationClients is the slice of GitHub the delivery worker needs.
type installationClients interface {
	Installation(id int64) (*github.Installation, error)
}

// DeliveryWorker handles the deliveries that need work; see NeedsJob.
type DeliveryWorker struct {
	river.WorkerDefaults[DeliveryArgs]
	db     *db.DB
	github installationClients
	// grades starts and cancels grades; see grading.
	grades grading
	log    *slog.Logger
}

// installationPayload is the part of installation and
// installation_repositories payloads the worker reads.
type installationPayload struct {
	Installation struct {
		ID      int64 `json:"id"`
		Account struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"account"`
	} `json:"installation"`
	Repositories        []repoRef `json:"repositories"`
	RepositoriesAdded   []repoRef `json:"repositories_added"`
	RepositoriesRemoved []repoRef `json:"repositories_removed"`
	Sender              struct {
		Login string `json:"login"`
	} `json:"sender"`
}

type repoRef struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
}

// Work implements river.Worker: it hands the delivery to its event's
// handler (see eventHandlers).
func (w *DeliveryWorker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	payload, err := w.payload(ctx, job.Args)
	if err != nil {
		return err
	}
	job.Args.Payload = payload
	h, ok := handlerFor(job.Args.Event, job.Args.Action)
	if !ok {
		return river.JobCancel(fmt.Errorf("delivery %s: no handler for %s.%s", job.Args.Delivery, job.Args.Event, job.Args.Action))
	}
	if err = h(w, ctx, job.Args); err != nil {
		// The job's edge: logged once here, retried or stopped by River.
		w.log.ErrorContext(ctx, "delivery job failed", "delivery", job.Args.Delivery, "installation", job.Args.Installation,
			"event", job.Args.Event, "action", job.Args.Action, "attempt", job.Attempt, "err", err)
	}
	return err
}

// installation handles installation and installation_repositories events.
func (w *DeliveryWorker) installation(ctx context.Context, a DeliveryArgs) error {
	log := w.log.With("delivery", a.Delivery, "installation", a.Installation, "event", a.Event, "action", a.Action)
	var p installationPayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	now := time.Now()
	var labelRepos []repoRef
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		in := db.Installation{ID: p.Installation.ID, AccountLogin: p.Installation.Account.Login, AccountType: p.Installation.Account.Type}
		kind := a.Event + "." + a.Action
		var err error
		switch kind {
		case "installation.created", "installation.new_permissions_accepted", "installation.unsuspend":
			if err = tx.UpsertInstallation(ctx, in); err == nil && a.Action == "unsuspend" {
				err = tx.SetInstallationSuspended(ctx, in.ID, time.Time{})
			}
			labelRepos = p.Repositories
			err = errors.Join(err, w.upsertRepos(ctx, tx, in, p.Repositories))
		case "installation.suspend":
			err = tx.SetInstallationSuspended(ctx, in.ID, now)
		case "installation.deleted":
			err = tx.DeleteInstallation(ctx, in.ID, now)
		case "installation_repositories.added":
			if err = tx.UpsertInstallation(ctx, in); err == nil {
				err = w.upsertRepos(ctx, tx, in, p.RepositoriesAdded)
			}
			labelRepos = p.RepositoriesAdded
		case "installation_repositories.removed":
			for _, r := range p.RepositoriesRemoved {
				if err = tx.RemoveRepository(ctx, r.ID, now); err != nil {
					break
				}
			}
		default:
			return river.JobCancel(fmt.Errorf("delivery %s: no handler for %s", a.Delivery, kind))
		}
		if err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]any{"delivery": a.Delivery, "installation": in.ID, "repositories": len(p.Repositories) + len(p.RepositoriesAdded) + len(p.RepositoriesRemoved)})
		return tx.AppendAudit(ctx, db.AuditEvent{Actor: p.Sender.Login, Kind: kind, Detail: detail})
	})
	if err != nil {
		return fmt.Errorf("delivery %s: %w", a.Delivery, err)
	}
	if len(labelRepos) == 0 {
		log.InfoContext(ctx, "delivery handled")
		return nil
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	for _, r := range labelRepos {
		owner, name := splitFullName(r.FullName, p.Installation.Account.Login, r.Name)
		for _, l := range appLabels {
			if err := gi.EnsureLabel(ctx, owner, name, l); err != nil {
				return retryOrCancel(err)
			}
		}
	}
	log.InfoContext(ctx, "delivery handled", "labelled", len(labelRepos))
	return nil
}

func (w *DeliveryWorker) upsertRepos(ctx context.Context, tx *db.Tx, in db.Installation, repos []repoRef) error {
	for _, r := range repos {
		owner, name := splitFullName(r.FullName, in.AccountLogin, r.Name)
		if err := tx.UpsertRepository(ctx, db.Repository{ID: r.ID, InstallationID: in.ID, Owner: owner, Name: name}); err != nil {
			return err
		}
	}
	return nil
}

// splitFullName splits "owner/name", falling back to owner and name.
func splitFullName(full, owner, name string) (string, string) {
	if o, n, ok := strings.Cut(full, "/"); ok {
		return o, n
	}
	return owner, name
}

package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
)

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
			// Only this installation's repositories: one transferred to
			// another account's installation keeps its id there, and this
			// installation's removal of it (delivered late, or sent again)
			// must not remove it from the other.
			for _, r := range p.RepositoriesRemoved {
				err = tx.RemoveRepository(ctx, in.ID, r.ID, now)
				if errors.Is(err, db.ErrNotFound) {
					log.InfoContext(ctx, "repository not removed: it is unknown or another installation's", "repository", r.ID)
					err = nil
				}
				if err != nil {
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

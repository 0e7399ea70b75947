package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/app/pipeline"
	"github.com/testfirst-app/testfirst/github"
)

// Ticket states.
const (
	TicketWriting = "writing"
)

// repoPayload is the repository and installation part of a payload.
type repoPayload struct {
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		DefaultBranch string `json:"default_branch"`
		Owner         struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"owner"`
	} `json:"repository"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
}

// record upserts the installation and repository a payload names.
func (p repoPayload) record(ctx context.Context, tx *db.Tx) (db.Repository, error) {
	r := p.Repository
	if err := tx.UpsertInstallation(ctx, db.Installation{ID: p.Installation.ID, AccountLogin: r.Owner.Login, AccountType: r.Owner.Type}); err != nil {
		return db.Repository{}, err
	}
	repo := db.Repository{ID: r.ID, InstallationID: p.Installation.ID, Owner: r.Owner.Login, Name: r.Name, DefaultBranch: r.DefaultBranch}
	return repo, tx.UpsertRepository(ctx, repo)
}

// repoConfig reads .github/testfirst.yml from the default branch, never
// from a pull request's head. A missing file means the defaults.
func repoConfig(ctx context.Context, gi *github.Installation, owner, repo, branch string) (pipeline.RepoConfig, error) {
	data, err := gi.File(ctx, owner, repo, branch, pipeline.RepoConfigPath)
	if errors.Is(err, github.ErrNotFound) {
		return pipeline.DefaultRepoConfig(), nil
	}
	if err != nil {
		return pipeline.RepoConfig{}, err
	}
	return pipeline.ParseRepoConfig(data)
}

// issue handles issues.labeled: the configured label opens a ticket with
// its base pinned to the default branch's head.
func (w *DeliveryWorker) issue(ctx context.Context, a DeliveryArgs) error {
	var p struct {
		repoPayload
		Label struct {
			Name string `json:"name"`
		} `json:"label"`
		Issue struct {
			Number int `json:"number"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	owner, name := p.Repository.Owner.Login, p.Repository.Name
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	cfg, err := repoConfig(ctx, gi, owner, name, p.Repository.DefaultBranch)
	var apiErr *github.APIError
	if err != nil && !errors.As(err, &apiErr) {
		// The repository's config is wrong: say exactly what, where the
		// requester looks.
		_, cerr := gi.CreateComment(ctx, owner, name, p.Issue.Number, "testfirst cannot read its configuration:\n\n```\n"+err.Error()+"\n```")
		if cerr != nil {
			return retryOrCancel(cerr)
		}
		return nil
	}
	if err != nil {
		return retryOrCancel(err)
	}
	if !strings.EqualFold(p.Label.Name, cfg.Label) {
		return nil
	}
	base, err := gi.BranchHead(ctx, owner, name, p.Repository.DefaultBranch)
	if err != nil {
		return retryOrCancel(err)
	}
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		repo, err := p.record(ctx, tx)
		if err != nil {
			return err
		}
		tk, created, err := tx.OpenTicket(ctx, db.Ticket{RepositoryID: repo.ID, IssueNumber: p.Issue.Number, Requester: p.Sender.Login, BaseSHA: base, State: TicketWriting, Label: cfg.Label})
		if err != nil || !created {
			return err
		}
		detail, _ := json.Marshal(map[string]any{"delivery": a.Delivery, "base_sha": base, "issue": p.Issue.Number})
		w.log.InfoContext(ctx, "ticket opened", "delivery", a.Delivery, "installation", p.Installation.ID, "repo", owner+"/"+name, "ticket", tk.ID, "base_sha", base)
		return tx.AppendAudit(ctx, db.AuditEvent{Actor: p.Sender.Login, TicketID: tk.ID, Kind: "ticket.opened", Detail: detail})
	})
}

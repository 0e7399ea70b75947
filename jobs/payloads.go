package jobs

import (
	"context"

	"github.com/testfirst-app/testfirst/db"
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
		ID    int64  `json:"id"`
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

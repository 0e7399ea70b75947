package db

import (
	"context"
	"fmt"
	"time"
)

// Installation is a GitHub App installation.
type Installation struct {
	ID           int64 // GitHub's installation id
	AccountLogin string
	AccountType  string // "User" or "Organization"
	SuspendedAt  time.Time
	DeletedAt    time.Time
}

// Repository is a repository an installation gives the app.
type Repository struct {
	ID             int64 // GitHub's repository id
	InstallationID int64
	Owner, Name    string
	DefaultBranch  string
	RemovedAt      time.Time
}

// UpsertInstallation records an installation or refreshes it; a deleted one
// comes back (installed again). Suspension is left as it is.
func (t *Tx) UpsertInstallation(ctx context.Context, in Installation) error {
	at := t.dia.time(now())
	_, err := t.q.exec(ctx, `INSERT INTO installations (id, account_login, account_type, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (id) DO UPDATE SET account_login = excluded.account_login, account_type = excluded.account_type,
    deleted_at = NULL, updated_at = excluded.updated_at`, in.ID, in.AccountLogin, in.AccountType, at)
	if err != nil {
		return fmt.Errorf("upsert installation %d: %w", in.ID, err)
	}
	return nil
}

// SetInstallationSuspended marks an installation suspended at the given
// time, or unsuspended when at is zero. ErrNotFound when it is unknown.
func (t *Tx) SetInstallationSuspended(ctx context.Context, id int64, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("suspend installation %d", id),
		"UPDATE installations SET suspended_at = $2, updated_at = $3 WHERE id = $1", id, t.dia.time(at), t.dia.time(now()))
}

// DeleteInstallation marks an installation deleted (uninstalled); its rows
// stay for the audit log. ErrNotFound when it is unknown.
func (t *Tx) DeleteInstallation(ctx context.Context, id int64, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("delete installation %d", id),
		"UPDATE installations SET deleted_at = $2, updated_at = $2 WHERE id = $1", id, t.dia.time(at))
}

// Installation returns one installation; ErrNotFound when it is unknown.
func (t *Tx) Installation(ctx context.Context, id int64) (Installation, error) {
	in := Installation{ID: id}
	err := t.q.queryRow(ctx, "SELECT account_login, account_type, suspended_at, deleted_at FROM installations WHERE id = $1", id).
		Scan(&in.AccountLogin, &in.AccountType, timeCol{&in.SuspendedAt}, timeCol{&in.DeletedAt})
	if err != nil {
		return Installation{}, fmt.Errorf("get installation %d: %w", id, err)
	}
	return in, nil
}

// UpsertRepository records a repository or refreshes its name, installation
// and default branch; a removed one comes back.
func (t *Tx) UpsertRepository(ctx context.Context, r Repository) error {
	at := t.dia.time(now())
	_, err := t.q.exec(ctx, `INSERT INTO repositories (id, installation_id, owner, name, default_branch, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $6)
ON CONFLICT (id) DO UPDATE SET installation_id = excluded.installation_id, owner = excluded.owner, name = excluded.name,
    default_branch = CASE WHEN excluded.default_branch = '' THEN repositories.default_branch ELSE excluded.default_branch END,
    removed_at = NULL, updated_at = excluded.updated_at`,
		r.ID, r.InstallationID, r.Owner, r.Name, r.DefaultBranch, at)
	if err != nil {
		return fmt.Errorf("upsert repository %s/%s: %w", r.Owner, r.Name, err)
	}
	return nil
}

// RemoveRepository marks a repository no longer given to installation.
// A repository moves between installations when it is transferred, keeping
// its id: one installation's removal must not remove it from another.
// ErrNotFound when the repository is unknown or belongs to another
// installation.
func (t *Tx) RemoveRepository(ctx context.Context, installation, id int64, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("remove repository %d of installation %d", id, installation),
		"UPDATE repositories SET removed_at = $3, updated_at = $3 WHERE id = $1 AND installation_id = $2", id, installation, t.dia.time(at))
}

// Repository returns one repository; ErrNotFound when it is unknown.
func (t *Tx) Repository(ctx context.Context, id int64) (Repository, error) {
	r := Repository{ID: id}
	err := t.q.queryRow(ctx, "SELECT installation_id, owner, name, default_branch, removed_at FROM repositories WHERE id = $1", id).
		Scan(&r.InstallationID, &r.Owner, &r.Name, &r.DefaultBranch, timeCol{&r.RemovedAt})
	if err != nil {
		return Repository{}, fmt.Errorf("get repository %d: %w", id, err)
	}
	return r, nil
}

// updateOne runs an UPDATE that must touch a row; ErrNotFound otherwise.
func (t *Tx) updateOne(ctx context.Context, what, query string, args ...any) error {
	n, err := t.q.exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

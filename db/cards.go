package db

import (
	"context"
	"fmt"
)

// RepoTicket is a ticket with its repository.
type RepoTicket struct {
	Ticket
	Repo Repository
}

// RepositoryByName returns the repository owner/name, compared without
// case as GitHub does; of several rows (a repository deleted and made
// again) the one still given to the app and most recently seen.
// ErrNotFound when there is none.
func (t *Tx) RepositoryByName(ctx context.Context, owner, name string) (Repository, error) {
	var r Repository
	err := t.q.queryRow(ctx, `SELECT id, installation_id, owner, name, default_branch, removed_at FROM repositories
WHERE lower(owner) = lower($1) AND lower(name) = lower($2)
ORDER BY CASE WHEN removed_at IS NULL THEN 0 ELSE 1 END, updated_at DESC, id DESC LIMIT 1`, owner, name).
		Scan(&r.ID, &r.InstallationID, &r.Owner, &r.Name, &r.DefaultBranch, timeCol{&r.RemovedAt})
	if err != nil {
		return Repository{}, fmt.Errorf("get repository %s/%s: %w", owner, name, err)
	}
	return r, nil
}

// OpenTickets lists, newest first, up to limit tickets whose issue is open
// and labelled, with their repositories (those still given to the app).
func (t *Tx) OpenTickets(ctx context.Context, limit int) ([]RepoTicket, error) {
	rs, err := t.q.query(ctx, "SELECT "+prefixed("t.", ticketColumns)+`, r.installation_id, r.owner, r.name, r.default_branch
FROM tickets t JOIN repositories r ON r.id = t.repository_id
WHERE t.closed_at IS NULL AND t.withdrawn_at IS NULL AND r.removed_at IS NULL
ORDER BY t.id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list open tickets: %w", err)
	}
	defer rs.Close()
	var out []RepoTicket
	for rs.Next() {
		var rt RepoTicket
		tk := &rt.Ticket
		if err := rs.Scan(&tk.ID, &tk.RepositoryID, &tk.IssueNumber, &tk.Requester, &tk.RequesterID, &tk.BaseSHA, &tk.State, &tk.Label,
			&tk.Title, &tk.Body, timeCol{&tk.ClosedAt}, timeCol{&tk.WithdrawnAt}, timeCol{&tk.CreatedAt}, timeCol{&tk.UpdatedAt},
			&rt.Repo.InstallationID, &rt.Repo.Owner, &rt.Repo.Name, &rt.Repo.DefaultBranch); err != nil {
			return nil, fmt.Errorf("list open tickets: %w", err)
		}
		rt.Repo.ID = tk.RepositoryID
		out = append(out, rt)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list open tickets: %w", err)
	}
	return out, nil
}

// TicketGrades lists a ticket's grades, newest first.
func (t *Tx) TicketGrades(ctx context.Context, ticketID int64) ([]Grade, error) {
	return t.grades(ctx, fmt.Sprintf("list grades of ticket %d", ticketID),
		"SELECT "+gradeColumns+" FROM grades WHERE ticket_id = $1 ORDER BY id DESC", ticketID)
}

// Rejections counts a ticket's rejected versions (state "rejected", the
// store's name): after the repository's approval.max_rejections the
// ticket stops.
func (t *Tx) Rejections(ctx context.Context, ticketID int64) (int, error) {
	var n int
	if err := t.q.queryRow(ctx, "SELECT count(*) FROM versions WHERE ticket_id = $1 AND state = 'rejected'", ticketID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rejections of ticket %d: %w", ticketID, err)
	}
	return n, nil
}

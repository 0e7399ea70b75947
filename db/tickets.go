package db

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// Ticket is one labelled issue going through the pipeline.
type Ticket struct {
	ID           int64
	RepositoryID int64
	IssueNumber  int
	Requester    string
	// RequesterID is the requester's numeric GitHub user id: their login
	// can pass to another account, the id cannot. 0 when unknown (tickets
	// opened before it was kept).
	RequesterID int64
	BaseSHA     string
	State       pipeline.TicketState
	Label       string
	// Title and Body are the issue as last seen.
	Title string
	Body  string
	// ClosedAt is set while the issue is closed; WithdrawnAt while its
	// label is off.
	ClosedAt    time.Time
	WithdrawnAt time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const ticketColumns = "id, repository_id, issue_number, requester, requester_id, base_sha, state, label, title, body, closed_at, withdrawn_at, created_at, updated_at"

func scanTicket(r row) (Ticket, error) {
	var tk Ticket
	err := r.Scan(&tk.ID, &tk.RepositoryID, &tk.IssueNumber, &tk.Requester, &tk.RequesterID, &tk.BaseSHA, &tk.State, &tk.Label,
		&tk.Title, &tk.Body, timeCol{&tk.ClosedAt}, timeCol{&tk.WithdrawnAt}, timeCol{&tk.CreatedAt}, timeCol{&tk.UpdatedAt})
	return tk, err
}

// OpenTicket creates the ticket for (repository, issue) unless one exists.
// It returns the ticket and whether it was created; an existing ticket is
// returned unchanged.
func (t *Tx) OpenTicket(ctx context.Context, tk Ticket) (Ticket, bool, error) {
	at := t.dia.time(now())
	n, err := t.q.exec(ctx, `INSERT INTO tickets (repository_id, issue_number, requester, requester_id, base_sha, state, label, title, body, created_at, updated_at)
VALUES ($1, $2, $3, $10, $4, $5, $6, $7, $8, $9, $9)
ON CONFLICT (repository_id, issue_number) DO NOTHING`,
		tk.RepositoryID, tk.IssueNumber, tk.Requester, tk.BaseSHA, string(tk.State), tk.Label, tk.Title, tk.Body, at, tk.RequesterID)
	if err != nil {
		return Ticket{}, false, fmt.Errorf("open ticket for issue #%d: %w", tk.IssueNumber, err)
	}
	got, err := t.TicketByIssue(ctx, tk.RepositoryID, tk.IssueNumber)
	return got, n == 1, err
}

// Ticket returns one ticket; ErrNotFound when there is none.
func (t *Tx) Ticket(ctx context.Context, id int64) (Ticket, error) {
	tk, err := scanTicket(t.q.queryRow(ctx, "SELECT "+ticketColumns+" FROM tickets WHERE id = $1", id))
	if err != nil {
		return Ticket{}, fmt.Errorf("get ticket %d: %w", id, err)
	}
	return tk, nil
}

// TicketByIssue returns the ticket of an issue; ErrNotFound when there is none.
func (t *Tx) TicketByIssue(ctx context.Context, repositoryID int64, issue int) (Ticket, error) {
	tk, err := scanTicket(t.q.queryRow(ctx, "SELECT "+ticketColumns+" FROM tickets WHERE repository_id = $1 AND issue_number = $2",
		repositoryID, issue))
	if err != nil {
		return Ticket{}, fmt.Errorf("get ticket for issue #%d: %w", issue, err)
	}
	return tk, nil
}

// SetTicketState moves a ticket to state. ErrNotFound when there is no such
// ticket.
func (t *Tx) SetTicketState(ctx context.Context, id int64, state pipeline.TicketState) error {
	return t.updateOne(ctx, fmt.Sprintf("set ticket %d state %s", id, state),
		"UPDATE tickets SET state = $2, updated_at = $3 WHERE id = $1", id, string(state), t.dia.time(now()))
}

// SetTicketBase re-pins a ticket's base commit. ErrNotFound when there is no
// such ticket.
func (t *Tx) SetTicketBase(ctx context.Context, id int64, baseSHA string) error {
	return t.updateOne(ctx, fmt.Sprintf("set ticket %d base %s", id, baseSHA),
		"UPDATE tickets SET base_sha = $2, updated_at = $3 WHERE id = $1", id, baseSHA, t.dia.time(now()))
}

// SetTicketIssue stores the issue's title and body as last seen.
// ErrNotFound when there is no such ticket.
func (t *Tx) SetTicketIssue(ctx context.Context, id int64, title, body string) error {
	return t.updateOne(ctx, fmt.Sprintf("set ticket %d issue text", id),
		"UPDATE tickets SET title = $2, body = $3, updated_at = $4 WHERE id = $1", id, title, body, t.dia.time(now()))
}

// SetTicketClosed marks the ticket's issue closed at at, or open again when
// at is zero. ErrNotFound when there is no such ticket.
func (t *Tx) SetTicketClosed(ctx context.Context, id int64, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set ticket %d closed", id),
		"UPDATE tickets SET closed_at = $2, updated_at = $3 WHERE id = $1", id, t.dia.time(at), t.dia.time(now()))
}

// SetTicketWithdrawn marks the ticket's label removed at at, or put back
// when at is zero. ErrNotFound when there is no such ticket.
func (t *Tx) SetTicketWithdrawn(ctx context.Context, id int64, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set ticket %d withdrawn", id),
		"UPDATE tickets SET withdrawn_at = $2, updated_at = $3 WHERE id = $1", id, t.dia.time(at), t.dia.time(now()))
}

// ActiveTickets lists the tickets whose issue is open and labelled and
// whose state is not one of done, oldest first.
func (t *Tx) ActiveTickets(ctx context.Context, done ...pipeline.TicketState) ([]Ticket, error) {
	rs, err := t.q.query(ctx, "SELECT "+ticketColumns+" FROM tickets WHERE closed_at IS NULL AND withdrawn_at IS NULL ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("list active tickets: %w", err)
	}
	defer rs.Close()
	var tks []Ticket
	for rs.Next() {
		tk, err := scanTicket(rs)
		if err != nil {
			return nil, fmt.Errorf("list active tickets: %w", err)
		}
		if !slices.Contains(done, tk.State) {
			tks = append(tks, tk)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list active tickets: %w", err)
	}
	return tks, nil
}

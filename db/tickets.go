package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// ErrDigestMismatch is returned by Approve when the digest given is not the
// version's: an approval binds one exact set of tests.
var ErrDigestMismatch = errors.New("digest does not match the version")

// ErrAlreadySigned is returned by Approve when the signer has approved the
// version before.
var ErrAlreadySigned = errors.New("already signed this version")

// Ticket is one labelled issue going through the pipeline.
type Ticket struct {
	ID           int64
	RepositoryID int64
	IssueNumber  int
	Requester    string
	BaseSHA      string
	State        pipeline.TicketState
	Label        string
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

// Version is the metadata of one version of a ticket's hidden tests; the
// files live in the store.
type Version struct {
	ID        int64
	TicketID  int64
	Number    int
	Digest    string
	State     pipeline.VersionState
	Author    string
	CreatedAt time.Time
	// Check is the base check's result as JSON, nil until it ran.
	Check     json.RawMessage
	CheckedAt time.Time
	// ReadyAt is when the version was announced ready for review.
	ReadyAt time.Time
	// Announced is the state last told on the issue.
	Announced       pipeline.Announcement
	RejectionReason string
}

// Approval binds one version's digest, by whom and when.
type Approval struct {
	ID         int64
	VersionID  int64
	ApprovedBy string
	ApprovedAt time.Time
	Digest     string
	// ReviewSeconds is how long the signer had the card: from the
	// version's ready_at to the approval.
	ReviewSeconds int64
	// Fast is true when ReviewSeconds was under the repository's
	// fast-approval threshold: counted, not blocked.
	Fast bool
}

const ticketColumns = "id, repository_id, issue_number, requester, base_sha, state, label, title, body, closed_at, withdrawn_at, created_at, updated_at"

func scanTicket(r row) (Ticket, error) {
	var tk Ticket
	err := r.Scan(&tk.ID, &tk.RepositoryID, &tk.IssueNumber, &tk.Requester, &tk.BaseSHA, &tk.State, &tk.Label,
		&tk.Title, &tk.Body, timeCol{&tk.ClosedAt}, timeCol{&tk.WithdrawnAt}, timeCol{&tk.CreatedAt}, timeCol{&tk.UpdatedAt})
	return tk, err
}

// OpenTicket creates the ticket for (repository, issue) unless one exists.
// It returns the ticket and whether it was created; an existing ticket is
// returned unchanged.
func (t *Tx) OpenTicket(ctx context.Context, tk Ticket) (Ticket, bool, error) {
	at := t.dia.time(now())
	n, err := t.q.exec(ctx, `INSERT INTO tickets (repository_id, issue_number, requester, base_sha, state, label, title, body, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
ON CONFLICT (repository_id, issue_number) DO NOTHING`,
		tk.RepositoryID, tk.IssueNumber, tk.Requester, tk.BaseSHA, string(tk.State), tk.Label, tk.Title, tk.Body, at)
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

// AddVersion records the ticket's next version (1, 2, …) and returns it with
// its number. It fails when the ticket does not exist.
func (t *Tx) AddVersion(ctx context.Context, v Version) (Version, error) {
	v.CreatedAt = now()
	err := t.q.queryRow(ctx, `INSERT INTO versions (ticket_id, number, digest, state, author, created_at)
SELECT $1, COALESCE(MAX(number), 0) + 1, $2, $3, $4, $5 FROM versions WHERE ticket_id = $1
RETURNING id, number`, v.TicketID, v.Digest, string(v.State), v.Author, t.dia.time(v.CreatedAt)).Scan(&v.ID, &v.Number)
	if err != nil {
		return Version{}, fmt.Errorf("add version to ticket %d: %w", v.TicketID, err)
	}
	return v, nil
}

// Versions lists a ticket's versions, oldest first.
func (t *Tx) Versions(ctx context.Context, ticketID int64) ([]Version, error) {
	rs, err := t.q.query(ctx, "SELECT "+versionColumns+" FROM versions WHERE ticket_id = $1 ORDER BY number", ticketID)
	if err != nil {
		return nil, fmt.Errorf("list versions of ticket %d: %w", ticketID, err)
	}
	defer rs.Close()
	var vs []Version
	for rs.Next() {
		v, err := scanVersion(rs)
		if err != nil {
			return nil, fmt.Errorf("list versions of ticket %d: %w", ticketID, err)
		}
		vs = append(vs, v)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list versions of ticket %d: %w", ticketID, err)
	}
	return vs, nil
}

// SetVersionState sets a version's state (for example "rejected").
// ErrNotFound when there is no such version.
func (t *Tx) SetVersionState(ctx context.Context, id int64, state pipeline.VersionState) error {
	return t.updateOne(ctx, fmt.Sprintf("set version %d state %s", id, state),
		"UPDATE versions SET state = $2 WHERE id = $1", id, string(state))
}

// Approve records an approval (one signature) of a version. It fails with
// ErrDigestMismatch when a.Digest is not the version's digest (or the
// version does not exist), and with ErrAlreadySigned when a.ApprovedBy has
// signed the version before.
func (t *Tx) Approve(ctx context.Context, a Approval) (Approval, error) {
	if a.ApprovedAt.IsZero() {
		a.ApprovedAt = now()
	}
	var n int
	if err := t.q.queryRow(ctx, "SELECT count(*) FROM approvals WHERE version_id = $1 AND lower(approved_by) = lower($2)",
		a.VersionID, a.ApprovedBy).Scan(&n); err != nil {
		return Approval{}, fmt.Errorf("approve version %d: %w", a.VersionID, err)
	}
	if n > 0 {
		return Approval{}, fmt.Errorf("approve version %d: %s: %w", a.VersionID, a.ApprovedBy, ErrAlreadySigned)
	}
	err := t.q.queryRow(ctx, `INSERT INTO approvals (version_id, approved_by, approved_at, digest, review_seconds, fast)
SELECT id, $2, $3, digest, $5, $6 FROM versions WHERE id = $1 AND digest = $4
RETURNING id`, a.VersionID, a.ApprovedBy, t.dia.time(a.ApprovedAt), a.Digest, a.ReviewSeconds, a.Fast).Scan(&a.ID)
	if errors.Is(err, ErrNotFound) {
		return Approval{}, fmt.Errorf("approve version %d: %w", a.VersionID, ErrDigestMismatch)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("approve version %d: %w", a.VersionID, err)
	}
	return a, nil
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

package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// ErrDigestMismatch is returned by Approve when the digest given is not the
// version's: an approval binds one exact set of tests.
var ErrDigestMismatch = errors.New("digest does not match the version")

// ErrAlreadySigned is returned by Approve when the signer has approved the
// version before.
var ErrAlreadySigned = errors.New("already signed this version")

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
	// ApproverID is the numeric GitHub user id of the account that
	// signed; 0 for signatures made before ids were kept (and for the
	// store sync's mirror of an approval the card did not record).
	ApproverID int64
	ApprovedAt time.Time
	Digest     string
	// ReviewSeconds is how long the signer had the card: from the
	// version's ready_at to the approval.
	ReviewSeconds int64
	// Fast is true when ReviewSeconds was under the repository's
	// fast-approval threshold: counted, not blocked.
	Fast bool
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
// version does not exist), and with ErrAlreadySigned when a.ApprovedBy, or
// the account a.ApproverID under any login, has signed the version before.
func (t *Tx) Approve(ctx context.Context, a Approval) (Approval, error) {
	if a.ApprovedAt.IsZero() {
		a.ApprovedAt = now()
	}
	var n int
	if err := t.q.queryRow(ctx, "SELECT count(*) FROM approvals WHERE version_id = $1 AND (lower(approved_by) = lower($2) OR (CAST($3 AS BIGINT) <> 0 AND approver_id = CAST($3 AS BIGINT)))",
		a.VersionID, a.ApprovedBy, a.ApproverID).Scan(&n); err != nil {
		return Approval{}, fmt.Errorf("approve version %d: %w", a.VersionID, err)
	}
	if n > 0 {
		return Approval{}, fmt.Errorf("approve version %d: %s: %w", a.VersionID, a.ApprovedBy, ErrAlreadySigned)
	}
	err := t.q.queryRow(ctx, `INSERT INTO approvals (version_id, approved_by, approver_id, approved_at, digest, review_seconds, fast)
SELECT id, $2, $7, $3, digest, $5, $6 FROM versions WHERE id = $1 AND digest = $4
RETURNING id`, a.VersionID, a.ApprovedBy, t.dia.time(a.ApprovedAt), a.Digest, a.ReviewSeconds, a.Fast, a.ApproverID).Scan(&a.ID)
	if errors.Is(err, ErrNotFound) {
		return Approval{}, fmt.Errorf("approve version %d: %w", a.VersionID, ErrDigestMismatch)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("approve version %d: %w", a.VersionID, err)
	}
	return a, nil
}

const versionColumns = `id, ticket_id, number, digest, state, author, created_at,
check_result, checked_at, ready_at, announced, rejection_reason`

func scanVersion(r row) (Version, error) {
	var v Version
	err := r.Scan(&v.ID, &v.TicketID, &v.Number, &v.Digest, &v.State, &v.Author, timeCol{&v.CreatedAt},
		jsonCol{&v.Check}, timeCol{&v.CheckedAt}, timeCol{&v.ReadyAt}, &v.Announced, &v.RejectionReason)
	return v, err
}

// MirrorVersion records a version the store holds under its own number,
// unless the ticket has it already. It returns the recorded version and
// whether it was created; an existing one is returned unchanged.
func (t *Tx) MirrorVersion(ctx context.Context, v Version) (Version, bool, error) {
	if v.CreatedAt.IsZero() {
		v.CreatedAt = now()
	}
	n, err := t.q.exec(ctx, `INSERT INTO versions (ticket_id, number, digest, state, author, created_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (ticket_id, number) DO NOTHING`, v.TicketID, v.Number, v.Digest, string(v.State), v.Author, t.dia.time(v.CreatedAt))
	if err != nil {
		return Version{}, false, fmt.Errorf("record version %d of ticket %d: %w", v.Number, v.TicketID, err)
	}
	got, err := t.Version(ctx, v.TicketID, v.Number)
	return got, n == 1, err
}

// RecordStoreVersion is how a version the store holds enters the
// database, from the store sync and from the card alike: recorded pending
// (a decision is recorded after, by SetVersionDecision, as its own
// transition) unless the ticket has it already. It returns the recorded
// version and whether it was created, and fails when the database holds
// another digest under the version's number.
func (t *Tx) RecordStoreVersion(ctx context.Context, ticketID int64, number int, digest, author string, created time.Time) (Version, bool, error) {
	v, fresh, err := t.MirrorVersion(ctx, Version{TicketID: ticketID, Number: number, Digest: digest, State: pipeline.VersionPending, Author: author, CreatedAt: created})
	if err != nil {
		return Version{}, false, err
	}
	if v.Digest != digest {
		return Version{}, false, fmt.Errorf("version %d of ticket %d: the store says %s, the database %s", number, ticketID, digest, v.Digest)
	}
	return v, fresh, nil
}

// Version returns a ticket's version by number; ErrNotFound when there is
// none.
func (t *Tx) Version(ctx context.Context, ticketID int64, number int) (Version, error) {
	v, err := scanVersion(t.q.queryRow(ctx, "SELECT "+versionColumns+" FROM versions WHERE ticket_id = $1 AND number = $2", ticketID, number))
	if err != nil {
		return Version{}, fmt.Errorf("get version %d of ticket %d: %w", number, ticketID, err)
	}
	return v, nil
}

// VersionByID returns one version; ErrNotFound when there is none.
func (t *Tx) VersionByID(ctx context.Context, id int64) (Version, error) {
	v, err := scanVersion(t.q.queryRow(ctx, "SELECT "+versionColumns+" FROM versions WHERE id = $1", id))
	if err != nil {
		return Version{}, fmt.Errorf("get version %d: %w", id, err)
	}
	return v, nil
}

// SetVersionCheck stores the base check's result. ErrNotFound when there is
// no such version.
func (t *Tx) SetVersionCheck(ctx context.Context, id int64, check json.RawMessage, at time.Time) error {
	if !json.Valid(check) {
		return fmt.Errorf("set check of version %d: result is not valid JSON", id)
	}
	return t.updateOne(ctx, fmt.Sprintf("set check of version %d", id),
		"UPDATE versions SET check_result = $2, checked_at = $3 WHERE id = $1", id, jsonArg(check), t.dia.time(at))
}

// SetVersionReady records when the version was announced ready for review.
// ErrNotFound when there is no such version.
func (t *Tx) SetVersionReady(ctx context.Context, id int64, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set version %d ready", id),
		"UPDATE versions SET ready_at = $2 WHERE id = $1", id, t.dia.time(at))
}

// SetVersionDecision records a version's state after a decision and the
// reason of a rejection. ErrNotFound when there is no such version.
func (t *Tx) SetVersionDecision(ctx context.Context, id int64, state pipeline.VersionState, reason string) error {
	return t.updateOne(ctx, fmt.Sprintf("set version %d state %s", id, state),
		"UPDATE versions SET state = $2, rejection_reason = $3 WHERE id = $1", id, string(state), reason)
}

// SetVersionAnnounced records the state last told on the issue.
// ErrNotFound when there is no such version.
func (t *Tx) SetVersionAnnounced(ctx context.Context, id int64, state pipeline.Announcement) error {
	return t.updateOne(ctx, fmt.Sprintf("set version %d announced %s", id, state),
		"UPDATE versions SET announced = $2 WHERE id = $1", id, string(state))
}

// Approvals lists a version's approvals, oldest first.
func (t *Tx) Approvals(ctx context.Context, versionID int64) ([]Approval, error) {
	rs, err := t.q.query(ctx, "SELECT id, version_id, approved_by, approver_id, approved_at, digest, review_seconds, fast FROM approvals WHERE version_id = $1 ORDER BY id", versionID)
	if err != nil {
		return nil, fmt.Errorf("list approvals of version %d: %w", versionID, err)
	}
	defer rs.Close()
	var as []Approval
	for rs.Next() {
		var a Approval
		if err := rs.Scan(&a.ID, &a.VersionID, &a.ApprovedBy, &a.ApproverID, timeCol{&a.ApprovedAt}, &a.Digest, &a.ReviewSeconds, &a.Fast); err != nil {
			return nil, fmt.Errorf("list approvals of version %d: %w", versionID, err)
		}
		as = append(as, a)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list approvals of version %d: %w", versionID, err)
	}
	return as, nil
}

// ClaimAnnouncement moves a version's announced state from from to to, and
// reports whether this call did: of several replicas syncing the same
// version, one posts each comment.
func (t *Tx) ClaimAnnouncement(ctx context.Context, id int64, from, to pipeline.Announcement) (bool, error) {
	n, err := t.q.exec(ctx, "UPDATE versions SET announced = $3 WHERE id = $1 AND announced = $2", id, string(from), string(to))
	if err != nil {
		return false, fmt.Errorf("claim announcement %s of version %d: %w", to, id, err)
	}
	return n == 1, nil
}

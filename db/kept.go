package db

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The states of a ticket's kept tests.
const (
	// KeptWaitingMerge: the tests go into a follow-up pull request once
	// the pull request that passed is merged.
	KeptWaitingMerge = "waiting_merge"
	// KeptDone: the tests are in the repository (or in its follow-up pull
	// request), public.
	KeptDone = "kept"
)

// KeptTests is what became of a ticket's approved hidden tests under
// keep_tests: one row per ticket at most.
type KeptTests struct {
	TicketID int64
	// PRNumber is the pull request that passed and was approved.
	PRNumber int
	// Mode is the repository's keep_tests when they were kept (commit or
	// follow_up; a fork's commit falls back to follow_up).
	Mode  string
	State string
	// Version and Digest are the approved version kept.
	Version int
	Digest  string
	// ApprovedBy is the reviewer whose approval of the pull request kept
	// them.
	ApprovedBy string
	// Note says why the mode differs from the repository's (a fork).
	Note string
	// Branch is where the commit went; ParentSHA the head it follows (the
	// head that passed, for a commit onto the pull request); CommitSHA
	// the commit; FollowUpPR the follow-up pull request, 0 for none.
	Branch     string
	ParentSHA  string
	CommitSHA  string
	FollowUpPR int
	CreatedAt  time.Time
	KeptAt     time.Time
}

const keptColumns = `ticket_id, pr_number, mode, state, version, digest, approved_by, note, branch, parent_sha, commit_sha, follow_up_pr,
created_at, kept_at`

// KeptTestsOf returns a ticket's kept tests; the error wraps ErrNotFound
// when it has none.
func (t *Tx) KeptTestsOf(ctx context.Context, ticketID int64) (KeptTests, error) {
	var k KeptTests
	err := t.q.queryRow(ctx, "SELECT "+keptColumns+" FROM kept_tests WHERE ticket_id = $1", ticketID).Scan(&k.TicketID, &k.PRNumber, &k.Mode,
		&k.State, &k.Version, &k.Digest, &k.ApprovedBy, &k.Note, &k.Branch, &k.ParentSHA, &k.CommitSHA, &k.FollowUpPR,
		timeCol{&k.CreatedAt}, timeCol{&k.KeptAt})
	if err != nil {
		return KeptTests{}, fmt.Errorf("read kept tests of ticket %d: %w", ticketID, err)
	}
	return k, nil
}

// ErrKeptAlready is returned by SaveKeptTests for a ticket whose tests
// were kept already: a ticket's tests are kept once.
var ErrKeptAlready = errors.New("the ticket's tests were kept already")

// SaveKeptTests records k: the ticket's first row, or its waiting row
// brought up to date. A ticket whose tests are kept already is left as it
// is (ErrKeptAlready).
func (t *Tx) SaveKeptTests(ctx context.Context, k KeptTests) error {
	if k.CreatedAt.IsZero() {
		k.CreatedAt = now()
	}
	n, err := t.q.exec(ctx, `INSERT INTO kept_tests (`+keptColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (ticket_id) DO UPDATE SET pr_number = excluded.pr_number, mode = excluded.mode, state = excluded.state, version = excluded.version,
digest = excluded.digest, approved_by = excluded.approved_by, note = excluded.note, branch = excluded.branch, parent_sha = excluded.parent_sha,
commit_sha = excluded.commit_sha, follow_up_pr = excluded.follow_up_pr, kept_at = excluded.kept_at
WHERE kept_tests.state <> 'kept'`,
		k.TicketID, k.PRNumber, k.Mode, k.State, k.Version, k.Digest, k.ApprovedBy, k.Note, k.Branch, k.ParentSHA, k.CommitSHA, k.FollowUpPR,
		t.dia.time(k.CreatedAt), t.dia.time(k.KeptAt))
	if err != nil {
		return fmt.Errorf("record kept tests of ticket %d: %w", k.TicketID, err)
	}
	if n == 0 {
		return ErrKeptAlready
	}
	return nil
}

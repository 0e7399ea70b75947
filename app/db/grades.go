package db

import (
	"context"
	"fmt"
	"time"
)

// Grade is one grading of a PR head against one approved digest.
type Grade struct {
	ID         int64
	TicketID   int64
	PRNumber   int
	HeadSHA    string
	Digest     string
	CheckRunID int64
	State      string // e.g. queued, running, completed, cancelled
	Verdict    string
	Trust      string
	Total      int
	Passed     int
	Failed     int
	Errored    int
	Skipped    int
	StartedAt  time.Time
	FinishedAt time.Time
	CreatedAt  time.Time
}

const gradeColumns = `id, ticket_id, pr_number, head_sha, digest, check_run_id, state, verdict, trust,
total, passed, failed, errored, skipped, started_at, finished_at, created_at`

func scanGrade(r row) (Grade, error) {
	var g Grade
	err := r.Scan(&g.ID, &g.TicketID, &g.PRNumber, &g.HeadSHA, &g.Digest, &g.CheckRunID, &g.State, &g.Verdict, &g.Trust,
		&g.Total, &g.Passed, &g.Failed, &g.Errored, &g.Skipped,
		timeCol{&g.StartedAt}, timeCol{&g.FinishedAt}, timeCol{&g.CreatedAt})
	return g, err
}

// CreateGrade records a grade for (head SHA, digest) unless one exists, and
// returns the grade with whether it was created. A redelivered event thus
// finds the existing grade and must not grade again.
func (t *Tx) CreateGrade(ctx context.Context, g Grade) (Grade, bool, error) {
	n, err := t.q.exec(ctx, `INSERT INTO grades (ticket_id, pr_number, head_sha, digest, check_run_id, state, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (head_sha, digest) DO NOTHING`,
		g.TicketID, g.PRNumber, g.HeadSHA, g.Digest, g.CheckRunID, g.State, t.dia.time(now()))
	if err != nil {
		return Grade{}, false, fmt.Errorf("create grade of %s: %w", g.HeadSHA, err)
	}
	got, err := t.GradeByHead(ctx, g.HeadSHA, g.Digest)
	return got, n == 1, err
}

// GradeByHead returns the grade of a head SHA against a digest; ErrNotFound
// when there is none.
func (t *Tx) GradeByHead(ctx context.Context, headSHA, digest string) (Grade, error) {
	g, err := scanGrade(t.q.queryRow(ctx, "SELECT "+gradeColumns+" FROM grades WHERE head_sha = $1 AND digest = $2", headSHA, digest))
	if err != nil {
		return Grade{}, fmt.Errorf("get grade of %s: %w", headSHA, err)
	}
	return g, nil
}

// Grade returns one grade; ErrNotFound when there is none.
func (t *Tx) Grade(ctx context.Context, id int64) (Grade, error) {
	g, err := scanGrade(t.q.queryRow(ctx, "SELECT "+gradeColumns+" FROM grades WHERE id = $1", id))
	if err != nil {
		return Grade{}, fmt.Errorf("get grade %d: %w", id, err)
	}
	return g, nil
}

// UpdateGrade stores a grade's check run, state, verdict, trust, counts and
// times (by g.ID). ErrNotFound when there is no such grade.
func (t *Tx) UpdateGrade(ctx context.Context, g Grade) error {
	return t.updateOne(ctx, fmt.Sprintf("update grade %d", g.ID), `UPDATE grades SET check_run_id = $2, state = $3,
verdict = $4, trust = $5, total = $6, passed = $7, failed = $8, errored = $9, skipped = $10,
started_at = $11, finished_at = $12 WHERE id = $1`,
		g.ID, g.CheckRunID, g.State, g.Verdict, g.Trust, g.Total, g.Passed, g.Failed, g.Errored, g.Skipped,
		t.dia.time(g.StartedAt), t.dia.time(g.FinishedAt))
}

// GradesInState lists grades in a state, oldest first: at start-up, the
// ones left running by a crash.
func (t *Tx) GradesInState(ctx context.Context, state string) ([]Grade, error) {
	rs, err := t.q.query(ctx, "SELECT "+gradeColumns+" FROM grades WHERE state = $1 ORDER BY id", state)
	if err != nil {
		return nil, fmt.Errorf("list grades %s: %w", state, err)
	}
	defer rs.Close()
	var gs []Grade
	for rs.Next() {
		g, err := scanGrade(rs)
		if err != nil {
			return nil, fmt.Errorf("list grades %s: %w", state, err)
		}
		gs = append(gs, g)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list grades %s: %w", state, err)
	}
	return gs, nil
}

package db

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The states of a regression run.
const (
	RegressionQueued    = "queued"
	RegressionRunning   = "running"
	RegressionCompleted = "completed"
)

// RegressionRun is the regression run of a pull request's grade: one per
// grade at most.
type RegressionRun struct {
	GradeID  int64
	TicketID int64
	HeadSHA  string
	State    string
	// Verdict is the run's report.Regressions verdict once completed.
	Verdict string
	// Report is its public part: counts and ids, no output.
	Report json.RawMessage
	// Output is the pull request's run's output: the requester's only.
	Output string
	// CheckRunID is its check run, 0 before it is made.
	CheckRunID int64
	CreatedAt  time.Time
	FinishedAt time.Time
}

const regressionColumns = `grade_id, ticket_id, head_sha, state, verdict, report, output, check_run_id, created_at, finished_at`

// RegressionRunOf returns the regression run of a grade; the error wraps
// ErrNotFound when it has none.
func (t *Tx) RegressionRunOf(ctx context.Context, gradeID int64) (RegressionRun, error) {
	var r RegressionRun
	var report *string
	err := t.q.queryRow(ctx, "SELECT "+regressionColumns+" FROM regression_runs WHERE grade_id = $1", gradeID).Scan(&r.GradeID, &r.TicketID,
		&r.HeadSHA, &r.State, &r.Verdict, &report, &r.Output, &r.CheckRunID, timeCol{&r.CreatedAt}, timeCol{&r.FinishedAt})
	if err != nil {
		return RegressionRun{}, fmt.Errorf("read the regression run of grade %d: %w", gradeID, err)
	}
	if report != nil {
		r.Report = json.RawMessage(*report)
	}
	return r, nil
}

// SaveRegressionRun records r: the grade's first row, or its row brought
// up to date.
func (t *Tx) SaveRegressionRun(ctx context.Context, r RegressionRun) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now()
	}
	var report any
	if len(r.Report) > 0 {
		if !json.Valid(r.Report) {
			return fmt.Errorf("record the regression run of grade %d: its report is not JSON", r.GradeID)
		}
		report = string(r.Report)
	}
	_, err := t.q.exec(ctx, `INSERT INTO regression_runs (`+regressionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (grade_id) DO UPDATE SET head_sha = excluded.head_sha, state = excluded.state, verdict = excluded.verdict, report = excluded.report,
output = excluded.output, check_run_id = excluded.check_run_id, finished_at = excluded.finished_at`,
		r.GradeID, r.TicketID, r.HeadSHA, r.State, r.Verdict, report, r.Output, r.CheckRunID, t.dia.time(r.CreatedAt), t.dia.time(r.FinishedAt))
	if err != nil {
		return fmt.Errorf("record the regression run of grade %d: %w", r.GradeID, err)
	}
	return nil
}

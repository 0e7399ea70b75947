package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// Grade is one grading of a PR head against one approved digest.
type Grade struct {
	ID         int64
	TicketID   int64
	PRNumber   int
	HeadSHA    string
	Digest     string
	CheckRunID int64
	// JobID is the River job grading it, 0 before it is enqueued.
	JobID int64
	// VersionNumber is the hidden-test version Digest belongs to.
	VersionNumber int
	// InstallationID is the installation the grade runs for.
	InstallationID int64
	State          pipeline.GradeState
	Verdict        string
	Trust          string
	Total          int
	Passed         int
	Failed         int
	Errored        int
	Skipped        int
	StartedAt      time.Time
	FinishedAt     time.Time
	CreatedAt      time.Time
}

const gradeColumns = `id, ticket_id, pr_number, head_sha, digest, check_run_id, job_id, version_number, installation_id, state, verdict, trust,
total, passed, failed, errored, skipped, started_at, finished_at, created_at`

func scanGrade(r row) (Grade, error) {
	var g Grade
	err := r.Scan(&g.ID, &g.TicketID, &g.PRNumber, &g.HeadSHA, &g.Digest, &g.CheckRunID, &g.JobID, &g.VersionNumber, &g.InstallationID, &g.State, &g.Verdict, &g.Trust,
		&g.Total, &g.Passed, &g.Failed, &g.Errored, &g.Skipped,
		timeCol{&g.StartedAt}, timeCol{&g.FinishedAt}, timeCol{&g.CreatedAt})
	return g, err
}

// CreateGrade records a grade for (head SHA, digest) unless one exists, and
// returns the grade with whether it was created. A redelivered event thus
// finds the existing grade and must not grade again.
func (t *Tx) CreateGrade(ctx context.Context, g Grade) (Grade, bool, error) {
	n, err := t.q.exec(ctx, `INSERT INTO grades (ticket_id, pr_number, head_sha, digest, check_run_id, version_number, installation_id, state, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (head_sha, digest) DO NOTHING`,
		g.TicketID, g.PRNumber, g.HeadSHA, g.Digest, g.CheckRunID, g.VersionNumber, g.InstallationID, string(g.State), t.dia.time(now()))
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

// UpdateGrade stores a grade's state, verdict, trust, counts, times and job
// (by g.ID); never its check run, which only ClaimCheckRun and SetCheckRun
// write, so a stale copy cannot undo them. ErrNotFound when there is no
// such grade.
func (t *Tx) UpdateGrade(ctx context.Context, g Grade) error {
	return t.updateOne(ctx, fmt.Sprintf("update grade %d", g.ID), `UPDATE grades SET state = $2,
verdict = $3, trust = $4, total = $5, passed = $6, failed = $7, errored = $8, skipped = $9,
started_at = $10, finished_at = $11, job_id = $12 WHERE id = $1`,
		g.ID, string(g.State), g.Verdict, g.Trust, g.Total, g.Passed, g.Failed, g.Errored, g.Skipped,
		t.dia.time(g.StartedAt), t.dia.time(g.FinishedAt), g.JobID)
}

// CheckRunClaimed marks, in a grade's check_run_id, that a process is
// creating the grade's check run.
const CheckRunClaimed = -1

// ClaimCheckRun claims the creation of a grade's check run: it reports true
// to the one caller that found none and no other claim. ErrNotFound when
// there is no such grade.
func (t *Tx) ClaimCheckRun(ctx context.Context, id int64) (bool, error) {
	n, err := t.q.exec(ctx, "UPDATE grades SET check_run_id = $2 WHERE id = $1 AND check_run_id = 0", id, CheckRunClaimed)
	if err != nil {
		return false, fmt.Errorf("claim check run of grade %d: %w", id, err)
	}
	return n == 1, nil
}

// SetCheckRun records a grade's check run. ErrNotFound when there is no
// such grade.
func (t *Tx) SetCheckRun(ctx context.Context, id, checkRun int64) error {
	return t.updateOne(ctx, fmt.Sprintf("set check run of grade %d", id), "UPDATE grades SET check_run_id = $2 WHERE id = $1", id, checkRun)
}

// GradesInState lists grades in a state, oldest first: at start-up, the
// ones left running by a crash.
func (t *Tx) GradesInState(ctx context.Context, state pipeline.GradeState) ([]Grade, error) {
	return t.grades(ctx, "list grades "+string(state), "SELECT "+gradeColumns+" FROM grades WHERE state = $1 ORDER BY id", string(state))
}

// UnfinishedGrades lists a ticket's queued and running grades, oldest
// first.
func (t *Tx) UnfinishedGrades(ctx context.Context, ticketID int64) ([]Grade, error) {
	return t.grades(ctx, fmt.Sprintf("list unfinished grades of ticket %d", ticketID),
		"SELECT "+gradeColumns+" FROM grades WHERE ticket_id = $1 AND state IN ($2, $3) ORDER BY id", ticketID, string(pipeline.GradeQueued), string(pipeline.GradeRunning))
}

// UnfinishedPullGrades lists the queued and running grades of a pull
// request of a repository, oldest first.
func (t *Tx) UnfinishedPullGrades(ctx context.Context, repositoryID int64, pr int) ([]Grade, error) {
	return t.grades(ctx, fmt.Sprintf("list unfinished grades of pull request #%d", pr),
		"SELECT "+prefixed("grades.", gradeColumns)+` FROM grades JOIN tickets ON tickets.id = grades.ticket_id
WHERE tickets.repository_id = $1 AND grades.pr_number = $2 AND grades.state IN ($3, $4) ORDER BY grades.id`,
		repositoryID, pr, string(pipeline.GradeQueued), string(pipeline.GradeRunning))
}

// QueuedGrades counts an installation's grades waiting for their job.
func (t *Tx) QueuedGrades(ctx context.Context, installationID int64) (int, error) {
	var n int
	if err := t.q.queryRow(ctx, "SELECT count(*) FROM grades WHERE installation_id = $1 AND state = $2", installationID, string(pipeline.GradeQueued)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count queued grades of installation %d: %w", installationID, err)
	}
	return n, nil
}

// RequesterOnly are the keys of a grade's report that only the requester
// (and the ticket's maintainers and admins) may read: the runner's output
// and the real names of parametrized cases quote the hidden tests. They
// are kept in grades.requester_only, apart from the rest of the report,
// which holds nothing the check run does not already say.
var RequesterOnly = []string{"output", "output_truncated", "case_names"}

// SetGradeReport keeps a grade's full report: its RequesterOnly keys in
// one column, the rest in another (see GradeReport and
// GradeReportForRequester). ErrNotFound when there is no such grade.
func (t *Tx) SetGradeReport(ctx context.Context, id int64, report json.RawMessage) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(report, &keys); err != nil || keys == nil {
		return fmt.Errorf("set report of grade %d: report is not a JSON object", id)
	}
	private := map[string]json.RawMessage{}
	for _, k := range RequesterOnly {
		if v, ok := keys[k]; ok {
			private[k] = v
			delete(keys, k)
		}
	}
	shared, err := json.Marshal(keys)
	if err != nil {
		return fmt.Errorf("set report of grade %d: %w", id, err)
	}
	only, err := json.Marshal(private)
	if err != nil {
		return fmt.Errorf("set report of grade %d: %w", id, err)
	}
	return t.updateOne(ctx, fmt.Sprintf("set report of grade %d", id), "UPDATE grades SET report = $2, requester_only = $3 WHERE id = $1",
		id, jsonArg(shared), jsonArg(only))
}

// GradeReport returns a grade's report without its RequesterOnly keys:
// what anyone who reads the repository may see. nil when it has none yet,
// ErrNotFound when there is no such grade.
func (t *Tx) GradeReport(ctx context.Context, id int64) (json.RawMessage, error) {
	var m json.RawMessage
	if err := t.q.queryRow(ctx, "SELECT report FROM grades WHERE id = $1", id).Scan(jsonCol{&m}); err != nil {
		return nil, fmt.Errorf("get report of grade %d: %w", id, err)
	}
	return m, nil
}

// GradeReportForRequester returns a grade's full report, the runner's
// output included: only for those who decide on the ticket's tests. nil
// when it has none yet, ErrNotFound when there is no such grade.
func (t *Tx) GradeReportForRequester(ctx context.Context, id int64) (json.RawMessage, error) {
	var shared, private json.RawMessage
	if err := t.q.queryRow(ctx, "SELECT report, requester_only FROM grades WHERE id = $1", id).Scan(jsonCol{&shared}, jsonCol{&private}); err != nil {
		return nil, fmt.Errorf("get the requester's report of grade %d: %w", id, err)
	}
	if len(shared) == 0 || len(private) == 0 {
		return shared, nil
	}
	var keys, extra map[string]json.RawMessage
	if err := json.Unmarshal(shared, &keys); err != nil {
		return nil, fmt.Errorf("get the requester's report of grade %d: %w", id, err)
	}
	if err := json.Unmarshal(private, &extra); err != nil {
		return nil, fmt.Errorf("get the requester's report of grade %d: %w", id, err)
	}
	for k, v := range extra {
		keys[k] = v
	}
	full, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("get the requester's report of grade %d: %w", id, err)
	}
	return full, nil
}

func (t *Tx) grades(ctx context.Context, what, query string, args ...any) ([]Grade, error) {
	rs, err := t.q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rs.Close()
	var gs []Grade
	for rs.Next() {
		g, err := scanGrade(rs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		gs = append(gs, g)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return gs, nil
}

// prefixed qualifies each column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// GradesOfHead lists the grades of a head SHA, against any digest, oldest
// first.
func (t *Tx) GradesOfHead(ctx context.Context, headSHA string) ([]Grade, error) {
	return t.grades(ctx, "list grades of "+headSHA, "SELECT "+gradeColumns+" FROM grades WHERE head_sha = $1 ORDER BY id", headSHA)
}

// UnfinishedGradesAll lists every queued and running grade, oldest first.
func (t *Tx) UnfinishedGradesAll(ctx context.Context) ([]Grade, error) {
	return t.grades(ctx, "list unfinished grades", "SELECT "+gradeColumns+" FROM grades WHERE state IN ($1, $2) ORDER BY id", string(pipeline.GradeQueued), string(pipeline.GradeRunning))
}

// JobFinished reports whether River's job id is in a final state
// (completed, cancelled or discarded) or gone; a grade whose job finished
// without finishing the grade needs its check run closed.
func (t *Tx) JobFinished(ctx context.Context, id int64) (bool, error) {
	var state string
	err := t.q.queryRow(ctx, "SELECT state FROM river_job WHERE id = $1", id).Scan(&state)
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get state of job %d: %w", id, err)
	}
	return state == "completed" || state == "cancelled" || state == "discarded", nil
}

// GradeAttempt is a finished attempt of a grade that was graded again:
// what it said, kept when the regrade started the grade's row over.
type GradeAttempt struct {
	Attempt        int
	State          pipeline.GradeState
	Verdict, Trust string
	Passed, Total  int
	StartedAt      time.Time
	FinishedAt     time.Time
}

// KeepAttempt copies what grade id said, report included (not its
// requester-only part: no page shows an attempt's output), into its
// earlier attempts, as the next of them: a regrade is about to start the
// row over. A grade that is not finished keeps nothing.
func (t *Tx) KeepAttempt(ctx context.Context, id int64) error {
	_, err := t.q.exec(ctx, `INSERT INTO grade_attempts (grade_id, attempt, state, verdict, trust, passed, total, report, started_at, finished_at)
SELECT id, (SELECT COUNT(*) FROM grade_attempts WHERE grade_id = $1) + 1, state, verdict, trust, passed, total, report, started_at, finished_at
FROM grades WHERE id = $1 AND state NOT IN ($2, $3)`, id, string(pipeline.GradeQueued), string(pipeline.GradeRunning))
	if err != nil {
		return fmt.Errorf("keep the attempt of grade %d: %w", id, err)
	}
	return nil
}

// GradeAttempts lists grade id's earlier attempts, oldest first.
func (t *Tx) GradeAttempts(ctx context.Context, id int64) ([]GradeAttempt, error) {
	rs, err := t.q.query(ctx, "SELECT attempt, state, verdict, trust, passed, total, started_at, finished_at FROM grade_attempts WHERE grade_id = $1 ORDER BY attempt", id)
	if err != nil {
		return nil, fmt.Errorf("list attempts of grade %d: %w", id, err)
	}
	defer rs.Close()
	var out []GradeAttempt
	for rs.Next() {
		var a GradeAttempt
		var state string
		if err := rs.Scan(&a.Attempt, &state, &a.Verdict, &a.Trust, &a.Passed, &a.Total, timeCol{&a.StartedAt}, timeCol{&a.FinishedAt}); err != nil {
			return nil, fmt.Errorf("list attempts of grade %d: %w", id, err)
		}
		a.State = pipeline.GradeState(state)
		out = append(out, a)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list attempts of grade %d: %w", id, err)
	}
	return out, nil
}

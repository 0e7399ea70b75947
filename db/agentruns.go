package db

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// AgentRun is one run of a ticket's writer or implementer.
type AgentRun struct {
	ID       int64
	TicketID int64
	Role     pipeline.AgentRole
	Harness  string
	ModelAPI string
	// Round counts the runs of Role on the ticket (for an implementer,
	// against Digest), from 1.
	Round int
	// Digest is the approved version an implementer works against; empty
	// for a writer.
	Digest string
	// VersionNumber is the version a writer's run became, or the approved
	// version an implementer's works against; 0 before.
	VersionNumber int
	State         pipeline.AgentRunState
	Outcome       pipeline.AgentOutcome
	// Feedback is what the run was told of the last round.
	Feedback string
	// PRNumber and HeadSHA are the pull request and the commit an
	// implementer's run made.
	PRNumber int
	HeadSHA  string
	JobID    int64
	ExitCode int
	Duration time.Duration
	// Summary is the agent's RESULT.md.
	Summary string
	// Egress is the run's egress log, Sightings its canary sightings,
	// Warnings what its grades and the card must say (JSON arrays).
	Egress    json.RawMessage
	Sightings json.RawMessage
	Warnings  json.RawMessage
	// Error says why the run failed, was refused or could not happen.
	Error      string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
}

// EgressEntry is one record of a run's egress log (AgentRun.Egress) as
// the card and the audit log keep it: never its body.
type EgressEntry struct {
	Host     string `json:"host"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	Status   int    `json:"status"`
	BytesIn  int64  `json:"bytes_in"`
	BytesOut int64  `json:"bytes_out"`
	Allowed  bool   `json:"allowed"`
	Refused  string `json:"refused,omitempty"`
}

// WarningList is the run's warnings (AgentRun.Warnings).
func (a AgentRun) WarningList() []string {
	var ws []string
	_ = json.Unmarshal(a.Warnings, &ws)
	return ws
}

// TicketWarnings is the union of runs' warnings, in the order first seen:
// what every grade of their ticket and its card say.
func TicketWarnings(runs []AgentRun) []string {
	var out []string
	for _, r := range runs {
		for _, w := range r.WarningList() {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

const agentRunColumns = `id, ticket_id, role, harness, model_api, round, digest, version_number, state, outcome, feedback, pr_number, head_sha,
job_id, exit_code, duration_ms, summary, egress, sightings, warnings, error, created_at, started_at, finished_at`

func scanAgentRun(r row) (AgentRun, error) {
	var (
		a  AgentRun
		ms int64
	)
	err := r.Scan(&a.ID, &a.TicketID, &a.Role, &a.Harness, &a.ModelAPI, &a.Round, &a.Digest, &a.VersionNumber, &a.State, &a.Outcome, &a.Feedback,
		&a.PRNumber, &a.HeadSHA, &a.JobID, &a.ExitCode, &ms, &a.Summary, jsonCol{&a.Egress}, jsonCol{&a.Sightings}, jsonCol{&a.Warnings}, &a.Error,
		timeCol{&a.CreatedAt}, timeCol{&a.StartedAt}, timeCol{&a.FinishedAt})
	a.Duration = time.Duration(ms) * time.Millisecond
	return a, err
}

// jsonArray is raw JSON for a NOT NULL array column: "[]" when empty.
func jsonArray(m json.RawMessage) string {
	if len(m) == 0 {
		return "[]"
	}
	return string(m)
}

// CreateAgentRun records a run unless the ticket has one of that role,
// digest and round, and returns the run with whether it was created: a
// repeated event starts no second run of a round.
func (t *Tx) CreateAgentRun(ctx context.Context, a AgentRun) (AgentRun, bool, error) {
	n, err := t.q.exec(ctx, `INSERT INTO agent_runs (ticket_id, role, harness, model_api, round, digest, version_number, state, outcome, feedback,
warnings, error, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (ticket_id, role, digest, round) DO NOTHING`,
		a.TicketID, string(a.Role), a.Harness, a.ModelAPI, a.Round, a.Digest, a.VersionNumber, string(a.State), string(a.Outcome), a.Feedback,
		jsonArray(a.Warnings), a.Error, t.dia.time(now()))
	if err != nil {
		return AgentRun{}, false, fmt.Errorf("record %s run of ticket %d: %w", a.Role, a.TicketID, err)
	}
	got, err := scanAgentRun(t.q.queryRow(ctx, "SELECT "+agentRunColumns+" FROM agent_runs WHERE ticket_id = $1 AND role = $2 AND digest = $3 AND round = $4",
		a.TicketID, string(a.Role), a.Digest, a.Round))
	if err != nil {
		return AgentRun{}, false, fmt.Errorf("get %s run of ticket %d: %w", a.Role, a.TicketID, err)
	}
	return got, n == 1, nil
}

// AgentRun returns one run; ErrNotFound when there is none.
func (t *Tx) AgentRun(ctx context.Context, id int64) (AgentRun, error) {
	a, err := scanAgentRun(t.q.queryRow(ctx, "SELECT "+agentRunColumns+" FROM agent_runs WHERE id = $1", id))
	if err != nil {
		return AgentRun{}, fmt.Errorf("get agent run %d: %w", id, err)
	}
	return a, nil
}

// UpdateAgentRun stores everything of a run but its ticket, role, harness,
// round and digest. ErrNotFound when there is no such run.
func (t *Tx) UpdateAgentRun(ctx context.Context, a AgentRun) error {
	return t.updateOne(ctx, fmt.Sprintf("update agent run %d", a.ID), `UPDATE agent_runs SET model_api = $2, version_number = $3, state = $4,
outcome = $5, feedback = $6, pr_number = $7, head_sha = $8, job_id = $9, exit_code = $10, duration_ms = $11, summary = $12, egress = $13,
sightings = $14, warnings = $15, error = $16, started_at = $17, finished_at = $18 WHERE id = $1`,
		a.ID, a.ModelAPI, a.VersionNumber, string(a.State), string(a.Outcome), a.Feedback, a.PRNumber, a.HeadSHA, a.JobID, a.ExitCode,
		a.Duration.Milliseconds(), a.Summary, jsonArray(a.Egress), jsonArray(a.Sightings), jsonArray(a.Warnings), a.Error,
		t.dia.time(a.StartedAt), t.dia.time(a.FinishedAt))
}

// AgentRuns lists a ticket's runs, oldest first.
func (t *Tx) AgentRuns(ctx context.Context, ticketID int64) ([]AgentRun, error) {
	return t.agentRuns(ctx, fmt.Sprintf("list agent runs of ticket %d", ticketID),
		"SELECT "+agentRunColumns+" FROM agent_runs WHERE ticket_id = $1 ORDER BY id", ticketID)
}

func (t *Tx) agentRuns(ctx context.Context, what, query string, args ...any) ([]AgentRun, error) {
	rs, err := t.q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rs.Close()
	var out []AgentRun
	for rs.Next() {
		a, err := scanAgentRun(rs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, a)
	}
	return out, rs.Err()
}

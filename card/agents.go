package card

import (
	"encoding/json"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
)

// agentRunView is a run as the pages show it.
func agentRunView(a db.AgentRun) handlers.AgentRunView {
	v := handlers.AgentRunView{Role: string(a.Role), Harness: a.Harness, ModelAPI: a.ModelAPI, Round: a.Round, State: string(a.State),
		Outcome: string(a.Outcome), Version: a.VersionNumber, PR: a.PRNumber, HeadSHA: a.HeadSHA, Feedback: a.Feedback, Summary: a.Summary,
		Error: a.Error, Duration: a.Duration, Started: a.StartedAt}
	var egress []db.EgressEntry
	_ = json.Unmarshal(a.Egress, &egress)
	for _, e := range egress {
		v.Egress = append(v.Egress, handlers.EgressView{Host: e.Host, Method: e.Method, Path: e.Path, Status: e.Status, BytesIn: e.BytesIn,
			BytesOut: e.BytesOut, Allowed: e.Allowed, Refused: e.Refused})
	}
	return v
}

// writerOf is the writer run that became version k, nil when a person
// pushed it.
func writerOf(runs []db.AgentRun, k int) *handlers.AgentRunView {
	for _, r := range runs {
		if r.Role == pipeline.RoleWriter && r.VersionNumber == k && r.Outcome == pipeline.OutcomeDelivered {
			v := agentRunView(r)
			return &v
		}
	}
	return nil
}

// implementerRuns are the ticket's implementer runs, oldest first.
func implementerRuns(runs []db.AgentRun) []handlers.AgentRunView {
	var out []handlers.AgentRunView
	for _, r := range runs {
		if r.Role == pipeline.RoleImplementer {
			out = append(out, agentRunView(r))
		}
	}
	return out
}

// writerAtWork is the ticket's writer run still queued or running, if any:
// until it delivers, the card of a ticket without versions says so.
func writerAtWork(runs []db.AgentRun) *handlers.AgentRunView {
	for _, r := range runs {
		if r.Role == pipeline.RoleWriter && r.State.Unfinished() {
			v := agentRunView(r)
			return &v
		}
	}
	return nil
}

package handlers

import "time"

// AgentRunView is one run of a ticket's writer or implementer, as the
// card and the grade page show it.
type AgentRunView struct {
	Role     string
	Harness  string
	ModelAPI string
	Round    int
	State    string
	Outcome  string
	// Version is the version a writer's run became, or the approved
	// version an implementer's worked against.
	Version int
	// PR and HeadSHA are the pull request and commit an implementer's run
	// made.
	PR      int
	HeadSHA string
	// Feedback is what the run was told of the last round: the
	// requester's reason for a writer, counts and ids for an implementer.
	Feedback string
	// Summary is the agent's RESULT.md; Egress its egress log. The grade
	// page shows them to those who see the runner's output only.
	Summary  string
	Egress   []EgressView
	Error    string
	Duration time.Duration
	Started  time.Time
}

// EgressView is one request an agent sent through the egress proxy.
type EgressView struct {
	Host     string
	Method   string
	Path     string
	Status   int
	BytesIn  int64
	BytesOut int64
	Allowed  bool
	Refused  string
}

package agent

// Role is what an agent is asked to do.
type Role string

// The roles of an agent.
const (
	// RoleWriter writes the hidden tests of a ticket from its issue,
	// against the base: /out/tests/, /out/criteria.json, optionally
	// /out/reference.patch.
	RoleWriter Role = "writer"
	// RoleImplementer changes /workspace so that the approved hidden tests
	// pass; testfirst takes the diff against the base.
	RoleImplementer Role = "implementer"
)

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleWriter || r == RoleImplementer }

// Task is what an agent is told, written to /task/TASK.md and, as JSON with
// the tags below, to /task/task.json.
type Task struct {
	// Role is the agent's role.
	Role Role `json:"role"`
	// Repo is the repository as owner/name.
	Repo string `json:"repo"`
	// Issue is the ticket's issue number.
	Issue int `json:"issue"`
	// Title and Body are the issue's; they go into TASK.md only.
	Title string `json:"-"`
	Body  string `json:"-"`
	// BaseSHA is the commit the ticket is pinned to; /workspace holds its
	// tree (as a commit of its own, not this one).
	BaseSHA string `json:"base_sha"`
	// Round counts the runs of this role on the ticket, from 1.
	Round int `json:"round"`
	// Feedback is what the last round left: for a writer, the requester's
	// rejection reason; for an implementer, counts and failing hidden test
	// ids of the last grade, never output. Empty in round 1.
	Feedback string `json:"feedback"`
}

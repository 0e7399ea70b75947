package pipeline

// TicketState is where a ticket stands in the pipeline. Whether its issue
// is closed or its label removed is kept beside the state, not in it.
type TicketState string

const (
	// TicketWriting: no version waits for review; the writer is (or must
	// get) at work. A ticket opens in this state, and returns to it after a
	// rejection or an invalid version.
	TicketWriting TicketState = "writing"
	// TicketChecking: the newest version's base check is running.
	TicketChecking TicketState = "checking"
	// TicketAwaitingApproval: the newest version passed its base check and
	// waits for the requester's decision on the card.
	TicketAwaitingApproval TicketState = "awaiting_approval"
	// TicketApproved: the newest version is approved; pull requests that
	// close the issue are graded against it.
	TicketApproved TicketState = "approved"
	// TicketStopped: the ticket was rejected as often as the repository
	// allows and waits for people to pair on it; a new version restarts it.
	TicketStopped TicketState = "stopped"
)

// VersionState is the state of one version of a ticket's hidden tests, as
// the store derives it from the version's decision and its successors. Its
// values are the store's (store.State), so one converts to the other.
type VersionState string

const (
	// VersionPending: pushed, not decided.
	VersionPending VersionState = "pending"
	// VersionApproved: approved, bound to its digest; grades use it.
	VersionApproved VersionState = "approved"
	// VersionRejected: rejected with a reason; never graded against.
	VersionRejected VersionState = "rejected"
	// VersionSuperseded: a newer version was pushed after it was pending
	// or approved.
	VersionSuperseded VersionState = "superseded"
)

// Announcement is what the issue was last told about a version. Each is
// posted once per transition.
type Announcement string

const (
	// AnnouncedNone: nothing was said about the version yet.
	AnnouncedNone Announcement = ""
	// AnnouncedReady: the version passed its base check and waits for review.
	AnnouncedReady Announcement = "ready"
	// AnnouncedInvalid: the base check found the version no valid task.
	AnnouncedInvalid Announcement = "invalid"
	// AnnouncedSignatureAsked: under the enforce policy, one approver
	// signed the version; the issue asks for the signature it still needs.
	AnnouncedSignatureAsked Announcement = "signature_asked"
	// AnnouncedApproved: the version was approved; implementation may start.
	AnnouncedApproved Announcement = "approved"
	// AnnouncedRejected: the version was rejected.
	AnnouncedRejected Announcement = "rejected"
	// AnnouncedSuperseded: an approved version was replaced by a newer one.
	AnnouncedSuperseded Announcement = "superseded"
)

// GradeState is where one grade of a pull request head stands.
type GradeState string

const (
	// GradeQueued: recorded with its job, waiting for a sandbox.
	GradeQueued GradeState = "queued"
	// GradeRunning: its job is grading in the sandbox.
	GradeRunning GradeState = "running"
	// GradeCompleted: finished, with a verdict (error when it could not be
	// made).
	GradeCompleted GradeState = "completed"
	// GradeCancelled: it will not finish: a newer head, a closed pull
	// request or another approval made it pointless.
	GradeCancelled GradeState = "cancelled"
)

// Unfinished reports whether a grade in state s may still change.
func (s GradeState) Unfinished() bool { return s == GradeQueued || s == GradeRunning }

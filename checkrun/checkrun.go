// Package checkrun is a check run as testfirst writes it: the value the
// domain (pipeline) says and GitHub (github) is handed as it is, declared
// once. It is a leaf: it imports nothing of this module.
package checkrun

// Check run statuses and conclusions, spelled as GitHub spells them.
const (
	// StatusQueued: the grade waits for a sandbox, or the ticket for
	// approved hidden tests.
	StatusQueued = "queued"
	// StatusInProgress: the grade is running.
	StatusInProgress = "in_progress"
	// StatusCompleted: the grade finished, failed or was cancelled.
	StatusCompleted = "completed"

	// ConclusionSuccess: every hidden test passed, and nothing bent the run.
	ConclusionSuccess = "success"
	// ConclusionFailure: a test failed, the run was bent, or the grade
	// could not be made.
	ConclusionFailure = "failure"
	// ConclusionNeutral: the pull request is not graded against the
	// ticket (its description no longer links it; a withdrawn ticket where
	// the repository says so).
	ConclusionNeutral = "neutral"
	// ConclusionActionRequired: the task is invalid, the installation
	// cannot grade, the grade's tests are being replaced or its ticket was
	// withdrawn; someone must act.
	ConclusionActionRequired = "action_required"
	// ConclusionCancelled: the grade will not finish (a newer push, a
	// reopened approval, a closed pull request).
	ConclusionCancelled = "cancelled"
)

// MaxSummary is the longest check run summary GitHub accepts.
const MaxSummary = 65535

// Action is a button on a check run ("Regrade").
type Action struct {
	Label       string // at most 20 characters
	Description string // at most 40 characters
	Identifier  string // at most 20 characters
}

// Run is what testfirst's check run on a head says: the domain writes it,
// and GitHub is handed it as it is.
type Run struct {
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string // with StatusCompleted
	Title      string
	Summary    string
	DetailsURL string
	ExternalID string
	Actions    []Action
}

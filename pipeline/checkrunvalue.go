package pipeline

import "fmt"

// CheckRunName is the name of testfirst's check run.
const CheckRunName = "testfirst"

// Check run statuses and conclusions, spelled as GitHub spells them.
const (
	// StatusInProgress: the grade is queued or running.
	StatusInProgress = "in_progress"
	// StatusCompleted: the grade finished, failed or was cancelled.
	StatusCompleted = "completed"

	// ConclusionSuccess: every hidden test passed, and nothing bent the run.
	ConclusionSuccess = "success"
	// ConclusionFailure: a test failed, the run was bent, or the grade
	// could not be made.
	ConclusionFailure = "failure"
	// ConclusionActionRequired: the task is invalid; the requester must act.
	ConclusionActionRequired = "action_required"
	// ConclusionCancelled: the grade will not finish (a newer push, a
	// reopened approval, a closed pull request).
	ConclusionCancelled = "cancelled"
)

// MaxSummary is the longest check run summary GitHub accepts.
const MaxSummary = 65535

// CheckAction is a button on a check run.
type CheckAction struct {
	Label       string // at most 20 characters
	Description string // at most 40 characters
	Identifier  string // at most 20 characters
}

// RegradeAction is the check run's button to grade the head again.
var RegradeAction = CheckAction{Label: "Regrade", Description: "Grade this commit again", Identifier: "regrade"}

// CheckRun is what testfirst's check run on a head says. The jobs hand it
// to GitHub as it is.
type CheckRun struct {
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string // with StatusCompleted
	Title      string
	Summary    string
	DetailsURL string
	ExternalID string
	Actions    []CheckAction
}

// QueuedCheckRun is the check run of a grade queued or running against
// version k.
func QueuedCheckRun(headSHA string, k int, detailsURL string) CheckRun {
	return CheckRun{Name: CheckRunName, HeadSHA: headSHA, Status: StatusInProgress, DetailsURL: detailsURL,
		Title:   fmt.Sprintf("grading against hidden tests v%d", k),
		Summary: "The sealed grader is running the approved hidden tests."}
}

// CancelledCheckRun is the check run of a grade that will not finish.
func CancelledCheckRun(why string) CheckRun {
	return CheckRun{Name: CheckRunName, Status: StatusCompleted, Conclusion: ConclusionCancelled,
		Title: "grade cancelled", Summary: why}
}

// FailedCheckRun is the check run of a grade that could not be made: why
// says what went wrong; Regrade starts another.
func FailedCheckRun(why, detailsURL string) CheckRun {
	return CheckRun{Name: CheckRunName, Status: StatusCompleted, Conclusion: ConclusionFailure, Title: "not graded",
		Summary: why, DetailsURL: detailsURL, Actions: []CheckAction{RegradeAction}}
}

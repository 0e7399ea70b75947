package pipeline

import (
	"fmt"
	"strings"

	"github.com/testfirst-app/testfirst/checkrun"
)

// CheckRunName is the name of testfirst's check run on a pull request that
// closes one ticket. A pull request that closes several gets one check run
// per ticket, each named by CheckRunNameFor.
const CheckRunName = "testfirst"

// CheckRunNameFor is the name of ticket issue's check run on a pull request
// that closes tickets tickets: "testfirst" for one, "testfirst · #12" for
// each of several, so that every run says which ticket it grades and a
// branch rule that requires "testfirst" keeps working for the usual case.
func CheckRunNameFor(issue, tickets int) string {
	if tickets > 1 {
		return fmt.Sprintf("%s · #%d", CheckRunName, issue)
	}
	return CheckRunName
}

// IsCheckRunName reports whether name is one of testfirst's check run
// names.
func IsCheckRunName(name string) bool {
	return name == CheckRunName || strings.HasPrefix(name, CheckRunName+" · #")
}

// RegradeAction is the check run's button to grade the head again.
var RegradeAction = checkrun.Action{Label: "Regrade", Description: "Grade this commit again", Identifier: "regrade"}

// GradePhase is what a running grade is doing.
type GradePhase string

// The phases of a grade, in order. The environment and the twins are
// made inside the sealed grader, which runs the pull request, the base and
// the twins at once: the phase says the slowest thing under way.
const (
	// PhaseFetching: the base and head trees are downloaded and the hidden
	// tests opened.
	PhaseFetching GradePhase = "fetching trees"
	// PhaseEnvironment: the dependency environment is built or found.
	PhaseEnvironment GradePhase = "building the environment"
	// PhaseGrading: the hidden tests run against the head, their twins
	// beside them.
	PhaseGrading GradePhase = "grading"
)

// QueuedCheckRun is the check run of a grade against version k waiting for
// a sandbox, with ahead grades queued before it and running grades taking
// the sandboxes now.
func QueuedCheckRun(headSHA string, k, ahead, running int, detailsURL string) checkrun.Run {
	title := fmt.Sprintf("queued: next in line for a sandbox · hidden tests v%d", k)
	if ahead > 0 {
		title = fmt.Sprintf("queued: %s ahead · hidden tests v%d", plural(ahead, "grade", "grades"), k)
	}
	return checkrun.Run{Name: CheckRunName, HeadSHA: headSHA, Status: checkrun.StatusQueued, DetailsURL: detailsURL, Title: title,
		Summary: fmt.Sprintf("This commit waits for a sandbox to be graded against hidden tests v%d: position %d in the queue, %s running now. "+
			"The check run moves to in progress when its grade starts.", k, ahead+1, plural(running, "grade", "grades"))}
}

// RunningCheckRun is the check run of a grade against version k that is
// running, at phase.
func RunningCheckRun(headSHA string, k int, phase GradePhase, detailsURL string) checkrun.Run {
	return checkrun.Run{Name: CheckRunName, HeadSHA: headSHA, Status: checkrun.StatusInProgress, DetailsURL: detailsURL,
		Title:   fmt.Sprintf("grading against hidden tests v%d: %s", k, phase),
		Summary: fmt.Sprintf("The sealed grader is at work on this commit: %s. The check run completes with the verdict.", phase)}
}

// WaitingCheckRun is the check run of a pull request that closes ticket
// issue, whose tests are not approved yet: it is queued until an approval
// comes, and then graded. newest is the ticket's newest version (nil for
// none).
func WaitingCheckRun(headSHA string, issue int, newest *VersionStatus, cardURL string) checkrun.Run {
	why := WaitingFor(newest)
	var b strings.Builder
	fmt.Fprintf(&b, "This pull request closes #%d, whose hidden tests are not approved yet: %s.\n\n", issue, why)
	b.WriteString("It is graded as soon as a version is approved (by the requester, or with the signatures the repository's approval policy asks for: " +
		"the approval card says which are missing); this check run then shows the grade. Nothing needs to be pushed again.")
	if cardURL != "" {
		fmt.Fprintf(&b, "\n\nThe ticket's approval card: %s", cardURL)
	}
	return checkrun.Run{Name: CheckRunName, HeadSHA: headSHA, Status: checkrun.StatusQueued, DetailsURL: cardURL,
		Title: "waiting for approved hidden tests (" + why + ")", Summary: b.String()}
}

// WaitingFor says in a few words why a ticket has no approved tests, from
// its newest version: "no tests pushed yet", "v2 awaits review", …
func WaitingFor(newest *VersionStatus) string {
	switch {
	case newest == nil:
		return "no tests pushed yet"
	case newest.State == VersionRejected:
		return fmt.Sprintf("v%d was rejected; a new version is needed", newest.Number)
	case newest.State == VersionPending && newest.Check == nil:
		return fmt.Sprintf("v%d is being checked", newest.Number)
	case newest.State == VersionPending && !newest.Check.Valid():
		return fmt.Sprintf("v%d is not a valid task; a new version is needed", newest.Number)
	case newest.State == VersionPending:
		return fmt.Sprintf("v%d awaits review", newest.Number)
	case newest.State == VersionApproved:
		return fmt.Sprintf("v%d is approved; its grade is being queued", newest.Number)
	}
	return fmt.Sprintf("v%d is %s", newest.Number, newest.State)
}

// SupersededCheckRun completes again the check run of a grade against
// version old, when version newer replaced it: what it said no longer
// holds. was is the title it had. It asks for action rather than staying
// neutral: GitHub counts a neutral check as passing where the check is
// required, and a pull request must not merge on tests that are being
// replaced before the new ones are approved and graded.
func SupersededCheckRun(old, newer int, newest *VersionStatus, was string) checkrun.Run {
	return checkrun.Run{Name: CheckRunName, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionActionRequired,
		Title: fmt.Sprintf("superseded: graded against v%d, which v%d replaces; awaiting approval", old, newer),
		Summary: fmt.Sprintf("This commit was graded against hidden tests v%d (%s). v%d replaces them (%s): that grade no longer counts. "+
			"The commit is graded again, at once, when a version is approved.", old, prose(was), newer, WaitingFor(newest))}
}

// WithdrawnCheckRun completes again the check run of a grade of ticket
// issue whose label was removed (by the login by, when known): the ticket
// is withdrawn. conclusion is the repository's withdrawn_check: by default
// action_required, which keeps a required check blocking; neutral would
// count as passing there.
func WithdrawnCheckRun(issue int, label, was, by, conclusion string) checkrun.Run {
	who := ""
	if by != "" {
		who = " by " + mention(by)
	}
	next := "The pull request cannot merge on this check while the ticket is withdrawn (`withdrawn_check: " + checkrun.ConclusionNeutral +
		"` in " + code(RepoConfigPath) + " would let it)."
	if conclusion == checkrun.ConclusionNeutral {
		next = "The repository's " + code(RepoConfigPath) + " says `withdrawn_check: " + checkrun.ConclusionNeutral +
			"`: this check no longer blocks the pull request."
	}
	return checkrun.Run{Name: CheckRunName, Status: checkrun.StatusCompleted, Conclusion: conclusion,
		Title: fmt.Sprintf("withdrawn: #%d no longer carries the %s label", issue, label),
		Summary: fmt.Sprintf("The `%s` label was removed from #%d%s, which withdraws its ticket: the earlier grade (%s) no longer counts. "+
			"Put the label back to take the ticket up again; open pull requests are then graded again.\n\n%s", label, issue, who, prose(was), next)}
}

// UnlinkedCheckRun completes the waiting check run of ticket issue on a
// pull request whose description no longer fixes it.
func UnlinkedCheckRun(issue int) checkrun.Run {
	return checkrun.Run{Name: CheckRunName, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionNeutral,
		Title:   fmt.Sprintf("not graded: this pull request no longer fixes #%d", issue),
		Summary: fmt.Sprintf("The pull request's description no longer links #%d, so it is not graded against that ticket's hidden tests.", issue)}
}

// NotConfiguredCheckRun is the check run of a pull request that closes a
// ticket on an installation that cannot grade: why says what is missing.
func NotConfiguredCheckRun(headSHA string, why string) checkrun.Run {
	return checkrun.Run{Name: CheckRunName, HeadSHA: headSHA, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionActionRequired,
		Title: "not graded: grading is not configured on this installation",
		Summary: "grading is not configured on this installation: " + code(why) + "\n\n" +
			"The operator of this testfirst installation must fix it (see `/readyz` on the service); then use `/testfirst regrade` on this pull request."}
}

// CancelledCheckRun is the check run of a grade that will not finish.
func CancelledCheckRun(why string) checkrun.Run {
	return checkrun.Run{Name: CheckRunName, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionCancelled,
		Title: "grade cancelled", Summary: why}
}

// FailedCheckRun is the check run of a grade that could not be made: why
// says what went wrong; Regrade starts another.
func FailedCheckRun(why, detailsURL string) checkrun.Run {
	return checkrun.Run{Name: CheckRunName, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionFailure, Title: "not graded",
		Summary: why, DetailsURL: detailsURL, Actions: []checkrun.Action{RegradeAction}}
}

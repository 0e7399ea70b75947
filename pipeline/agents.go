package pipeline

import (
	"fmt"
	"strings"

	"github.com/testfirst-app/testfirst/report"
)

// AgentRole is what an agent run of a ticket does: the values are the
// agent package's roles.
type AgentRole string

const (
	// RoleWriter writes the ticket's hidden tests.
	RoleWriter AgentRole = "writer"
	// RoleImplementer opens the ticket's pull request.
	RoleImplementer AgentRole = "implementer"
)

// AgentRunState is where one agent run stands.
type AgentRunState string

const (
	// AgentQueued: recorded with its job, waiting for a sandbox.
	AgentQueued AgentRunState = "queued"
	// AgentRunning: its sandbox runs.
	AgentRunning AgentRunState = "running"
	// AgentCompleted: finished, with an outcome.
	AgentCompleted AgentRunState = "completed"
	// AgentCancelled: it will not finish (a new approved version, the
	// ticket withdrawn or closed).
	AgentCancelled AgentRunState = "cancelled"
)

// Unfinished reports whether a run in state s may still change.
func (s AgentRunState) Unfinished() bool { return s == AgentQueued || s == AgentRunning }

// AgentOutcome is how a completed agent run ended.
type AgentOutcome string

const (
	// OutcomeDelivered: the writer's tests became a version, or the
	// implementer's changes a commit on the ticket's branch.
	OutcomeDelivered AgentOutcome = "delivered"
	// OutcomeFailed: the agent ran but handed back nothing usable (a
	// non-zero exit, no tests, tests the store refuses, no change).
	OutcomeFailed AgentOutcome = "failed"
	// OutcomeTimedOut: the agent was killed at its time limit.
	OutcomeTimedOut AgentOutcome = "timed_out"
	// OutcomeContaminated: what the implementer handed back carries a
	// hidden test's canary; no further round starts.
	OutcomeContaminated AgentOutcome = "contaminated"
	// OutcomeRefused: the run did not start: the independence policy
	// refuses it, or the writer came after an implementation.
	OutcomeRefused AgentOutcome = "refused"
	// OutcomeError: the run could not happen (the engine failed for
	// good).
	OutcomeError AgentOutcome = "error"
)

// AgentBranch is the branch an implementer's commits go to.
func AgentBranch(issue int) string { return fmt.Sprintf("testfirst/issue-%d", issue) }

// AgentAuthor is the store author of a version a writer harness wrote.
func AgentAuthor(harness string) string { return "writer:" + harness }

// AgentHarnessOf is the writer harness that wrote a version of author,
// and false for a version a person pushed.
func AgentHarnessOf(author string) (string, bool) { return strings.CutPrefix(author, "writer:") }

// InvalidFeedbackPrefix starts the feedback of a writer round that
// follows an invalid base check, so the rounds it takes can be counted.
const InvalidFeedbackPrefix = "The base check found your last tests not a valid task:"

// InvalidFeedback is a writer's feedback after version k's base check
// found it invalid: the same problems, in counts, that the issue was told.
func InvalidFeedback(k int, c VersionCheck) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (v%d)\n", InvalidFeedbackPrefix, k)
	for _, p := range c.Problems() {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	return b.String()
}

// WriterRetryNote ends the issue's comment on an invalid version a writer
// wrote: whether the writer takes it up again, and in which round, or has
// had its rounds (max, agents.max_rounds) and people must push the tests.
func WriterRetryNote(harness string, round, max int) string {
	if round > 0 {
		return fmt.Sprintf("\n\nThe writer `%s` takes this up in round %d.", harness, round)
	}
	return fmt.Sprintf("\n\nThe writer `%s` wrote %s in a row that were not valid, its limit (`agents.max_rounds`): push tests with `testfirst tests push` or Upload tests on the card.",
		harness, plural(max, "version", "versions"))
}

// EgressGitHubWarning is said on every grade of a ticket whose agents'
// egress could reach GitHub.
const EgressGitHubWarning = "agent egress could reach GitHub: results may not be valid"

// E2BEgressWarning is said on every grade of a ticket whose agent ran on
// E2B: there the sandbox has a network, and only E2B's network rules
// (which allow the egress gateway's host alone) keep it from the rest.
const E2BEgressWarning = "agent ran on E2B: its egress is limited by E2B's network rules (the egress gateway only), which testfirst cannot check, not by a sandbox without network"

// IndependenceWarning says that a ticket's writer and implementer are not
// independent.
func IndependenceWarning(writer, implementer string) string {
	if writer == implementer {
		return fmt.Sprintf("the writer and the implementer are the same harness (%s): the hidden tests are not independent of the implementation", writer)
	}
	return fmt.Sprintf("the writer (%s) and the implementer (%s) use model APIs of the same vendor: the hidden tests are not independent of the implementation", writer, implementer)
}

// ImplementerFeedback is what the next implementer round is told of the
// last grade: counts and the ids of the failing hidden tests, never their
// output or bodies.
func ImplementerFeedback(r *report.Report) string {
	var b strings.Builder
	c := r.Counts
	fmt.Fprintf(&b, "The last grade: %s, %d of %d hidden tests passed (%d failed, %d errors, %d skipped).\n", r.Verdict, c.Passed, c.Total, c.Failed, c.Errors, c.Skipped)
	if len(r.Failed) > 0 {
		b.WriteString("Failing hidden tests:\n")
		for _, id := range r.Failed {
			b.WriteString("- " + id + "\n")
		}
	}
	return b.String()
}

// NextRound reports whether a grade of an implementer's commit in round
// of maxRounds starts another round: it failed on the hidden tests (not
// tampered, contaminated, invalid or in error) and rounds are left.
func NextRound(v report.Verdict, round, maxRounds int) bool {
	return v == report.VerdictFail && round < maxRounds
}

// AgentPullTitle and AgentPullBody are the pull request an implementer's
// first round opens.
func AgentPullTitle(issue int, title string) string {
	if strings.TrimSpace(title) == "" {
		return fmt.Sprintf("Implement #%d", issue)
	}
	return fmt.Sprintf("%s (#%d)", strings.TrimSpace(title), issue)
}

// AgentPullBody says who opened the pull request and closes the issue.
func AgentPullBody(issue int, harness string, version int) string {
	return fmt.Sprintf("Fixes #%d\n\nOpened by testfirst: the implementer `%s` worked against the approved hidden tests v%d, which it never saw. "+
		"Each round's commit is graded like any pull request; a failing grade with rounds left starts the next round with counts and failing test ids only.\n",
		issue, harness, version)
}

// AgentCommitMessage is the message of round's commit.
func AgentCommitMessage(issue, round int, harness string) string {
	return fmt.Sprintf("Implement #%d (round %d, %s)\n\nWritten by testfirst's implementer harness %s.", issue, round, harness, harness)
}

// ContaminationReasons turns an implementer run's canary sightings into a
// grade's: where in what the run handed back a hidden test's canary was
// seen.
func ContaminationReasons(s []report.CanarySighting) []string {
	out := make([]string, len(s))
	for i, c := range s {
		out[i] = fmt.Sprintf("the canary of %s appears in the implementer's %s", c.HiddenFile, c.Where)
	}
	return out
}

// AgentRunComment tells the issue how an agent run ended when it handed
// back nothing the pipeline goes on with: the writer's tests were not
// stored, the implementer committed nothing. why is the run's own error.
func AgentRunComment(role AgentRole, harness string, round int, outcome AgentOutcome, why string) string {
	next := "Push tests with `testfirst tests push`, or reject to send the writer another round."
	if role == RoleImplementer {
		next = "Open a pull request that closes this issue by hand, or approve a new version to start the implementer again."
	}
	if outcome == OutcomeContaminated {
		next = "No further round starts: what the implementer handed back carries a hidden test's canary, so it saw hidden tests it must not see."
	}
	return fmt.Sprintf("The %s `%s` (round %d) ended **%s**: %s\n\n%s", role, harness, round, outcome, prose(why), next)
}

// AgentsOpenedNote follows the opening comment of a ticket whose
// repository names a writer or an implementer: who does what next. It
// starts with the blank line that separates it.
func AgentsOpenedNote(issue int, writer, implementer string) string {
	var b strings.Builder
	b.WriteString("\n\n**Agents.**")
	if writer != AgentNone {
		fmt.Fprintf(&b, " The writer `%s` is writing the hidden tests now, in a sandbox without GitHub access; a rejection sends it your reason for another round.", writer)
	}
	if implementer != AgentNone {
		fmt.Fprintf(&b, " Once a version is approved, the implementer `%s` opens a pull request from `%s`, graded like any other.", implementer, AgentBranch(issue))
	}
	return b.String()
}

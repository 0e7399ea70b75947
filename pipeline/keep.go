package pipeline

import (
	"fmt"
	"strings"
)

// AuditTestsKept is the audit event of hidden tests testfirst made public
// (keep_tests): where they went, which version, by whose approval.
const AuditTestsKept = "tests.kept"

// KeptTrailer is the commit trailer that marks a commit of kept tests:
// a retried job recognises its own commit by it.
const KeptTrailer = "Testfirst-Kept-Tests"

// KeptCommitMessage is the message of the commit that adds ticket issue's
// approved hidden tests (version, digest) to a repository.
func KeptCommitMessage(issue, version int, digest, approvedBy string) string {
	return fmt.Sprintf("Keep the hidden tests of #%d as regression tests\n\n"+
		"These are the acceptance tests of ticket #%d, version %d, exactly as %s approved them\n"+
		"(digest %s), without their canary lines. testfirst adds them because this\n"+
		"repository's .github/testfirst.yml says keep_tests.\n\n"+
		"Refs #%d\n%s: #%d %s\n", issue, issue, version, approvedBy, digest, issue, KeptTrailer, issue, digest)
}

// KeptTrailerLine is the trailer line a kept commit of ticket issue and
// digest carries.
func KeptTrailerLine(issue int, digest string) string {
	return fmt.Sprintf("%s: #%d %s", KeptTrailer, issue, digest)
}

// KeptFollowUpTitle and KeptFollowUpBody are the follow-up pull request's.
// The body refers to the ticket without a closing keyword: the follow-up
// is not graded as a fix of it.
func KeptFollowUpTitle(issue int) string {
	return fmt.Sprintf("Keep the hidden tests of #%d as regression tests", issue)
}

// KeptFollowUpBody: see KeptFollowUpTitle.
func KeptFollowUpBody(issue, pr, version int, digest string) string {
	return fmt.Sprintf("Pull request #%d passed the hidden tests of #%d and was approved and merged. This adds those tests, "+
		"version %d (digest `%s`), exactly as approved and without their canary lines, so the repository keeps them as regression tests.\n\n"+
		"Refs #%d", pr, issue, version, digest, issue)
}

// KeptComment is what the ticket's issue is told once its tests are kept.
func KeptComment(version int, where string) string {
	return fmt.Sprintf("testfirst kept the hidden tests of this ticket (version %d) as regression tests: %s. "+
		"They are public from now on: a later grade of this ticket says so and is marked contaminated.", version, where)
}

// KeptForkComment tells the ticket that the pull request's branch is a
// fork's, which the app cannot push to: the tests wait for the merge.
func KeptForkComment(pr int) string {
	return fmt.Sprintf("Pull request #%d passed and was approved, but its branch is in a fork, which testfirst cannot push to: "+
		"keep_tests: commit falls back to a follow-up pull request of the hidden tests once #%d is merged.", pr, pr)
}

// KeptReason is a later grade's reason once the ticket's hidden tests were
// made public by keep_tests: anyone could read them since.
func KeptReason(where string) string {
	return "the hidden tests of this ticket are public: testfirst kept them as regression tests (" + where + "), so a pass no longer shows the tests were hidden"
}

// KeptHeadNote is the reason of the grade of the kept commit itself: the
// head that passed with the tests added, graded after they became public.
func KeptHeadNote(parent string) string {
	return "this head is testfirst's commit of the hidden tests on top of " + ShortSHA(parent) +
		", which passed them while they were hidden; the tests are public from this commit on"
}

// ShortSHA is a commit id's first 7 characters.
func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// Review is a pull request review as keep_tests reads it.
type Review struct {
	Reviewer   string
	ReviewerID int64
	// State is GitHub's: APPROVED, CHANGES_REQUESTED, COMMENTED,
	// DISMISSED.
	State string
}

// KeepApprover returns the reviewer whose approval lets a pull request's
// passing grade keep the tests: one whose latest deciding review (APPROVED,
// CHANGES_REQUESTED or DISMISSED; a COMMENTED review leaves a decision as
// it was, as on GitHub) approves it, who is not its author (compared by
// account id, the login as well when an id is unknown) and who has write
// access (mayApprove). reviews are oldest first. ok is false when no
// review is such.
func KeepApprover(reviews []Review, authorID int64, author string, mayApprove func(login string) (bool, error)) (string, bool, error) {
	latest := map[int64]Review{}
	var order []int64
	for _, r := range reviews {
		switch r.State {
		case "APPROVED", "CHANGES_REQUESTED", "DISMISSED":
		default:
			continue
		}
		if _, seen := latest[r.ReviewerID]; !seen {
			order = append(order, r.ReviewerID)
		}
		latest[r.ReviewerID] = r
	}
	for _, id := range order {
		r := latest[id]
		if r.State != "APPROVED" || (authorID != 0 && r.ReviewerID == authorID) || strings.EqualFold(r.Reviewer, author) {
			continue
		}
		ok, err := mayApprove(r.Reviewer)
		if err != nil {
			return "", false, err
		}
		if ok {
			return r.Reviewer, true, nil
		}
	}
	return "", false, nil
}

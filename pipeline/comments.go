package pipeline

import (
	"fmt"
	"strings"
)

// The comments testfirst posts on a ticket's issue. None carries a test
// body, a rejection reason (it might describe the tests) or runner output:
// the issue is public to the implementer.

// ReadyComment says version k is ready for the requester's review.
func ReadyComment(requester string, k, tests, guards int, cardURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hidden tests **v%d** are ready for review: %s.\n\n", k, plural(tests, "test", "tests"))
	if guards > 0 {
		fmt.Fprintf(&b, "%s already pass on the base commit (guard tests: they protect behaviour that must not break).\n\n", plural(guards, "test", "tests"))
	}
	fmt.Fprintf(&b, "%s can review them on the approval card and approve or reject this exact version: %s\n\n", mention(requester), cardURL)
	b.WriteString("The tests themselves are never shown on GitHub.")
	return b.String()
}

// InvalidComment says version k cannot be graded against, and why, in
// counts only.
func InvalidComment(k int, c VersionCheck) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hidden tests **v%d** are not a valid task and will not be offered for approval:\n\n", k)
	for _, r := range c.Problems() {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	b.WriteString("\nA new version of the tests is needed.")
	return b.String()
}

// ApprovedComment says version k was approved: implementation may start.
func ApprovedComment(issue, k int, digest string, tests, covered, criteria int, by string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hidden tests **v%d** were approved by %s: `%s`, %s", k, mention(by), digest, plural(tests, "test", "tests"))
	if criteria > 0 {
		fmt.Fprintf(&b, ", %d of %d acceptance criteria covered", covered, criteria)
	}
	fmt.Fprintf(&b, ".\n\nImplementation may start: a pull request whose description says `Fixes #%d` is graded against them; "+
		"its check run shows counts and test ids only.", issue)
	return b.String()
}

// RejectedComment says version k was rejected, without the reason.
func RejectedComment(k int) string {
	return fmt.Sprintf("Hidden tests **v%d** were rejected. The requester's reason goes to the writer; a new version is needed.", k)
}

// StoppedComment says the ticket stopped after too many rejections.
func StoppedComment(rejections int) string {
	return fmt.Sprintf("Hidden tests were rejected %s: this ticket stops here and is labelled `lane:pair`. "+
		"Pair on the tests with the requester, then push a new version.", plural(rejections, "time", "times"))
}

// ReopenedComment says an approval was superseded by a newer version.
func ReopenedComment(old, k int) string {
	return fmt.Sprintf("The approval of hidden tests v%d was reopened: v%d replaces it. Grades against v%d are cancelled; "+
		"open pull requests are graded again once v%d is approved.", old, k, old, k)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// mention names a login in code style, so a comment notifies no one by
// accident and no login can inject markdown.
func mention(login string) string {
	if login == "" {
		return "the requester"
	}
	return "`" + strings.ReplaceAll(login, "`", "") + "`"
}

// ConfigErrorComment says, on the issue a ticket would open on, what is
// wrong with the repository's config.
func ConfigErrorComment(err error) string {
	return "testfirst cannot read its configuration:\n\n```\n" + err.Error() + "\n```"
}

// ConfigErrorSummary says, on a grade's check run, what is wrong with the
// repository's config and how to go on.
func ConfigErrorSummary(err error) string {
	return "testfirst cannot read its configuration, `" + RepoConfigPath + "` on the default branch:\n\n```\n" +
		err.Error() + "\n```\n\nFix it there, then use Regrade."
}

// ConfigErrorCheck is a version's base check when the repository's config
// is broken: the version cannot be checked until it is fixed.
func ConfigErrorCheck(err error) VersionCheck {
	return VersionCheck{Error: "the repository's configuration (" + RepoConfigPath + " on the default branch) is invalid: " + err.Error()}
}

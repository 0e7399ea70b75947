package pipeline

import (
	"fmt"
	"slices"
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
	fmt.Fprintf(&b, "%s can review them on the approval card and approve or reject this exact version: %s\n\n", notify(requester), cardURL)
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

// RejectedComment says version k was rejected, without the reason, and
// tells its writer (notified) where the reason is: on the card.
func RejectedComment(k int, writer, cardURL string) string {
	who := "The writer"
	if writer != "" {
		who = notify(writer) + ", the writer of v" + fmt.Sprint(k) + ","
	}
	return fmt.Sprintf("Hidden tests **v%d** were rejected; a new version is needed. %s finds the requester's reason on the approval card "+
		"(it is never posted on GitHub): %s", k, who, cardURL)
}

// OpenedComment tells an issue just labelled what happens next and who
// writes its hidden tests: anyone with write access uploads them on the
// ticket's page (the one path that works from anyone's machine); the
// operator may push them with the command line where the service runs (the
// exact command, for this installation); the requester is told here when
// they are ready for review.
func OpenedComment(owner, repo string, issue int, installation int64, base, requester, ticketURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "testfirst opened a ticket for #%d, pinned to base commit `%.12s`.\n\n", issue, base)
	b.WriteString("**What happens next.** Hidden acceptance tests are written for this issue; they fail on the base commit and are " +
		"never shown on GitHub. Anyone with write access to this repository uploads them on the ticket's page, signed in with GitHub: " +
		ticketURL + "\n\n")
	b.WriteString("The service's operator can instead push them from the host where `testfirst serve` runs, with its settings " +
		"(DIR holds the test files; the command refuses a store the service does not read):\n\n")
	fmt.Fprintf(&b, "```\ntestfirst tests push --ticket %s/%s#%d --installation %d DIR\n```\n\n", owner, repo, issue, installation)
	fmt.Fprintf(&b, "%s is told here when they are ready for review. Pull requests that say `Fixes #%d` get their `testfirst` check "+
		"run at once and are graded when a version is approved.", notify(requester), issue)
	return b.String()
}

// SignatureAskedComment asks for the signature version k still needs
// under the enforce policy, once signed has signed: the requester's
// (notified) when someone else signed first, else a second approver's,
// anyone with write access who is not the requester. It names the rule
// that is missing and notifies who can satisfy it: the requester, or the
// first few of writers (the repository's collaborators with write access;
// the requester and those who signed are left out).
func SignatureAskedComment(requester string, signed []string, k int, cardURL string, writers []string) string {
	names := make([]string, len(signed))
	for i, s := range signed {
		names[i] = code(s)
	}
	by := strings.Join(names, ", ")
	if !slices.ContainsFunc(signed, func(l string) bool { return strings.EqualFold(l, requester) }) {
		return fmt.Sprintf("Hidden tests **v%d** were signed by %s. This repository's approval policy is `enforce`: missing, the requester's signature. %s, as the requester, "+
			"please review them and sign on the approval card too: %s", k, by, notify(requester), cardURL)
	}
	var can []string
	for _, w := range writers {
		if strings.EqualFold(w, requester) || slices.ContainsFunc(signed, func(l string) bool { return strings.EqualFold(l, w) }) {
			continue
		}
		can = append(can, w)
	}
	who := ""
	switch n := len(can); {
	case n == 0:
		who = " No one else has write access to this repository yet: give someone write access, or change the policy in " + code(RepoConfigPath) + "."
	case n <= maxAsked:
		who = " " + notifyAll(can) + " can sign."
	default:
		who = fmt.Sprintf(" %s and %d others with write access can sign.", notifyAll(can[:maxAsked]), n-maxAsked)
	}
	return fmt.Sprintf("Hidden tests **v%d** were signed by %s, the requester. This repository's approval policy is `enforce`: missing, a second signature "+
		"from anyone with write access to this repository who is not the requester, on the approval card: %s%s", k, by, cardURL, who)
}

// maxAsked is how many people a request for a second signature notifies
// at most.
const maxAsked = 5

// notifyAll notifies each of logins, comma-separated.
func notifyAll(logins []string) string {
	out := make([]string, len(logins))
	for i, l := range logins {
		out[i] = notify(l)
	}
	return strings.Join(out, ", ")
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

// notify mentions a login so that GitHub notifies it ("@alice"), when it
// is a valid GitHub login (or an app's "name[bot]"); anything else is
// named in code style, notifying no one.
func notify(login string) string {
	name := strings.TrimSuffix(login, "[bot]")
	valid := name != "" && len(name) <= 39 && name[0] != '-' && name[len(name)-1] != '-'
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			valid = false
		}
	}
	if !valid {
		return mention(login)
	}
	return "@" + login
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
	return "testfirst cannot read its configuration:\n\n```\n" + err.Error() + "\n```\n\n" +
		"Fix `" + RepoConfigPath + "` on the default branch, then comment `/testfirst status` on this issue or edit it: " +
		"testfirst reads the file again then and opens the ticket, with the person who commented or edited as its " +
		"requester (someone with write access to the repository). There is no need to label the issue again."
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

// UnlabelRefusedComment says on a ticket's issue that by removed its label
// but may not withdraw it: only the requester or someone with write access
// may.
func UnlabelRefusedComment(by, requester, label string) string {
	return fmt.Sprintf("%s removed the `%s` label, but only the requester (%s) or someone with write access to the repository "+
		"can withdraw this ticket. It stays open: its pull requests are still graded against its approved tests. "+
		"Put the label back so the issue shows it; to withdraw the ticket, ask one of them to remove the label.",
		mention(by), label, notify(requester))
}

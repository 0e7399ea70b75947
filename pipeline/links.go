package pipeline

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// IssueRef names an issue a pull request links to.
type IssueRef struct {
	Owner, Repo string
	Number      int
}

// closing matches GitHub's closing keywords followed by an issue reference:
// "#12", "owner/repo#12" or an issue URL. Case-insensitive, with an optional
// colon after the keyword, as GitHub accepts.
var closing = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+` +
	`(?:(#)(\d+)|([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+)#(\d+)|https?://github\.com/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+)/issues/(\d+))\b`)

// Links returns the issues a pull request's body closes, in the order they
// appear, without duplicates. "#N" refers to the pull request's own
// repository (owner/repo). Owner and repository names compare
// case-insensitively, as on GitHub; a reference to another repository is
// kept, so the caller decides whether it is a ticket.
func Links(body, owner, repo string) []IssueRef {
	var refs []IssueRef
	for _, m := range closing.FindAllStringSubmatch(body, -1) {
		var r IssueRef
		switch {
		case m[1] == "#":
			r = IssueRef{Owner: owner, Repo: repo, Number: atoi(m[2])}
		case m[3] != "":
			r = IssueRef{Owner: m[3], Repo: m[4], Number: atoi(m[5])}
		default:
			r = IssueRef{Owner: m[6], Repo: m[7], Number: atoi(m[8])}
		}
		if r.Number <= 0 {
			continue
		}
		if strings.EqualFold(r.Owner, owner) && strings.EqualFold(r.Repo, repo) {
			r.Owner, r.Repo = owner, repo
		}
		if !slices.ContainsFunc(refs, func(x IssueRef) bool {
			return strings.EqualFold(x.Owner, r.Owner) && strings.EqualFold(x.Repo, r.Repo) && x.Number == r.Number
		}) {
			refs = append(refs, r)
		}
	}
	return refs
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

package pipeline

import (
	"fmt"
	"net/url"
)

// The approval card's routes, as net/http patterns: the card's handlers
// serve them, and links from issue comments and check runs are built from
// the functions below, so each is spelled once.
const (
	// TicketRoute is a ticket's card, its newest version.
	TicketRoute = "/tickets/{owner}/{repo}/{issue}"
	// VersionRoute is the card of one version; ApproveRoute and
	// RejectRoute take the decisions on it.
	VersionRoute = TicketRoute + "/versions/{version}"
	ApproveRoute = VersionRoute + "/approve"
	RejectRoute  = VersionRoute + "/reject"
	// TestsArchiveRoute is one version's tests as a zip, for those who may
	// see its card to grade a tree themselves.
	TestsArchiveRoute = VersionRoute + "/tests.zip"
	// GradeRoute is a grade's page, with the grader's full report.
	GradeRoute = "/grades/{id}"
	// AuditRoute is a ticket's audit log; RepoAuditRoute a repository's,
	// for its admins.
	AuditRoute = TicketRoute + "/audit"
	// UploadRoute is where a person uploads a ticket's next version.
	UploadRoute    = TicketRoute + "/upload"
	RepoAuditRoute = "/repos/{owner}/{repo}/audit"
)

// AuditPath is the path of an issue's ticket's audit log (AuditRoute).
func AuditPath(owner, repo string, issue int) string {
	return TicketPath(owner, repo, issue) + "/audit"
}

// RepoAuditPath is the path of a repository's audit log (RepoAuditRoute).
func RepoAuditPath(owner, repo string) string {
	return fmt.Sprintf("/repos/%s/%s/audit", url.PathEscape(owner), url.PathEscape(repo))
}

// TicketPath is the path of an issue's ticket card (TicketRoute).
func TicketPath(owner, repo string, issue int) string {
	return fmt.Sprintf("/tickets/%s/%s/%d", url.PathEscape(owner), url.PathEscape(repo), issue)
}

// CardPath is the path of version k's approval card for an issue
// (VersionRoute).
func CardPath(owner, repo string, issue, k int) string {
	return fmt.Sprintf("%s/versions/%d", TicketPath(owner, repo, issue), k)
}

// GradePath is the path of a grade's page, linked from its check run
// (GradeRoute).
func GradePath(grade int64) string { return fmt.Sprintf("/grades/%d", grade) }

// TestsArchivePath is the path of version k's tests as a zip
// (TestsArchiveRoute).
func TestsArchivePath(owner, repo string, issue, k int) string {
	return CardPath(owner, repo, issue, k) + "/tests.zip"
}

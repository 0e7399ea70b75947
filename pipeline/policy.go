package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// Repository permissions, as GitHub names them.
const (
	PermAdmin    = "admin"
	PermMaintain = "maintain"
	PermWrite    = "write"
	PermTriage   = "triage"
	PermRead     = "read"
	// PermNone is the permission of a login GitHub does not know, or that
	// cannot see the repository.
	PermNone = "none"
)

// HasWriteAccess reports whether a repository permission carries write
// access: who may sign a version as second approver and who may give
// /testfirst commands.
func HasWriteAccess(perm string) bool {
	switch strings.ToLower(perm) {
	case PermAdmin, PermMaintain, PermWrite:
		return true
	}
	return false
}

// MayView reports whether someone may see a ticket's card and the grades
// of its pull requests: its requester while they can still read the
// repository, and everyone with write access to it (the second approver
// enforce asks for is one of them).
func MayView(perm string, requester bool) bool {
	return (requester && perm != PermNone) || HasWriteAccess(perm)
}

// MayDecide reports whether someone may approve a version alone, reject
// it, or upload tests: the requester (while they can read the repository)
// and those who administer or maintain it. Others with write access may
// only sign as enforce's second approver.
func MayDecide(perm string, requester bool) bool {
	switch p := strings.ToLower(perm); {
	case requester && p != PermNone:
		return true
	case p == PermAdmin || p == PermMaintain:
		return true
	}
	return false
}

// MaySeeOutput reports whether someone may see a grade's full runner
// output: whoever may decide on the ticket's tests (MayDecide). Everyone
// else who can read the repository sees what the check run says.
func MaySeeOutput(perm string, requester bool) bool { return MayDecide(perm, requester) }

// MaySeeCheck reports whether someone may see a grade's details page:
// anyone who can read the repository, as anyone who sees its check run.
func MaySeeCheck(perm string, requester bool) bool {
	switch strings.ToLower(perm) {
	case PermAdmin, PermMaintain, PermWrite, PermTriage, PermRead:
		return true
	}
	return requester && perm != PermNone
}

// Account is a GitHub account as a signature or a ticket names it: the
// login it had then and its numeric user id, which stays with the account
// through renames while the login can pass to someone else. ID 0: not
// known (a record made before ids were kept), matched by login.
type Account struct {
	Login string
	ID    int64
}

// Same reports whether a and b are one account: by id when both are
// known, else by login.
func (a Account) Same(b Account) bool {
	if a.ID != 0 && b.ID != 0 {
		return a.ID == b.ID
	}
	return strings.EqualFold(a.Login, b.Login)
}

// ApprovalComplete reports whether a version signed by these accounts is
// approved under the policy: one signature under single; the requester
// account's and another account's under enforce, whatever logins either
// signed under.
func ApprovalComplete(policy string, requester Account, signers []Account) bool {
	if policy != PolicyEnforce {
		return len(signers) > 0
	}
	return slices.ContainsFunc(signers, requester.Same) &&
		slices.ContainsFunc(signers, func(a Account) bool { return !requester.Same(a) })
}

// Decision is a version's recorded decision, as the approval policy reads it.
type Decision struct {
	Approved bool
	By       string
}

// Signing is everything the approval policy weighs when someone would
// sign a version: who they are, the version, and the repository's policy.
type Signing struct {
	// Viewer is the account about to sign, Requester the ticket's;
	// Permission is the viewer's on the repository.
	Viewer, Requester Account
	Permission        string
	// Version is the number of the version to sign, Newest the ticket's
	// newest version.
	Version, Newest int
	// Decision is the version's decision, nil while it is pending.
	Decision *Decision
	// ConfigError says why the repository's config cannot be read; then
	// the policy is unknown and nothing can be approved.
	ConfigError error
	// Policy is the repository's approval policy.
	Policy string
	// Ready is whether the version was announced ready for review; Check
	// is its base check, nil before it ran.
	Ready bool
	Check *VersionCheck
	// Signers are the accounts that signed the version already.
	Signers []Account
}

// SignBlock says why s.Viewer may not sign the version now, or "" when they
// may.
func SignBlock(s Signing) string {
	switch {
	case s.Version != s.Newest:
		return fmt.Sprintf("v%d is not the newest version: v%d is. Only the newest version can be approved.", s.Version, s.Newest)
	case s.Decision != nil && s.Decision.Approved:
		return fmt.Sprintf("v%d is approved (by %s).", s.Version, s.Decision.By)
	case s.Decision != nil:
		return fmt.Sprintf("v%d was rejected by %s.", s.Version, s.Decision.By)
	case s.ConfigError != nil:
		return "The repository's " + RepoConfigPath + " cannot be read, so its approval policy is unknown: " + s.ConfigError.Error() + " Fix it on the default branch; until then no version can be approved."
	case !s.Ready && s.Check == nil:
		return fmt.Sprintf("v%d is not ready for review yet: the base check has not finished.", s.Version)
	}
	// An invalid version says why, whether or not it was announced.
	if why := s.Check.Blocks(); why != "" {
		return why
	}
	if !s.Ready {
		return fmt.Sprintf("v%d is not ready for review yet: its base check has just finished and the issue is being told.", s.Version)
	}
	for _, a := range s.Signers {
		if a.Same(s.Viewer) {
			return fmt.Sprintf("You signed v%d. The repository's policy is enforce: a second approver with write access who is not the requester must sign too.", s.Version)
		}
	}
	requester := s.Viewer.Same(s.Requester)
	if s.Policy != PolicyEnforce && !MayDecide(s.Permission, requester) {
		return fmt.Sprintf("Policy %s: the requester, %s, or a maintainer approves. With write access you sign as the second approver where the policy is enforce.", s.Policy, s.Requester.Login)
	}
	if s.Policy == PolicyEnforce && !requester {
		if !HasWriteAccess(s.Permission) {
			return "Policy enforce: a second approver needs write access to the repository."
		}
		for _, a := range s.Signers {
			if !a.Same(s.Requester) {
				return fmt.Sprintf("%s signed as the second approver; the requester, %s, must sign too.", a.Login, s.Requester.Login)
			}
		}
	}
	return ""
}

// Rejections counts the rejected versions among states.
func Rejections(states []VersionState) int {
	n := 0
	for _, s := range states {
		if s == VersionRejected {
			n++
		}
	}
	return n
}

// RejectionCapReached reports whether a ticket rejected this many times
// reached the repository's approval.max_rejections: then it stops and gets
// the lane:pair label.
func (c RepoConfig) RejectionCapReached(rejections int) bool {
	return c.MaxRejections > 0 && rejections >= c.MaxRejections
}

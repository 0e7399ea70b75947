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

// ApprovalComplete reports whether a version signed by these logins is
// approved under the policy: one signature under single; the requester's
// and one other under enforce.
func ApprovalComplete(policy, requester string, signers []string) bool {
	if policy != PolicyEnforce {
		return len(signers) > 0
	}
	return slices.ContainsFunc(signers, func(l string) bool { return strings.EqualFold(l, requester) }) &&
		slices.ContainsFunc(signers, func(l string) bool { return !strings.EqualFold(l, requester) })
}

// Decision is a version's recorded decision, as the approval policy reads it.
type Decision struct {
	Approved bool
	By       string
}

// Signing is everything the approval policy weighs when someone would
// sign a version: who they are, the version, and the repository's policy.
type Signing struct {
	// Viewer is the login about to sign, Permission theirs on the
	// repository, Requester the ticket's.
	Viewer, Permission, Requester string
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
	// Signers are the logins that signed the version already.
	Signers []string
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
	for _, l := range s.Signers {
		if strings.EqualFold(l, s.Viewer) {
			return fmt.Sprintf("You signed v%d. The repository's policy is enforce: a second approver with write access who is not the requester must sign too.", s.Version)
		}
	}
	requester := strings.EqualFold(s.Viewer, s.Requester)
	if s.Policy != PolicyEnforce && !MayDecide(s.Permission, requester) {
		return fmt.Sprintf("Policy %s: the requester, %s, or a maintainer approves. With write access you sign as the second approver where the policy is enforce.", s.Policy, s.Requester)
	}
	if s.Policy == PolicyEnforce && !requester {
		if !HasWriteAccess(s.Permission) {
			return "Policy enforce: a second approver needs write access to the repository."
		}
		for _, l := range s.Signers {
			if !strings.EqualFold(l, s.Requester) {
				return fmt.Sprintf("%s signed as the second approver; the requester, %s, must sign too.", l, s.Requester)
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

package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/report"
)

func TestHasWriteAccessAndMayView(t *testing.T) {
	tests := []struct {
		perm                string
		write               bool
		requester, outsider bool // MayView for the requester, for anyone else
		decides             bool // MayDecide for anyone but the requester
		check               bool // MaySeeCheck for anyone but the requester
	}{
		{PermAdmin, true, true, true, true, true},
		{PermMaintain, true, true, true, true, true},
		{"MAINTAIN", true, true, true, true, true},
		{PermWrite, true, true, true, false, true},
		{PermRead, false, true, false, false, true},
		{PermNone, false, false, false, false, false},
		{"", false, true, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.perm, func(t *testing.T) {
			if got := HasWriteAccess(tt.perm); got != tt.write {
				t.Errorf("HasWriteAccess(%q) = %t", tt.perm, got)
			}
			if got := MayView(tt.perm, true); got != tt.requester {
				t.Errorf("MayView(%q, requester) = %t", tt.perm, got)
			}
			if got := MayView(tt.perm, false); got != tt.outsider {
				t.Errorf("MayView(%q, other) = %t", tt.perm, got)
			}
			if got := MayDecide(tt.perm, false); got != tt.decides {
				t.Errorf("MayDecide(%q, other) = %t", tt.perm, got)
			}
			if got := MaySeeOutput(tt.perm, true); got != tt.requester {
				t.Errorf("MaySeeOutput(%q, requester) = %t", tt.perm, got)
			}
			if got := MaySeeCheck(tt.perm, false); got != tt.check {
				t.Errorf("MaySeeCheck(%q, other) = %t", tt.perm, got)
			}
		})
	}
}

func TestApprovalComplete(t *testing.T) {
	dev, ada, max := Account{"dev", 41}, Account{"ada", 42}, Account{"max", 43}
	tests := []struct {
		name    string
		policy  string
		signers []Account
		want    bool
	}{
		{"single, none", PolicySingle, nil, false},
		{"single, the requester", PolicySingle, []Account{dev}, true},
		{"single, another", PolicySingle, []Account{ada}, true},
		{"enforce, the requester alone", PolicyEnforce, []Account{dev}, false},
		{"enforce, another alone", PolicyEnforce, []Account{ada}, false},
		{"enforce, another and the requester", PolicyEnforce, []Account{ada, {"DEV", 41}}, true},
		{"enforce, two others", PolicyEnforce, []Account{ada, max}, false},
		// By account: the requester under two logins is one signer; a
		// login the requester left, now another account's, is not the
		// requester; the requester renamed still is.
		{"enforce, the requester renamed signs again", PolicyEnforce, []Account{dev, {"dev-renamed", 41}}, false},
		{"enforce, the requester's old login on another account", PolicyEnforce, []Account{{"dev", 99}, max}, false},
		{"enforce, the requester renamed and another", PolicyEnforce, []Account{{"dev", 99}, {"dev-renamed", 41}}, true},
		// Signatures made before ids were kept are matched by login.
		{"enforce, old signatures", PolicyEnforce, []Account{{"ada", 0}, {"dev", 0}}, true},
		{"enforce, an old signature of the requester's login", PolicyEnforce, []Account{{"dev", 0}, dev}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ApprovalComplete(tt.policy, dev, tt.signers); got != tt.want {
				t.Errorf("ApprovalComplete = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestSignBlock(t *testing.T) {
	dev := Account{"dev", 41}
	ok := Signing{Viewer: dev, Permission: PermWrite, Requester: dev, Version: 2, Newest: 2, Policy: PolicySingle, Ready: true, Check: valid}
	with := func(f func(*Signing)) Signing { s := ok; f(&s); return s }
	tests := []struct {
		name string
		s    Signing
		want string // a part of the reason; "" when the viewer may sign
	}{
		{"the requester signs", ok, ""},
		{"an older version", with(func(s *Signing) { s.Version = 1 }), "v1 is not the newest version: v2 is"},
		{"approved already", with(func(s *Signing) { s.Decision = &Decision{Approved: true, By: "ada"} }), "v2 is approved (by ada)"},
		{"rejected", with(func(s *Signing) { s.Decision = &Decision{By: "ada"} }), "v2 was rejected by ada"},
		{"a broken config", with(func(s *Signing) { s.ConfigError = errors.New("approval.policy \"both\"") }), "approval policy is unknown"},
		{"not ready", with(func(s *Signing) { s.Ready = false }), "not ready for review yet"},
		{"every test passes on base", with(func(s *Signing) { s.Check = invalid }), "Every hidden test passes on the base commit"},
		{"the reference fails", with(func(s *Signing) {
			s.Check = &VersionCheck{Tests: []string{"t::a"}, Reference: &report.ReferenceCheck{Failed: []string{"t::a"}}}
		}), "reference patch fails 1 of the hidden tests"},
		{"signed already", with(func(s *Signing) { s.Signers = []Account{{"DEV", 41}} }), "You signed v2"},
		{"signed already under another login", with(func(s *Signing) { s.Signers = []Account{{"dev-old", 41}} }), "You signed v2"},
		{"enforce: the requester's old login, another account's now, is a second approver", with(func(s *Signing) {
			s.Policy, s.Viewer, s.Permission, s.Signers = PolicyEnforce, Account{"dev", 99}, PermWrite, []Account{{"ada", 42}}
		}), "ada signed as the second approver; the requester, dev, must sign too"},
		{"enforce: the requester renamed completes", with(func(s *Signing) {
			s.Policy, s.Viewer, s.Signers = PolicyEnforce, Account{"dev-renamed", 41}, []Account{{"ada", 42}}
		}), ""},
		{"enforce: a second approver with write access", with(func(s *Signing) { s.Policy, s.Viewer, s.Permission = PolicyEnforce, Account{"wes", 44}, PermWrite }), ""},
		{"enforce: a reader may not be second", with(func(s *Signing) { s.Policy, s.Viewer, s.Permission = PolicyEnforce, Account{"sam", 45}, PermRead }), "needs write access"},
		{"enforce: one second approver only", with(func(s *Signing) {
			s.Policy, s.Viewer, s.Permission, s.Signers = PolicyEnforce, Account{"wes", 44}, PermWrite, []Account{{"ada", 42}}
		}), "ada signed as the second approver; the requester, dev, must sign too"},
		{"single: write access alone does not approve", with(func(s *Signing) { s.Viewer, s.Permission = Account{"wes", 44}, PermWrite }), "the requester, dev, or a maintainer approves"},
		{"single: a maintainer approves", with(func(s *Signing) { s.Viewer, s.Permission = Account{"max", 43}, PermMaintain }), ""},
		{"enforce: the requester completes", with(func(s *Signing) { s.Policy, s.Signers = PolicyEnforce, []Account{{"ada", 42}} }), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SignBlock(tt.s)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("SignBlock = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRejectionCap(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		states []VersionState
		want   bool
	}{
		{"none rejected", 3, []VersionState{VersionPending}, false},
		{"below the cap", 3, []VersionState{VersionRejected, VersionRejected, VersionPending}, false},
		{"at the cap", 3, []VersionState{VersionRejected, VersionRejected, VersionRejected}, true},
		{"past the cap", 2, []VersionState{VersionRejected, VersionRejected, VersionRejected}, true},
		{"approvals and supersessions do not count", 2, []VersionState{VersionRejected, VersionSuperseded, VersionApproved}, false},
		{"no cap", 0, []VersionState{VersionRejected, VersionRejected}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := RepoConfig{MaxRejections: tt.max}
			if got := cfg.RejectionCapReached(Rejections(tt.states)); got != tt.want {
				t.Errorf("RejectionCapReached(%d of %v) = %t, want %t", Rejections(tt.states), tt.states, got, tt.want)
			}
		})
	}
}

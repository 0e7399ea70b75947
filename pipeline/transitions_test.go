package pipeline

import (
	"testing"

	"github.com/testfirst-app/testfirst/report"
)

// valid and invalid are base checks as the version check records them.
var (
	valid   = &VersionCheck{Tests: []string{"t::a", "t::b"}, Base: report.BaseCheck{GuardTests: []string{"t::a"}}}
	invalid = &VersionCheck{Tests: []string{"t::a"}, Base: report.BaseCheck{AllPass: true}}
)

func versions(states ...VersionState) []VersionStatus {
	out := make([]VersionStatus, len(states))
	for i, s := range states {
		out[i] = VersionStatus{Number: i + 1, State: s, Check: valid}
	}
	return out
}

func TestTicketStateOf(t *testing.T) {
	tests := []struct {
		name string
		vs   []VersionStatus
		want TicketState
	}{
		{"no version", nil, TicketWriting},
		{"pending, not checked", []VersionStatus{{State: VersionPending}}, TicketChecking},
		{"pending, valid", []VersionStatus{{State: VersionPending, Check: valid}}, TicketAwaitingApproval},
		{"pending, invalid", []VersionStatus{{State: VersionPending, Check: invalid}}, TicketWriting},
		{"approved", versions(VersionApproved), TicketApproved},
		{"rejected", versions(VersionRejected), TicketWriting},
		{"the newest decides", versions(VersionSuperseded, VersionApproved), TicketApproved},
		{"a new version after an approval", append(versions(VersionSuperseded), VersionStatus{State: VersionPending}), TicketChecking},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TicketStateOf(tt.vs); got != tt.want {
				t.Errorf("TicketStateOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNextAnnouncement(t *testing.T) {
	tests := []struct {
		name   string
		v      VersionStatus
		newest bool
		want   Announcement
	}{
		{"pending, not checked", VersionStatus{State: VersionPending}, true, AnnouncedNone},
		{"pending, valid", VersionStatus{State: VersionPending, Check: valid}, true, AnnouncedReady},
		{"pending, invalid", VersionStatus{State: VersionPending, Check: invalid}, true, AnnouncedInvalid},
		{"pending, not the newest", VersionStatus{State: VersionPending, Check: valid}, false, AnnouncedNone},
		{"ready already", VersionStatus{State: VersionPending, Check: valid, Announced: AnnouncedReady}, true, AnnouncedNone},
		{"signed once under enforce", VersionStatus{State: VersionPending, Check: valid, Announced: AnnouncedReady, Signers: []string{"alice"}}, true, AnnouncedSignatureAsked},
		{"signature asked already", VersionStatus{State: VersionPending, Check: valid, Announced: AnnouncedSignatureAsked, Signers: []string{"alice"}}, true, AnnouncedNone},
		{"signed, not the newest", VersionStatus{State: VersionPending, Check: valid, Announced: AnnouncedReady, Signers: []string{"alice"}}, false, AnnouncedNone},
		{"approved after a signature was asked", VersionStatus{State: VersionApproved, Announced: AnnouncedSignatureAsked}, true, AnnouncedApproved},
		{"rejected after a signature was asked", VersionStatus{State: VersionRejected, Announced: AnnouncedSignatureAsked}, true, AnnouncedRejected},
		{"approved", VersionStatus{State: VersionApproved, Announced: AnnouncedReady}, true, AnnouncedApproved},
		{"approved, announced", VersionStatus{State: VersionApproved, Announced: AnnouncedApproved}, true, AnnouncedNone},
		{"rejected", VersionStatus{State: VersionRejected, Announced: AnnouncedReady}, false, AnnouncedRejected},
		{"rejected, announced", VersionStatus{State: VersionRejected, Announced: AnnouncedRejected}, true, AnnouncedNone},
		{"approval superseded", VersionStatus{State: VersionSuperseded, Announced: AnnouncedApproved}, false, AnnouncedSuperseded},
		{"pending superseded", VersionStatus{State: VersionSuperseded, Announced: AnnouncedReady}, false, AnnouncedNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NextAnnouncement(tt.v, tt.newest); got != tt.want {
				t.Errorf("NextAnnouncement = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRejectionIsNewAndNextTicketState(t *testing.T) {
	tests := []struct {
		name       string
		current    TicketState
		vs         []VersionStatus
		announced  bool
		capReached bool
		wantNew    bool
		want       TicketState
	}{
		{"a rejection announced now", TicketAwaitingApproval, versions(VersionRejected), true, false, true, TicketWriting},
		{"the cap is reached", TicketAwaitingApproval, versions(VersionRejected, VersionRejected), true, true, true, TicketStopped},
		{"state moves on without an announcement", TicketAwaitingApproval, versions(VersionRejected), false, false, true, TicketWriting},
		{"a periodic sync of a rejected ticket", TicketWriting, versions(VersionRejected), false, false, false, TicketWriting},
		{"stopped stays stopped", TicketStopped, versions(VersionRejected), false, false, false, TicketStopped},
		{"stopped with no version", TicketStopped, nil, false, false, false, TicketStopped},
		{"a new version restarts a stopped ticket", TicketStopped, append(versions(VersionRejected), VersionStatus{State: VersionPending}), false, false, false, TicketChecking},
		{"the newest is not a rejection", TicketAwaitingApproval, versions(VersionApproved), false, false, false, TicketApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RejectionIsNew(tt.current, tt.vs, tt.announced); got != tt.wantNew {
				t.Errorf("RejectionIsNew = %t, want %t", got, tt.wantNew)
			}
			if got := NextTicketState(tt.current, tt.vs, tt.capReached); got != tt.want {
				t.Errorf("NextTicketState = %s, want %s", got, tt.want)
			}
		})
	}
}

package pipeline

// VersionStatus is what the pipeline's transitions read of one version:
// its state in the store (the source of truth) and what the database
// recorded beside it.
type VersionStatus struct {
	Number int
	State  VersionState
	// Check is the version's base check, nil until it ran.
	Check *VersionCheck
	// Announced is what the issue was last told about the version.
	Announced Announcement
	// Signers are those who signed the version while it waits for the
	// signature enforce asks for (none once it is decided).
	Signers []string
}

// TicketStateOf derives a ticket's state from its versions, oldest first:
// writing with none; then the newest decides.
func TicketStateOf(vs []VersionStatus) TicketState {
	if len(vs) == 0 {
		return TicketWriting
	}
	v := vs[len(vs)-1]
	switch v.State {
	case VersionApproved:
		return TicketApproved
	case VersionPending:
		if v.Check == nil {
			return TicketChecking
		}
		if v.Check.Valid() {
			return TicketAwaitingApproval
		}
	}
	return TicketWriting
}

// NextAnnouncement is what the issue should be told next about v, or
// AnnouncedNone when nothing. newest says whether v is the ticket's newest
// version: only the newest is offered for review. Each announcement is
// made once per transition.
func NextAnnouncement(v VersionStatus, newest bool) Announcement {
	switch {
	case v.State == VersionPending && newest && v.Check != nil && v.Announced == AnnouncedNone:
		if v.Check.Valid() {
			return AnnouncedReady
		}
		return AnnouncedInvalid
	case v.State == VersionPending && newest && v.Announced == AnnouncedReady && len(v.Signers) > 0:
		return AnnouncedSignatureAsked
	case v.State == VersionApproved && v.Announced != AnnouncedApproved:
		return AnnouncedApproved
	case v.State == VersionRejected && v.Announced != AnnouncedRejected:
		return AnnouncedRejected
	case v.State == VersionSuperseded && v.Announced == AnnouncedApproved:
		return AnnouncedSuperseded
	}
	return AnnouncedNone
}

// RejectionIsNew reports whether the ticket's newest version is a
// rejection not yet weighed against the rejection cap: it was announced
// now, or the ticket's state moves on because of it. Only then is the cap
// read from the repository's config.
func RejectionIsNew(current TicketState, vs []VersionStatus, announcedNow bool) bool {
	if current == TicketStopped || len(vs) == 0 || vs[len(vs)-1].State != VersionRejected {
		return false
	}
	return announcedNow || TicketStateOf(vs) != current
}

// NextTicketState is the state a ticket moves to: the one its versions
// say, or stopped when capReached (its rejections reached the cap). A
// stopped ticket stays stopped until a new version is pushed.
func NextTicketState(current TicketState, vs []VersionStatus, capReached bool) TicketState {
	if capReached {
		return TicketStopped
	}
	if current == TicketStopped && (len(vs) == 0 || vs[len(vs)-1].State == VersionRejected) {
		return TicketStopped
	}
	return TicketStateOf(vs)
}

// Active reports whether a ticket acts on GitHub: its issue is open and
// its label on.
func Active(closed, withdrawn bool) bool { return !closed && !withdrawn }

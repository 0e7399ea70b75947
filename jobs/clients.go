package jobs

import (
	"context"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/store"
)

// installationClients is the slice of GitHub the delivery worker needs.
type installationClients interface {
	Installation(id int64) (*github.Installation, error)
}

// storeVersions is what the sync reads of the store.
type storeVersions interface {
	// Versions lists a ticket's versions, oldest first, with their derived
	// states; a ticket with none gives none.
	Versions(ctx context.Context, t store.Ticket) ([]store.Version, error)
}

// pendingVersions is what the base check reads of the store.
type pendingVersions interface {
	// OpenForCheck opens a pending version by its exact digest; it refuses
	// any other.
	OpenForCheck(ctx context.Context, t store.Ticket, k int, digest string) (*store.Content, store.Version, error)
}

// approvedTests is what the grade job reads of the store.
type approvedTests interface {
	// Open opens the ticket's approved version if digest is its digest,
	// and refuses anything else.
	Open(ctx context.Context, t store.Ticket, digest string) (*store.Content, store.Version, error)
}

// storeTicket names a ticket in the hidden-test store.
func storeTicket(repo db.Repository, issue int) store.Ticket {
	return store.Ticket{Installation: repo.InstallationID, Owner: repo.Owner, Repo: repo.Name, Issue: issue}
}

// approvedVersion returns the ticket's approved version, if any: the
// newest version, when it is approved.
func approvedVersion(ctx context.Context, s storeVersions, t store.Ticket) (*store.Version, error) {
	vs, err := s.Versions(ctx, t)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	if v := vs[len(vs)-1]; v.State == store.StateApproved {
		return &v, nil
	}
	return nil, nil
}

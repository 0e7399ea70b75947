package jobs

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
)

// DeliveryWorker handles the deliveries that need work; see NeedsJob.
type DeliveryWorker struct {
	river.WorkerDefaults[DeliveryArgs]
	db     *db.DB
	github installationClients
	// grades starts and cancels grades; see grading.
	grades grading
	// agents starts the writer of a ticket opened on a repository that
	// names one; nil on a service without agents.
	agents *agentQueue
	// pasted reads what deliveries carry for hidden tests pasted without
	// their canary; nil on a service without the store.
	pasted *pastedScanner
	// keeps is whether this service works keep_tests jobs (it holds the
	// store's writer): approvals and merges enqueue them.
	keeps bool
	log   *slog.Logger
	// publicURL starts the card's links in comments.
	publicURL string
}

// grading is how deliveries start and cancel grades. Whether the service
// grades is decided when it is built: a *gradeQueue when it has the
// hidden-test store and the sandbox, notGrading when it has not.
type grading interface {
	// cancel and cancelTicket stop grades and complete their check runs.
	cancel(ctx context.Context, gi *github.Installation, repo db.Repository, gs []db.Grade, why string) error
	cancelTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, keep, why string) error
	// gradeTicket grades a pull request's head against the ticket's
	// approved tests; when it cannot, the head's check run says why and
	// so does the returned text.
	gradeTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string, force bool) (string, error)
	// rename names a pull request's check runs for the tickets it links
	// now.
	rename(ctx context.Context, gi *github.Installation, repo db.Repository, pr int, head string, tickets []db.Ticket) error
	// withdraw completes the ticket's check runs on open pull requests as
	// withdrawn by the login by.
	withdraw(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, by string) error
	// resume grades the open pull requests of a ticket taken up again.
	resume(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) error
	// regrade grades again the heads of gs in one repository, for by.
	regrade(ctx context.Context, gh installationClients, installation, repoID int64, gs []db.Grade, by string) error
	// regradeIssue and regradePull carry out /testfirst regrade and
	// return the reply ("" for none).
	regradeIssue(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) (string, error)
	regradePull(ctx context.Context, gi *github.Installation, repo db.Repository, pr db.PullRequest, tickets []db.Ticket) (string, error)
	// enqueueSync asks for the ticket's store sync in tx.
	enqueueSync(ctx context.Context, tx *db.Tx, ticket int64) error
}

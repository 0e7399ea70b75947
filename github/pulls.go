package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v66/github"
)

// Pull is a pull request as GitHub shows it now.
type Pull struct {
	Number int
	// Author and AuthorID are who opened it.
	Author   string
	AuthorID int64
	HeadSHA  string
	HeadRef  string
	// HeadRepo is the head's repository, owner/name: another than the
	// pull request's for a fork.
	HeadRepo string
	BaseRef  string
	Open     bool
	Merged   bool
}

// Pull reads pull request number of owner/repo.
func (in *Installation) Pull(ctx context.Context, owner, repo string, number int) (Pull, error) {
	p, resp, err := in.gh.PullRequests.Get(ctx, owner, repo, number)
	if err := classify(fmt.Sprintf("get pull request #%d of %s/%s", number, owner, repo), resp, err, in.now()); err != nil {
		return Pull{}, err
	}
	return Pull{Number: p.GetNumber(), Author: p.GetUser().GetLogin(), AuthorID: p.GetUser().GetID(), HeadSHA: p.GetHead().GetSHA(),
		HeadRef: p.GetHead().GetRef(), HeadRepo: p.GetHead().GetRepo().GetFullName(), BaseRef: p.GetBase().GetRef(),
		Open: p.GetState() == "open", Merged: p.GetMerged()}, nil
}

// Review is one submitted review of a pull request.
type Review struct {
	ID       int64
	Reviewer string
	// ReviewerID is the reviewer's numeric account id.
	ReviewerID int64
	// State is GitHub's: APPROVED, CHANGES_REQUESTED, COMMENTED,
	// DISMISSED or PENDING.
	State string
	// CommitID is the head the review was submitted on.
	CommitID string
}

// Reviews lists the reviews of pull request number, oldest first, every
// page of them.
func (in *Installation) Reviews(ctx context.Context, owner, repo string, number int) ([]Review, error) {
	op := fmt.Sprintf("list reviews of pull request #%d of %s/%s", number, owner, repo)
	var out []Review
	opts := &gh.ListOptions{PerPage: 100}
	for {
		rs, resp, err := in.gh.PullRequests.ListReviews(ctx, owner, repo, number, opts)
		if err := classify(op, resp, err, in.now()); err != nil {
			return nil, err
		}
		for _, r := range rs {
			out = append(out, Review{ID: r.GetID(), Reviewer: r.GetUser().GetLogin(), ReviewerID: r.GetUser().GetID(), State: r.GetState(),
				CommitID: r.GetCommitID()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v66/github"
)

// OpenPull opens a pull request from branch head into base of the same
// repository and returns its number; when one is open already from that
// branch, its number, unchanged (a retried job opens no second one).
func (in *Installation) OpenPull(ctx context.Context, owner, repo, head, base, title, body string) (int, error) {
	op := fmt.Sprintf("open pull request from %s into %s of %s/%s", head, base, owner, repo)
	open, resp, err := in.gh.PullRequests.List(ctx, owner, repo, &gh.PullRequestListOptions{State: "open", Head: owner + ":" + head})
	if err := classify(op+": list", resp, err, in.now()); err != nil {
		return 0, err
	}
	for _, p := range open {
		if p.GetHead().GetRef() == head {
			return p.GetNumber(), nil
		}
	}
	p, resp, err := in.gh.PullRequests.Create(ctx, owner, repo, &gh.NewPullRequest{Title: gh.String(title), Head: gh.String(head),
		Base: gh.String(base), Body: gh.String(body)})
	if err := classify(op, resp, err, in.now()); err != nil {
		return 0, err
	}
	return p.GetNumber(), nil
}

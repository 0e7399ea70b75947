package github

import (
	"context"
	"fmt"
)

// RepoInstallation finds the app's installation on a repository (GET
// /repos/{owner}/{repo}/installation, as the app). It returns an error
// matching ErrNotFound when the app is not installed there.
func (c *Clients) RepoInstallation(ctx context.Context, owner, repo string) (int64, error) {
	in, resp, err := c.app.Apps.FindRepositoryInstallation(ctx, owner, repo)
	if err := classify(fmt.Sprintf("find the installation on %s/%s", owner, repo), resp, err, c.now()); err != nil {
		return 0, err
	}
	return in.GetID(), nil
}

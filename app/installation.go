package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/testfirst-app/testfirst/github"
)

// ErrNoAppCredentials: the configuration holds no GitHub App credentials,
// so nothing can be asked of GitHub as the app.
var ErrNoAppCredentials = errors.New("the app's credentials are not configured")

// ErrAppNotInstalled: the app is not installed on the repository.
var ErrAppNotInstalled = errors.New("the app is not installed on the repository")

// RepoInstallation returns the id of the app's installation on
// owner/repo, asked of GitHub with the app's credentials from cfg
// (GET /repos/{owner}/{repo}/installation).
func RepoInstallation(ctx context.Context, cfg Config, owner, repo string) (int64, error) {
	if !cfg.HasApp() {
		return 0, ErrNoAppCredentials
	}
	clients, err := github.NewClients(github.AppConfig{AppID: cfg.GitHubAppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL})
	if err != nil {
		return 0, err
	}
	id, err := clients.RepoInstallation(ctx, owner, repo)
	if errors.Is(err, github.ErrNotFound) {
		return 0, fmt.Errorf("%s/%s: %w", owner, repo, ErrAppNotInstalled)
	}
	return id, err
}

package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/jobs"
)

// ErrConfigured is what Serve returns after an app was registered from its
// setup page and its credentials stored: load the configuration again and
// serve as the app.
var ErrConfigured = errors.New("GitHub App registered: load the configuration again and serve as the app")

// mountSetup answers GET / and GET /setup/callback with the app's
// registration from a manifest. The channel closes once the credentials are
// stored in cfg.GitHubAppFile.
func mountSetup(ctx context.Context, mux *http.ServeMux, cfg Config, log *slog.Logger) (<-chan struct{}, error) {
	conv, err := github.NewManifestClient(cfg.GitHubAPIURL)
	if err != nil {
		return nil, err
	}
	registered := make(chan struct{})
	var once sync.Once
	perms := github.AppPermissions()
	if len(cfg.Agents.Harnesses) > 0 {
		// An implementer pushes its branch and opens its pull request.
		perms = github.AgentPermissions()
	}
	setup, err := handlers.NewSetup(handlers.SetupConfig{PublicURL: cfg.PublicURL, GitHubURL: cfg.WebURL(), Events: jobs.Events(), Permissions: perms}, conv, NewCredentialFiles(cfg.GitHubAppFile), log,
		func(github.AppRegistration) { once.Do(func() { close(registered) }) })
	if err != nil {
		return nil, err
	}
	mux.Handle("GET /{$}", setup)
	mux.Handle("GET "+handlers.SetupCallbackPath, setup)
	log.WarnContext(ctx, "no GitHub App configured: open the public URL to register one from a manifest; deliveries are refused and no jobs run until then",
		"public_url", cfg.PublicURL, "github_url", cfg.WebURL(), "app_file", cfg.GitHubAppFile)
	return registered, nil
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/report"
)

// ReproduceGrade opens the service's database, GitHub App, store and
// sandbox engine as cfg says and reproduces grade id; see
// jobs.Reproducer.Reproduce.
func ReproduceGrade(ctx context.Context, cfg Config, id int64) (*report.Reproduction, error) {
	if !cfg.HasApp() {
		return nil, errors.New("reproducing a grade fetches its trees from GitHub: configure the GitHub App (TESTFIRST_GITHUB_APP_ID and TESTFIRST_GITHUB_PRIVATE_KEY_FILE) as for serve")
	}
	d, err := db.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	clients, err := github.NewClients(github.AppConfig{AppID: cfg.GitHubAppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL})
	if err != nil {
		return nil, err
	}
	r, closeR, err := OpenStoreReader(ctx, cfg.StoreURL)
	if err != nil {
		return nil, fmt.Errorf("hidden test store: %w", err)
	}
	defer closeR()
	g, err := OpenGrading(ctx, GradingConfig{Progress: io.Discard})
	if err != nil {
		return nil, fmt.Errorf("sealed grader: %w", err)
	}
	return jobs.NewReproducer(d, clients, r, g.Grader, g.ImageID, g.Docker).Reproduce(ctx, id)
}

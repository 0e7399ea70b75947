package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
)

// installationFlag is --installation: an id, and whether it was given.
type installationFlag struct {
	id  int64
	set bool
}

func (f *installationFlag) String() string { return strconv.FormatInt(f.id, 10) }

// Set reads an installation id: a number, 0 for a ticket only the command
// line knows.
func (f *installationFlag) Set(s string) error {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return fmt.Errorf("want the installation's number (0 for a ticket the service never sees)")
	}
	f.id, f.set = id, true
	return nil
}

// findInstallation fills in t.Installation: the --installation given, or
// the app's installation on the repository, found with the app's
// credentials from the service's configuration (configPath,
// $TESTFIRST_CONFIG, the app file). Without credentials, or where the app
// is not installed, it says how to fix it.
func findInstallation(ctx context.Context, t *store.Ticket, flag installationFlag, configPath string) (app.Config, error) {
	cfg, err := app.LoadConfig(configPath, os.Getenv)
	if flag.set {
		t.Installation = flag.id
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("find the installation of %s/%s: %w", t.Owner, t.Repo, err)
	}
	id, err := app.RepoInstallation(ctx, cfg, t.Owner, t.Repo)
	if errors.Is(err, app.ErrNoAppCredentials) {
		return cfg, usageError{fmt.Sprintf("the app's credentials are not configured here, so the installation of %s/%s cannot be found. "+
			"Run this where testfirst serve runs (the same --config or TESTFIRST_CONFIG, or the %s it wrote when the app was registered), "+
			"or pass --installation ID (the number at the end of the installation's settings URL). "+
			"--installation 0 keeps a ticket only the command line knows: the service never sees it.", t.Owner, t.Repo, cfg.GitHubAppFile)}
	}
	if errors.Is(err, app.ErrAppNotInstalled) {
		return cfg, usageError{fmt.Sprintf("the app (id %d) is not installed on %s/%s: install it on the repository (GitHub, the app's page, Install), then run this again", cfg.GitHubAppID, t.Owner, t.Repo)}
	}
	if err != nil {
		return cfg, err
	}
	t.Installation = id
	return cfg, nil
}

// refuseManagedDecision refuses a decision from the command line on a
// ticket of an installation: the service manages it, and only the card
// knows who decides (a GitHub sign-in) and applies the repository's
// approval policy to them. The command line can prove nothing of --by.
func refuseManagedDecision(t store.Ticket, verb string, cfg app.Config) error {
	if t.Installation == 0 {
		return nil
	}
	where := "the approval card, <testfirst serve's address>" + pipeline.TicketPath(t.Owner, t.Repo, t.Issue)
	if cfg.PublicURL != "" {
		where = "the approval card, " + trimSlash(cfg.PublicURL) + pipeline.TicketPath(t.Owner, t.Repo, t.Issue)
	}
	return usageError{fmt.Sprintf("%s is a ticket of installation %d, which the service manages: %s it on %s, signed in with GitHub, where the repository's approval policy applies. "+
		"The command line cannot prove who decides, so it does not %s tickets the service manages.", t, t.Installation, verb, where, verb)}
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

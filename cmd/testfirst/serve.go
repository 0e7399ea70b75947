package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/testfirst-app/testfirst/app"
)

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("serve", stderr)
	config := fs.String("config", "", "YAML configuration file (also $TESTFIRST_CONFIG)")
	role := fs.String("role", "", "what this service does: all (default), app (webhooks, the card, every job but grades) or grader (grades and base checks only); also $TESTFIRST_ROLE, role in the config file")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	// The flag wins over the file and the environment, and is validated
	// with them.
	getenv := os.Getenv
	if *role != "" {
		getenv = func(k string) string {
			if k == "TESTFIRST_ROLE" {
				return *role
			}
			return os.Getenv(k)
		}
	}
	cfg, err := app.LoadConfig(*config, getenv)
	if err != nil {
		return exitUsage, err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	var bound string
	err = app.Serve(ctx, cfg, log, func(addr string) {
		bound = addr
		announce(stdout, cfg, addr)
	})
	if errors.Is(err, app.ErrConfigured) && ctx.Err() == nil {
		// The app was registered from the setup page: serve as it, on the
		// address the admin's browser (and a :0 port) already knows.
		if cfg, err = app.LoadConfig(*config, getenv); err != nil {
			return exitUsage, err
		}
		if !cfg.HasApp() {
			return exitUsage, fmt.Errorf("the app's credentials were stored in %s but the configuration does not name the app: check TESTFIRST_GITHUB_APP_FILE", cfg.GitHubAppFile)
		}
		cfg.Listen = bound
		log.InfoContext(ctx, "serving again as the registered app", "id", cfg.GitHubAppID)
		err = app.Serve(ctx, cfg, log, func(addr string) { announce(stdout, cfg, addr) })
	}
	if err != nil && !errors.Is(err, app.ErrConfigured) {
		return exitUsage, err
	}
	return exitPass, nil
}

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("migrate", stderr)
	config := fs.String("config", "", "YAML configuration file (also $TESTFIRST_CONFIG)")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	cfg, err := app.LoadConfig(*config, os.Getenv)
	if err != nil {
		return exitUsage, err
	}
	if err := app.Migrate(ctx, cfg); err != nil {
		return exitUsage, err
	}
	io.WriteString(stdout, "migrations applied\n")
	return exitPass, nil
}

// announce tells the person who started serve where to go: the
// registration page while no app is configured, the app's home otherwise.
func announce(stdout io.Writer, cfg app.Config, addr string) {
	home := strings.TrimSuffix(cfg.PublicURL, "/") + "/"
	if !cfg.HasApp() {
		fmt.Fprintf(stdout, "testfirst serves on %s. Open %s to register the GitHub App.\n", addr, home)
		return
	}
	if cfg.Role == app.RoleGrader {
		fmt.Fprintf(stdout, "testfirst serves on %s as the grader of GitHub App %d: grades and base checks; health, readiness and metrics only.\n", addr, cfg.GitHubAppID)
		return
	}
	if !cfg.HasLogin() {
		fmt.Fprintf(stdout, "testfirst serves on %s as GitHub App %d. Open %s for the app's install link; the approval card is off until the app's OAuth client is set (TESTFIRST_GITHUB_CLIENT_ID and TESTFIRST_GITHUB_CLIENT_SECRET_FILE).\n", addr, cfg.GitHubAppID, home)
		return
	}
	fmt.Fprintf(stdout, "testfirst serves on %s as GitHub App %d. Open %s for the approval card and the app's install link.\n", addr, cfg.GitHubAppID, home)
}

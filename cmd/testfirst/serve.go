package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/testfirst-app/testfirst/app"
)

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("serve", stderr)
	config := fs.String("config", "", "YAML configuration file (also $TESTFIRST_CONFIG)")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	cfg, err := app.LoadConfig(*config, os.Getenv)
	if err != nil {
		return exitUsage, err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	if err := app.Serve(ctx, cfg, log, nil); err != nil {
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

package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestLoadConfigRole: the role comes from the file or the environment,
// all by default; an unknown role, and a split role on SQLite, are refused
// saying what to set.
func TestLoadConfigRole(t *testing.T) {
	const pg = "postgres://tf@db/testfirst"
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    string
		wantErr []string
	}{
		{name: "default", want: RoleAll},
		{name: "file", file: "role: grader\ndatabase_url: " + pg + "\n", want: RoleGrader},
		{name: "environment wins", file: "role: grader\ndatabase_url: " + pg + "\n", env: map[string]string{"TESTFIRST_ROLE": "app"}, want: RoleApp},
		{name: "all on SQLite", env: map[string]string{"TESTFIRST_ROLE": "all"}, want: RoleAll},
		{name: "unknown", env: map[string]string{"TESTFIRST_ROLE": "web"}, wantErr: []string{`role "web"`, "want all", "app", "grader"}},
		{name: "app on SQLite", env: map[string]string{"TESTFIRST_ROLE": "app"}, wantErr: []string{"role app", "sqlite://./var/testfirst.db", "PostgreSQL", "TESTFIRST_DATABASE_URL"}},
		{name: "grader on SQLite", env: map[string]string{"TESTFIRST_ROLE": "grader", "TESTFIRST_DATABASE_URL": "sqlite:///tmp/x.db"}, wantErr: []string{"role grader", "sqlite:///tmp/x.db", "PostgreSQL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, "testfirst.yml", tt.file)
			}
			c, err := LoadConfig(path, env(tt.env))
			if tt.wantErr == nil {
				if err != nil || c.Role != tt.want {
					t.Fatalf("role %q, %v; want %q", c.Role, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("role %q accepted; want an error", c.Role)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestServeRefusesRoles: Serve refuses a split role before it opens
// anything: the app role given the grader's identity (by its setting, or
// at the default path in its working directory) names it, and the grader
// role without the app's credentials says which to set.
func TestServeRefusesRoles(t *testing.T) {
	t.Chdir(t.TempDir())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// A database URL nothing listens on: a refusal must come before it is
	// dialled.
	base := DefaultConfig()
	base.DatabaseURL = "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"

	app := base
	app.Role = RoleApp
	t.Setenv(EnvGraderIdentity, "/secrets/grader-identity.txt")
	err := Serve(context.Background(), app, log, nil)
	if err == nil || !strings.Contains(err.Error(), EnvGraderIdentity) || !strings.Contains(err.Error(), "/secrets/grader-identity.txt") || !strings.Contains(err.Error(), "role app") {
		t.Errorf("app role with %s set: %v; want a refusal naming the setting", EnvGraderIdentity, err)
	}

	t.Setenv(EnvGraderIdentity, "")
	if err := os.MkdirAll(filepath.Dir(DefaultGraderIdentity), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(DefaultGraderIdentity, []byte("AGE-SECRET-KEY-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = Serve(context.Background(), app, log, nil)
	if err == nil || !strings.Contains(err.Error(), DefaultGraderIdentity) || !strings.Contains(err.Error(), EnvGraderRecipients) {
		t.Errorf("app role beside %s: %v; want a refusal naming the file and %s", DefaultGraderIdentity, err, EnvGraderRecipients)
	}
	if err := os.Remove(DefaultGraderIdentity); err != nil {
		t.Fatal(err)
	}
	// Without the identity, the app role gets past the check to the
	// database, which is not there.
	err = Serve(context.Background(), app, log, nil)
	if err == nil || strings.Contains(err.Error(), "role app") {
		t.Errorf("app role without the grader's identity: %v; want it to reach the database and fail there", err)
	}

	// Agents need the app's store side and the grader's engine at once:
	// a split role that is given harnesses says so.
	for _, role := range []string{RoleApp, RoleGrader} {
		withAgents := base
		withAgents.Role = role
		withAgents.Agents.Harnesses = map[string]agent.Harness{"our-writer": {Preset: "command"}}
		err := Serve(context.Background(), withAgents, log, nil)
		if err == nil || !strings.Contains(err.Error(), "role "+role+": harnesses are configured") || !strings.Contains(err.Error(), "--role all") {
			t.Errorf("role %s with harnesses: %v; want a refusal that says agents need role all", role, err)
		}
	}

	grader := base
	grader.Role = RoleGrader
	err = Serve(context.Background(), grader, log, nil)
	if err == nil || !strings.Contains(err.Error(), "role grader") || !strings.Contains(err.Error(), "TESTFIRST_GITHUB_APP_ID") {
		t.Errorf("grader role without the app: %v; want a refusal naming TESTFIRST_GITHUB_APP_ID", err)
	}
}

// TestLoadConfigUIDSplitAndRuntime: TESTFIRST_UID_SPLIT takes allowed or
// required and nothing else; TESTFIRST_SANDBOX_RUNTIME and the file's
// sandbox.runtime name the runtime, the environment winning.
func TestLoadConfigUIDSplitAndRuntime(t *testing.T) {
	c, err := LoadConfig("", env(map[string]string{"TESTFIRST_UID_SPLIT": "required"}))
	if err != nil || c.UIDSplit != "required" {
		t.Errorf("required: %q, %v", c.UIDSplit, err)
	}
	_, err = LoadConfig("", env(map[string]string{"TESTFIRST_UID_SPLIT": "strict"}))
	if err == nil || !strings.Contains(err.Error(), `uid_split "strict"`) || !strings.Contains(err.Error(), "TESTFIRST_UID_SPLIT=required") {
		t.Errorf("strict: %v; want an error naming the values", err)
	}
	if c, err := LoadConfig("", env(map[string]string{"TESTFIRST_SPLIT": "on"})); err != nil || c.Split != "on" {
		t.Errorf("TESTFIRST_SPLIT=on: %q, %v", c.Split, err)
	}
	_, err = LoadConfig("", env(map[string]string{"TESTFIRST_SPLIT": "yes"}))
	if err == nil || !strings.Contains(err.Error(), `split "yes"`) || !strings.Contains(err.Error(), "TESTFIRST_SPLIT=on") {
		t.Errorf("TESTFIRST_SPLIT=yes: %v; want an error naming the values", err)
	}
	file := writeFile(t, "testfirst.yml", "sandbox:\n  runtime: runsc\n")
	if c, err := LoadConfig(file, env(nil)); err != nil || c.Sandbox.Runtime != "runsc" {
		t.Errorf("file: %q, %v", c.Sandbox.Runtime, err)
	}
	if c, err := LoadConfig(file, env(map[string]string{"TESTFIRST_SANDBOX_RUNTIME": "runc"})); err != nil || c.Sandbox.Runtime != "runc" {
		t.Errorf("environment: %q, %v", c.Sandbox.Runtime, err)
	}
}

// testPostgres returns TESTFIRST_TEST_POSTGRES_URL with a fresh schema as
// its search path, dropped after the test; it skips without one.
func testPostgres(t *testing.T) string {
	t.Helper()
	base := os.Getenv("TESTFIRST_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("TESTFIRST_TEST_POSTGRES_URL is not set")
	}
	conn, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("app_roles_%d", time.Now().UnixNano())
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// TestServeRolesSayWhatIsMissing: past the checks of the configuration,
// a split role that lacks what it needs refuses to start naming it: the
// app without the store's writer side (the grader's recipients), the
// grader without its identity.
func TestServeRolesSayWhatIsMissing(t *testing.T) {
	t.Chdir(t.TempDir())
	gh := fakegithub.New(t)
	key := writeFile(t, "app.pem", string(gh.PrivateKeyPEM()))
	secret := writeFile(t, "secret", "s\n")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, k := range []string{EnvGraderRecipients, EnvGraderIdentity, EnvCardRecipients, EnvCardIdentity} {
		t.Setenv(k, "")
	}
	for _, tt := range []struct {
		role string
		want []string
	}{
		{RoleApp, []string{"role app", "hidden test store", EnvGraderRecipients}},
		{RoleGrader, []string{"role grader", "hidden test store", "no identity", EnvGraderIdentity}},
	} {
		c, err := LoadConfig("", env(map[string]string{"TESTFIRST_ROLE": tt.role, "TESTFIRST_DATABASE_URL": testPostgres(t),
			"TESTFIRST_GITHUB_API_URL": gh.URL(), "TESTFIRST_GITHUB_APP_ID": strconv.FormatInt(gh.AppID(), 10),
			"TESTFIRST_GITHUB_PRIVATE_KEY_FILE": key, "TESTFIRST_WEBHOOK_SECRET_FILE": secret, "TESTFIRST_LISTEN": "127.0.0.1:0",
			"TESTFIRST_STORE_URL": "file://" + filepath.Join(t.TempDir(), "hidden")}))
		if err != nil {
			t.Fatal(err)
		}
		err = Serve(t.Context(), c, log, nil)
		t.Logf("role %s: %v", tt.role, err)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("role %s without its keys: %v; want it to say %q", tt.role, err, w)
			}
		}
	}
}

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// patchFixture reads a real payload and sets fields along dotted paths.
func patchFixture(t *testing.T, file string, set map[string]any) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, file))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for path, v := range set {
		keys := strings.Split(path, ".")
		m := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = v
	}
	out, _ := json.Marshal(doc)
	return out
}

func files(tree *grader.Tree) map[string]string {
	m := map[string]string{}
	for _, f := range tree.Files {
		m[f.Path] = string(f.Data)
	}
	return m
}

// TestServeGradesPullRequest walks the pipeline through the real binary:
// an issue labelled test-first becomes a ticket with its base pinned; tests
// pushed and approved with the command line are picked up; a pull request
// that fixes the issue gets an in-progress check run at once and a
// completed one with the grade; a redelivery does not grade again; and no
// request the app sent to GitHub carries a canary or a test body.
func TestServeGradesPullRequest(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { servePipeline(t, "") })
	t.Run("postgres", func(t *testing.T) { servePipeline(t, postgresSchema(t)) })
}

// postgresSchema returns TESTFIRST_TEST_POSTGRES_URL with a fresh schema as
// its search path, dropped after the test.
func postgresSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv("TESTFIRST_TEST_POSTGRES_URL")
	if base == "" {
		if os.Getenv("TESTFIRST_REQUIRE_DOCKER") != "" {
			t.Fatal("TESTFIRST_TEST_POSTGRES_URL is not set: run make test, which starts PostgreSQL")
		}
		t.Skip("TESTFIRST_TEST_POSTGRES_URL is not set")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("e2e_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(ctx)
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

func servePipeline(t *testing.T, databaseURL string) {
	testenv.Grading(t) // the grader image, or skip without an engine
	t.Setenv("TESTFIRST_WRAPPER", testenv.Wrapper(t))

	gh := fakegithub.New(t)
	const owner, repo, branch = "Codertocat", "Hello-World", "master"
	gh.AddInstallation(1, owner)
	gh.AddRepo(1, owner, repo, branch)
	base, err := grader.LoadTree(filepath.Join(sampleDir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	baseSHA := gh.Commit(owner, repo, branch, files(base))
	patch, _ := os.ReadFile(filepath.Join(sampleDir, "reference.patch"))
	fixed, err := grader.ApplyPatch(base, patch)
	if err != nil {
		t.Fatal(err)
	}
	headSHA := gh.Commit(owner, repo, "feature", files(fixed))

	// Keys and the store, as a deployment has them.
	dir := t.TempDir()
	bin := buildBinary(t)
	graderID, cardID := filepath.Join(dir, "grader-identity.txt"), filepath.Join(dir, "card-identity.txt")
	out, err := exec.Command(bin, "keys", "init", "--identity", graderID, "--card-identity", cardID).Output()
	if err != nil {
		t.Fatal(err)
	}
	cardR, _ := os.ReadFile(filepath.Join(dir, "card-recipient.txt"))
	storeURL := "file://" + filepath.Join(dir, "hidden")
	for k, v := range map[string]string{
		"TESTFIRST_GRADER_RECIPIENTS": strings.TrimSpace(string(out)), "TESTFIRST_GRADER_IDENTITY_FILE": graderID,
		"TESTFIRST_CARD_RECIPIENTS": strings.TrimSpace(string(cardR)), "TESTFIRST_CARD_IDENTITY_FILE": cardID,
	} {
		t.Setenv(k, v)
	}
	const secret = "pipeline-secret"
	env := []string{"TESTFIRST_STORE_URL=" + storeURL}
	if databaseURL != "" {
		env = append(env, "TESTFIRST_DATABASE_URL="+databaseURL)
	}
	s := startServe(t, gh, secret, env...)

	// 1. The label opens the ticket.
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1, "sender.login": "alice"})
	if code := s.deliver(t, secret, "issues", "d-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}

	// The ticket exists before anyone writes tests for it.
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(s.log(), `"msg":"ticket opened"`); {
		if time.Now().After(deadline) {
			t.Fatalf("no ticket opened:\n%s", s.log())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// 2. Tests are written, pushed and approved from the command line.
	hidden := filepath.Join(dir, "tests")
	src, _ := grader.LoadTree(filepath.Join(sampleDir, "hidden"))
	for _, f := range src.Files {
		var kept []string
		for _, line := range strings.SplitAfter(string(f.Data), "\n") {
			if !strings.HasPrefix(line, "# testfirst-canary:") {
				kept = append(kept, line)
			}
		}
		p := filepath.Join(hidden, f.Path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Join(kept, "")), 0o644)
	}
	tk := owner + "/" + repo + "#1"
	pushed, err := exec.Command(bin, "tests", "push", "--store", storeURL, "--ticket", tk, "--installation", "1", "--author", "writer-bot",
		"--reference", filepath.Join(sampleDir, "reference.patch"), "--format", "json", hidden).Output()
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	var v struct {
		Version int    `json:"version"`
		Digest  string `json:"digest"`
	}
	json.Unmarshal(pushed, &v)
	if out, err := exec.Command(bin, "tests", "approve", "--store", storeURL, "--ticket", tk, "--installation", "1", "--version", "1", "--digest", v.Digest, "--by", "alice").CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}

	// 3. A pull request that fixes the issue is graded.
	gh.AddPull(owner, repo, 2, headSHA, branch, "Fixes #1", owner+"/"+repo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"pull_request.body": "Fixes #1", "pull_request.head.sha": headSHA, "installation.id": 1})
	if code := s.deliver(t, secret, "pull_request", "d-pr", opened); code != http.StatusAccepted {
		t.Fatalf("opened: %d", code)
	}
	var run fakegithub.CheckRun
	deadline := time.Now().Add(90 * time.Second)
	for {
		runs := gh.CheckRuns(owner, repo)
		if len(runs) == 1 && runs[0].Status == "completed" {
			run = runs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed check run: %+v", runs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if run.HeadSHA != headSHA || run.Conclusion != "success" || run.Title != "10/10 hidden tests passed · trust: isolated" {
		t.Errorf("check run %+v", run)
	}
	if !strings.Contains(run.Summary, v.Digest) {
		t.Errorf("summary lacks the digest:\n%s", run.Summary)
	}

	// 4. A redelivery does not grade twice.
	if code := s.deliver(t, secret, "pull_request", "d-pr", opened); code != http.StatusAccepted {
		t.Fatalf("redelivery: %d", code)
	}
	time.Sleep(2 * time.Second)
	if runs := gh.CheckRuns(owner, repo); len(runs) != 1 {
		t.Errorf("%d check runs after a redelivery, want 1", len(runs))
	}

	// 5. No route the service answers returns the canary or a test body.
	for _, route := range []string{"/", "/healthz", "/readyz", "/metrics", "/webhook", "/grades/1", "/tickets", "/nonexistent"} {
		_, body := s.get(t, route)
		for _, leak := range []string{"testfirst-canary", "tfc-", "def test_", "assert "} {
			if strings.Contains(body, leak) {
				t.Errorf("GET %s returns %q", route, leak)
			}
		}
	}

	// 6. Nothing the app sent to GitHub carries the canary or a test body.
	var bodies bytes.Buffer
	for _, r := range gh.Requests() {
		bodies.Write(r.Body)
	}
	for _, secret := range []string{"testfirst-canary", "tfc-", "def test_", "assert "} {
		if bytes.Contains(bodies.Bytes(), []byte(secret)) {
			t.Errorf("a request body sent to GitHub contains %q", secret)
		}
	}
	if !strings.Contains(s.log(), `"base_sha":"`+baseSHA) && !strings.Contains(s.log(), baseSHA) {
		t.Errorf("the ticket's base is not the default branch head %s:\n%s", baseSHA, s.log())
	}
}

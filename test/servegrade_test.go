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

	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/tree"
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
	if _, ok := set["sender.login"]; ok {
		if _, ok := set["sender.id"]; !ok {
			// The fixture's id is its own sender's account, not the
			// login's the test names: none, so the service matches the
			// sender by login (as a ticket opened before ids were kept).
			set = mapsClone(set)
			set["sender.id"] = 0
		}
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

func files(tree *tree.Tree) map[string]string {
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
	t.Run("sqlite", func(t *testing.T) { servePipeline(t, "", false) })
	// On PostgreSQL the service grades split (TESTFIRST_SPLIT=on): the
	// base check and the grade run the code under test in a process of
	// its own, and the check run says the grade is sealed.
	t.Run("postgres, split", func(t *testing.T) { servePipeline(t, postgresSchema(t), true) })
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

func servePipeline(t *testing.T, databaseURL string, split bool) {
	p := newPipelineEnv(t)
	owner, repo, secret, baseSHA, headSHA, gh := pipeOwner, pipeRepo, pipeSecret, p.baseSHA, p.fixedSHA, p.gh
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write") // the requester can push to the repository
	var env []string
	trust := "isolated"
	if split {
		env, trust = []string{"TESTFIRST_SPLIT=on"}, "sealed"
	}
	s := p.serve(t, databaseURL, env...)

	// 1. The label opens the ticket.
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1, "sender.login": "alice"})
	if code := s.deliver(t, secret, "issues", "d-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}

	// The ticket exists before anyone writes tests for it.
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)

	// 2. Tests are written, pushed and approved from the command line.
	k, digest := p.push(t, "writer-bot", nil)
	p.decide(t, s, k, digest, "alice", "")
	v := struct{ Digest string }{digest}

	// 3. A pull request that fixes the issue is graded.
	gh.AddPull(owner, repo, 2, headSHA, pipeBranch, "Fixes #1", owner+"/"+repo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"pull_request.body": "Fixes #1", "pull_request.head.sha": headSHA, "installation.id": 1})
	if code := s.deliver(t, secret, "pull_request", "d-pr", opened); code != http.StatusAccepted {
		t.Fatalf("opened: %d", code)
	}
	var run fakegithub.CheckRun
	deadline := time.Now().Add(90 * time.Second)
	for {
		runs := gradeRuns(gh.CheckRuns(owner, repo))
		if len(runs) == 1 && runs[0].Status == "completed" {
			run = runs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed check run: %+v", runs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if run.HeadSHA != headSHA || run.Conclusion != "success" || run.Title != "10/10 hidden tests passed · trust: "+trust {
		t.Errorf("check run %+v", run)
	}
	if split && !strings.Contains(run.Summary, "All 10 passing tests were decided outside the code under test.") {
		t.Errorf("a split grade's summary does not say how much was sealed:\n%s", run.Summary)
	}
	if !strings.Contains(run.Summary, v.Digest) {
		t.Errorf("summary lacks the digest:\n%s", run.Summary)
	}

	// 4. A redelivery does not grade twice.
	if code := s.deliver(t, secret, "pull_request", "d-pr", opened); code != http.StatusAccepted {
		t.Fatalf("redelivery: %d", code)
	}
	time.Sleep(2 * time.Second)
	if runs := gradeRuns(gh.CheckRuns(owner, repo)); len(runs) != 1 {
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

	// 7. The grade reproduces from the command line, from what the service
	// recorded: the commits fetched again, the tests from the store, the
	// same image.
	reproduce := exec.Command(p.bin, "grade", "--reproduce", "1")
	reproduce.Dir, reproduce.Env = s.dir, s.env
	if out, err := reproduce.CombinedOutput(); err != nil || !strings.Contains(string(out), "reproduced: the same verdict") {
		t.Errorf("grade --reproduce 1: %v\n%s", err, out)
	}
}

func mapsClone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

package test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestServeRolesOnPostgres runs the split deployment: one serve process
// of the app role and one of the grader role on one PostgreSQL database.
// A ticket is labelled, its tests base-checked, approved on the app's card
// and a pull request graded end to end through the fake GitHub; the app
// never opens the grader's identity file (fanotify sees every open of it,
// and sees the grader's), never grades, and the grader answers nothing
// but its probes.
func TestServeRolesOnPostgres(t *testing.T) {
	p := newPipelineEnv(t)
	url := postgresSchema(t)
	identity := os.Getenv("TESTFIRST_GRADER_IDENTITY_FILE")
	opens := testenv.WatchOpens(t, identity)
	env := []string{"TESTFIRST_STORE_SYNC_INTERVAL=1s"}
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write")
	// The app's environment is the grader's without the identity: given
	// it, the app refuses to start (app.TestServeRefusesRoles).
	a := p.serve(t, url, append(env, "TESTFIRST_ROLE=app", "TESTFIRST_GRADER_IDENTITY_FILE=")...)
	g := p.serve(t, url, append(env, "TESTFIRST_ROLE=grader")...)
	logs := func() string { return "app:\n" + a.log() + "\ngrader:\n" + g.log() }

	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/": 404, "/webhook": 404} {
		if code, body := g.get(t, path); code != want {
			t.Errorf("grader GET %s: %d %q; want %d", path, code, body, want)
		}
	}
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1, "sender.login": "alice"})
	if code := g.deliver(t, pipeSecret, "issues", "label-grader", labeled); code != http.StatusNotFound {
		t.Errorf("a delivery to the grader: %d; want 404", code)
	}
	if code := a.deliver(t, pipeSecret, "issues", "label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(a.log(), `"msg":"ticket opened"`) }, logs)

	k, digest := p.push(t, "writer-bot", nil)
	// The base check runs on the grader; the card offers the version only
	// once it is checked.
	p.decide(t, a, k, digest, "alice", "")
	p.gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	p.gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"pull_request.body": "Fixes #1", "pull_request.head.sha": p.fixedSHA, "installation.id": 1})
	if code := a.deliver(t, pipeSecret, "pull_request", "pr-opened", opened); code != http.StatusAccepted {
		t.Fatalf("opened: %d", code)
	}
	run := p.run(t, a, p.fixedSHA, "passing", completed("success"))
	if run.Title != "10/10 hidden tests passed · trust: isolated" {
		t.Errorf("check run %+v", run)
	}
	// The grader logs "graded" after it posts the check run the test has
	// just read, so the line may not be in its log yet.
	waitFor(t, "the grader's graded line", 30*time.Second, func() bool { return strings.Contains(g.log(), `"msg":"graded"`) }, logs)
	if strings.Contains(a.log(), `"msg":"grading"`) || strings.Contains(a.log(), `"msg":"graded"`) {
		t.Errorf("the grade was not the grader's alone:\n%s", logs())
	}

	time.Sleep(300 * time.Millisecond) // the watch reads the last opens
	if !opens.Opened(g.proc.Pid) {
		t.Fatalf("the grader (pid %d) never opened %s, yet it graded: the watch sees nothing (opens by %v)", g.proc.Pid, identity, opens.Pids())
	}
	if opens.Opened(a.proc.Pid) {
		t.Errorf("the app (pid %d) opened the grader's identity %s (opens by %v)", a.proc.Pid, identity, opens.Pids())
	}
	for _, pid := range opens.Pids() {
		if pid != g.proc.Pid && pid != a.proc.Pid {
			t.Logf("opened by pid %d too", pid)
		}
	}
}

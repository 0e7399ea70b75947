package test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestServeQueueAndTwoTickets: through the real binary (SQLite: one
// sandbox), three pull requests opened at once wait with GitHub's queued
// status and their place in the queue, then run in progress with their
// phase; a pull request that fixes two tickets gets one check run per
// ticket, each named and described for its ticket, the one without
// approved tests queued and waiting.
func TestServeQueueAndTwoTickets(t *testing.T) {
	p := newPipelineEnv(t)
	gh := p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	gh.AddIssue(pipeOwner, pipeRepo, 3, "alice", "Count lines")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	for _, n := range []int{1, 3} {
		deliver("issues", fmt.Sprint("label-", n), patchFixture(t, "issues/labeled.payload.json", map[string]any{
			"label.name": "test-first", "issue.number": n, "installation.id": 1, "sender.login": "alice"}))
		p.comment(t, s, n, fmt.Sprintf("testfirst opened a ticket for #%d", n))
	}
	k, d := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "**v1** are ready for review")
	p.decide(t, s, k, d, "alice", "")
	p.comment(t, s, 1, "**v1** were approved")

	heads := map[int]string{2: p.fixedSHA}
	bodies := map[int]string{2: "Fixes #1, fixes #3", 4: "Fixes #1", 5: "Fixes #1"}
	for _, n := range []int{4, 5} {
		heads[n] = p.commit(fmt.Sprint("feature-", n), p.fixed, map[string]string{"NOTES.md": fmt.Sprint(n, "\n")})
	}
	for _, n := range []int{2, 4, 5} {
		gh.AddPull(pipeOwner, pipeRepo, n, heads[n], pipeBranch, bodies[n], pipeOwner+"/"+pipeRepo)
		deliver("pull_request", fmt.Sprint("pr-", n), patchFixture(t, "pull_request/opened.payload.json", map[string]any{
			"number": n, "pull_request.number": n, "pull_request.body": bodies[n], "pull_request.head.sha": heads[n],
			"pull_request.state": "open", "installation.id": 1}))
	}
	for _, n := range []int{2, 4, 5} {
		p.run(t, s, heads[n], "passing", completed("success"))
	}

	// The pull request that fixes two tickets: one run per ticket.
	byName := map[string]fakegithub.CheckRun{}
	for _, r := range p.runsOn(heads[2]) {
		byName[r.Name] = r
	}
	if r, ok := byName["testfirst · #1"]; !ok || r.Conclusion != "success" || !strings.Contains(r.Summary, "v1 of [#1]") {
		t.Errorf("#2's run for #1: %+v", r)
	}
	if r, ok := byName["testfirst · #3"]; !ok || r.Status != "queued" || r.Title != "waiting for approved hidden tests (no tests pushed yet)" ||
		!strings.Contains(r.Summary, "closes #3") {
		t.Errorf("#2's run for #3: %+v", r)
	}
	if len(byName) != 2 {
		t.Errorf("#2 has runs %v; want one per ticket", byName)
	}

	// Along the way: queued with a place, then in progress with each
	// phase: the trees, the dependency environment, the hidden tests.
	var sent bytes.Buffer
	for _, r := range gh.Requests() {
		if strings.Contains(r.Path, "/check-runs") {
			sent.Write(r.Body)
		}
	}
	for _, want := range []string{`"status":"queued"`, ` ahead · hidden tests v1`, `"status":"in_progress"`,
		`grading against hidden tests v1: fetching trees`, `grading against hidden tests v1: building the environment`, `grading against hidden tests v1: grading`} {
		if !strings.Contains(sent.String(), want) {
			t.Errorf("no check run update said %q", want)
		}
	}
}

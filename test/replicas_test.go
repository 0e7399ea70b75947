package test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
)

// TestServeReplicasOnPostgres runs two serve processes on one PostgreSQL
// database: a delivery that reaches both is processed once, and when the
// replica running a grade is killed with SIGKILL while a sandbox of the
// grade runs, the other one removes that sandbox, finishes the grade and
// completes its check run.
func TestServeReplicasOnPostgres(t *testing.T) {
	p := newPipelineEnv(t)
	url := postgresSchema(t)
	env := []string{"TESTFIRST_STORE_SYNC_INTERVAL=1s", "TESTFIRST_JOB_RESCUE_AFTER=" + rescueAfter.String()}
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write") // the requester can push to the repository
	a := p.serve(t, url, env...)
	b := p.serve(t, url, env...)
	logs := func() string { return "replica a:\n" + a.log() + "\nreplica b:\n" + b.log() }

	// The same delivery reaches both replicas at once.
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1, "sender.login": "alice"})
	var wg sync.WaitGroup
	for _, s := range []*service{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code := s.deliver(t, pipeSecret, "issues", "label-both", labeled); code != http.StatusAccepted {
				t.Errorf("labeled: %d", code)
			}
		}()
	}
	wg.Wait()
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(logs(), `"msg":"ticket opened"`) }, logs)
	time.Sleep(2 * time.Second) // room for a second, wrong, processing
	all := logs()
	if n := strings.Count(all, `"msg":"ticket opened"`); n != 1 {
		t.Errorf("ticket opened %d times; want once", n)
	}
	if n := strings.Count(all, `"msg":"webhook accepted","delivery":"label-both"`); n != 1 {
		t.Errorf("delivery accepted %d times; want once (the other replica answers duplicate)", n)
	}

	k, digest := p.push(t, "writer-bot", nil)
	p.decide(t, a, k, digest, "alice", "")
	p.gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	// The pull request's first attempt sleeps in its sandbox past the
	// rescue (sleepyFirstAttempt).
	head := p.commit("sleepy", p.fixed, sleepyFirstAttempt(t, p.fixed, sleepyWindow))
	p.gh.AddPull(pipeOwner, pipeRepo, 2, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"pull_request.body": "Fixes #1", "pull_request.head.sha": head, "installation.id": 1})
	if code := a.deliver(t, pipeSecret, "pull_request", "pr-opened", opened); code != http.StatusAccepted {
		t.Fatalf("opened: %d", code)
	}

	// Kill whichever replica started the grade, while its sandbox runs.
	var victim, survivor *service
	waitFor(t, "a replica grading", 120*time.Second, func() bool {
		switch {
		case strings.Contains(a.log(), `"msg":"grading"`):
			victim, survivor = a, b
		case strings.Contains(b.log(), `"msg":"grading"`):
			victim, survivor = b, a
		}
		return victim != nil
	}, logs)
	sleeper := runningFor(t, sandbox.LabelGrade+"="+gradeInLog(t, victim.log(), head), 3*time.Second, logs)
	mark, start := p.gh.RequestCount(), time.Now()
	victim.kill(t)
	run := p.run(t, survivor, head, "passing", completed("success"))
	// The fault suite's row for this case (docs/benchmarks.md).
	t.Logf("fault: replica killed mid-grade, PostgreSQL, 2 replicas (job_rescue_after 150 s): recovered in %.1f s, %d GitHub calls",
		time.Since(start).Seconds(), len(p.gh.RequestsSince(mark)))
	noneInProgress(t, p.gh)
	noHiddenReachedGitHub(t, p.gh)
	if run.Title != "10/10 hidden tests passed · trust: isolated" {
		t.Errorf("check run %+v", run)
	}
	if !strings.Contains(survivor.log(), `"msg":"graded"`) {
		t.Errorf("the surviving replica did not finish the grade:\n%s", logs())
	}
	if runs := p.runsOn(head); len(runs) != 1 {
		t.Errorf("check runs on the head: %+v; want one", runs)
	}
	if sandboxContainers(t)[sleeper] {
		t.Errorf("the dead replica's sandbox %s is still on the engine after the other replica completed the grade", sleeper[:12])
	}
	if n := survivor.metric(t, `testfirst_sandbox_leftovers_removed_total{reason="rescued_job"}`); n < 1 {
		t.Errorf("testfirst_sandbox_leftovers_removed_total{reason=\"rescued_job\"} = %v on the surviving replica: it did not remove the dead one's sandbox", n)
	}
	gradeSandboxesGone(t, run, 15*time.Second)
}

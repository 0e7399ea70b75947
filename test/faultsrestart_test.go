package test

import (
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
)

// TestFaultsDockerRestart: the Docker engine restarts while a grade runs
// in it (its containers die with it). The grade fails on the engine, River
// retries it once the engine is back, and the check run completes; the
// containers the engine's stop left created but never started are swept
// a minute later by the running service.
// Disruptive: every test on the machine loses its containers.
func TestFaultsDockerRestart(t *testing.T) {
	disruptive(t)
	r := newFaultRig(t, "", "TESTFIRST_JOB_RESCUE_AFTER=60s", "TESTFIRST_SANDBOX_SWEEP_INTERVAL=5s")
	gh := r.p.gh
	mark := gh.RequestCount()
	before := sandboxContainers(t)
	// 2 s more per sandbox run of the pull request, so that the poll
	// below sees a sandbox of the grade before the grade is over.
	head := r.openPRWith(t, "docker-restart", slowImport(t, r.p.fixed, 2*time.Second))
	// The engine goes down as soon as one of this grade's sandboxes
	// exists (a sandbox container the engine did not have before).
	var start time.Time
	waitFor(t, "a sandbox of the grade", 120*time.Second, func() bool {
		for id := range sandboxContainers(t) {
			if !before[id] {
				start = time.Now()
				return true
			}
		}
		return false
	}, r.s.log)
	restartDockerd(t)
	run := r.settled(t, "Docker engine restarted mid-grade", head, "success", start, mark)
	if !strings.Contains(r.s.log(), "grade failed; River retries") {
		t.Errorf("the grade was not retried: the engine did not restart under its sandboxes")
	}
	// What the engine's stop left (containers created but never started,
	// which neither the grade nor the engine's auto-remove will remove)
	// goes at the sweep a minute on, without a restart of serve.
	gradeSandboxesGone(t, run, 90*time.Second)
}

// sandboxContainers lists the ids of the engine's sandbox containers.
func sandboxContainers(t *testing.T) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, id := range labelledIDs(t, sandbox.LabelSandbox, "") {
		ids[id] = true
	}
	return ids
}

// restartDockerd stops the engine (SIGINT, a clean shutdown as a service
// manager's stop is) and
// starts it again detached, as scripts/ensure-deps.sh does.
func restartDockerd(t *testing.T) {
	t.Helper()
	out, err := exec.Command("pidof", "dockerd").Output()
	if err != nil {
		t.Fatalf("pidof dockerd: %v", err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(out))[0])
	if err != nil {
		t.Fatal(err)
	}
	proc, _ := os.FindProcess(pid)
	if err := proc.Signal(os.Interrupt); err != nil {
		t.Fatalf("stop dockerd: %v", err)
	}
	for deadline := time.Now().Add(60 * time.Second); exec.Command("kill", "-0", strconv.Itoa(pid)).Run() == nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("dockerd did not stop within 60 s")
		}
	}
	start := exec.Command("setsid", "sh", "-c", "nohup dockerd >>/var/log/dockerd-restarted.log 2>&1 &")
	start.Dir = "/"
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start dockerd: %v %s", err, out)
	}
	for deadline := time.Now().Add(60 * time.Second); exec.Command("docker", "version").Run() != nil; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("dockerd did not come back within 60 s")
		}
	}
}

// TestFaultsPostgresRestart: the PostgreSQL server goes down while a grade
// runs on it, stays down until the grade's sandboxes have ended (so the
// grade's own writes meet the outage), and comes back. Meanwhile the
// intake answers 503 (GitHub keeps the delivery and redelivers it); once
// the server is back, the redelivery is recorded and processed once, the
// grade completes, and no job is lost. Disruptive: every test on the
// machine loses its database.
func TestFaultsPostgresRestart(t *testing.T) {
	disruptive(t)
	r := newFaultRig(t, postgresSchema(t), "TESTFIRST_JOB_RESCUE_AFTER=60s")
	gh := r.p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 9, "octocat", "issue")
	mark := gh.RequestCount()
	cue := make(chan time.Time, 1)
	gh.OnNextWhere("", checkRunsPath, `"status":"in_progress"`, func() { cue <- time.Now() })
	// Each sandbox run of the pull request's package takes 2 s more, so
	// the grade outlasts the server's stop.
	head := r.openPRWith(t, "pg-restart", slowImport(t, r.p.fixed, 2*time.Second))
	var start time.Time
	select {
	case start = <-cue:
	case <-time.After(120 * time.Second):
		t.Fatalf("the grade never set its run in progress:\n%s", r.s.log())
	}
	r.grading(t, head)
	grade := sandbox.LabelGrade + "=" + gradeInLog(t, r.s.log(), head)
	pgctl(t, "stop")
	if runs := r.p.runsOn(head); len(runs) == 1 && runs[0].Status == "completed" {
		t.Fatal("the grade completed before the database went down: the case tests nothing")
	}
	cmd := commentPayload(t, 9, "/testfirst frobnicate")
	if code := r.s.deliver(t, pipeSecret, "issue_comment", "pg-down", cmd); code != http.StatusServiceUnavailable {
		t.Errorf("a delivery while the database is down answered %d; want 503", code)
	}
	// Down until the grade's sandboxes have ended, 5 s at the least.
	down := time.Now()
	waitFor(t, "the grade's sandboxes to end", 120*time.Second, func() bool {
		return len(labelledIDs(t, grade, "running")) == 0 && time.Since(down) >= 5*time.Second
	}, r.s.log)
	pgctl(t, "start")
	t.Logf("the database was down %.1f s", time.Since(down).Seconds())
	var code int
	waitFor(t, "the intake to take deliveries again", 60*time.Second, func() bool {
		code = r.s.deliver(t, pipeSecret, "issue_comment", "pg-down", cmd)
		return code == http.StatusAccepted
	}, r.s.log)
	r.settled(t, "PostgreSQL restarted mid-grade, down until the grade's sandboxes ended", head, "success", start, mark)
	// The outage reached the grade itself: its write failed, and River
	// ran it again once the server was back.
	if !logLineHas(r.s.log(), `"msg":"grade failed; River retries"`, `"attempt":1`) {
		t.Errorf("no attempt of the grade failed on the database: the outage did not reach it\n%s", r.s.log())
	}
	r.p.comment(t, r.s, 9, "testfirst knows two commands")
	time.Sleep(2 * time.Second)
	replies := 0
	for _, c := range gh.Comments(pipeOwner, pipeRepo, 9) {
		if strings.Contains(c.Body, "testfirst knows two commands") {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d replies to the command delivered during the outage; want one", replies)
	}
}

// pgctl runs pg_ctlcluster on the test cluster: the one on port 5432 in
// pg_lsclusters, as scripts/ensure-deps.sh starts it.
func pgctl(t *testing.T, action string) {
	t.Helper()
	out, err := exec.Command("pg_lsclusters", "-h").Output()
	if err != nil {
		t.Fatalf("pg_lsclusters: %v", err)
	}
	var ver, name string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[2] == "5432" {
			ver, name = f[0], f[1]
			break
		}
	}
	if ver == "" {
		t.Fatalf("no PostgreSQL cluster on port 5432 in pg_lsclusters:\n%s", out)
	}
	if out, err := exec.Command("pg_ctlcluster", ver, name, action).CombinedOutput(); err != nil {
		t.Fatalf("pg_ctlcluster %s %s %s: %v %s", ver, name, action, err, out)
	}
	t.Logf("pg_ctlcluster %s %s %s", ver, name, action)
}

package test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
)

// TestSoak runs `make soak`: two replicas on PostgreSQL for
// TESTFIRST_SOAK_DURATION (make soak: 1h) at 1 delivery a second (plain
// comments, an unknown command every tenth), a pull request to grade every
// minute, and replica b killed (SIGKILL) and started again every ten
// minutes (every half of the run when it is shorter than 20 minutes), so
// that replica a lives the whole run, long enough to show a leak. Every
// 30 s it logs each replica's RSS and goroutines and the sandbox
// containers on the engine. At the end, after a drain, it checks that
// every check run completed, every command was answered once, no sandbox
// container of a grade is left, the replicas left no temporary file once
// stopped, and replica a's memory and goroutines stayed flat (soakFlat).
// Not part of make test.
func TestSoak(t *testing.T) {
	raw := os.Getenv("TESTFIRST_SOAK_DURATION")
	if raw == "" {
		t.Skip("make soak sets TESTFIRST_SOAK_DURATION")
	}
	duration, err := time.ParseDuration(raw)
	if err != nil || duration < 5*time.Minute {
		t.Fatalf("TESTFIRST_SOAK_DURATION=%q: want a duration of at least 5m (the shortest that samples memory early and late), e.g. 1h or 5m", raw)
	}
	killEvery := 10 * time.Minute
	if duration < 2*killEvery {
		killEvery = duration / 2
	}
	url := postgresSchema(t)
	tmp := t.TempDir()
	env := []string{"TESTFIRST_STORE_SYNC_INTERVAL=1s", "TESTFIRST_JOB_RESCUE_AFTER=60s", "TMPDIR=" + tmp}
	p := newPipelineEnv(t)
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write")
	reps := []*service{p.serve(t, url, env...), p.serve(t, url, env...)}
	r := &faultRig{p: p, s: reps[0], pr: 1, logs: func() string { return reps[0].log() + reps[1].log() }}
	r.approve(t)
	// Issues and pull requests share numbers: the commands' issue stands
	// far past the pull requests a soak opens (one a minute).
	const commandIssue = 100_000
	p.gh.AddIssue(pipeOwner, pipeRepo, commandIssue, "octocat", "issue")

	start := time.Now()
	deliveries, commands, kills := 0, 0, 0
	var heads []string
	var samples []soakFigures
	nextGrade, nextKill, nextSample := start, start.Add(killEvery), start
	t.Logf("soak: %s, a grade a minute, a replica killed every %s", duration, killEvery)
	t.Logf("soak: %8s %10s %10s %8s %8s %10s %9s", "t", "rss a MiB", "rss b MiB", "gor a", "gor b", "containers", "completed")
	for tick := time.NewTicker(time.Second); time.Since(start) < duration; <-tick.C {
		now := time.Now()
		target := reps[deliveries%2]
		body := "Looks good to me."
		if deliveries%10 == 0 {
			body = "/testfirst frobnicate"
			commands++
		}
		code := target.deliver(t, pipeSecret, "issue_comment", fmt.Sprintf("soak-%d", deliveries), commentPayload(t, commandIssue, body))
		if code != http.StatusAccepted {
			// A replica being restarted: GitHub would redeliver; so do we.
			code = reps[(deliveries+1)%2].deliver(t, pipeSecret, "issue_comment", fmt.Sprintf("soak-%d", deliveries), commentPayload(t, commandIssue, body))
		}
		if code != http.StatusAccepted {
			t.Errorf("delivery soak-%d answered %d by both replicas", deliveries, code)
		}
		deliveries++
		if !now.Before(nextGrade) {
			r.s = reps[len(heads)%2]
			heads = append(heads, r.openPR(t, fmt.Sprintf("soak-%d", len(heads))))
			nextGrade = nextGrade.Add(time.Minute)
		}
		if !now.Before(nextKill) {
			reps[1].kill(t)
			reps[1] = p.serve(t, url, env...)
			kills++
			nextKill = nextKill.Add(killEvery)
		}
		if !now.Before(nextSample) {
			samples = append(samples, soakSample(t, now.Sub(start), reps, p))
			nextSample = nextSample.Add(30 * time.Second)
		}
	}

	// Drain: every grade completes, every command is answered once.
	waitFor(t, "every check run completed", 10*time.Minute, func() bool {
		done := 0
		for _, h := range heads {
			for _, c := range p.runsOn(h) {
				if c.Status == "completed" {
					done++
				}
			}
		}
		return done >= len(heads)
	}, func() string { return reps[0].log() + reps[1].log() })
	time.Sleep(10 * time.Second) // the last deliveries' jobs
	end := soakSample(t, time.Since(start), reps, p)
	completed, failed := 0, 0
	for _, h := range heads {
		runs := p.runsOn(h)
		if len(runs) != 1 {
			t.Errorf("%d check runs on %s; want one", len(runs), h[:7])
		}
		for _, c := range runs {
			if c.Status == "completed" {
				completed++
				if c.Conclusion != "success" {
					failed++
					t.Logf("soak: %s completed %s: %q", h[:7], c.Conclusion, c.Title)
				}
			}
		}
	}
	noneInProgress(t, p.gh)
	noHiddenReachedGitHub(t, p.gh)
	for _, h := range heads {
		for _, c := range p.runsOn(h) {
			gradeSandboxesGone(t, c, 15*time.Second)
		}
	}
	soakFlat(t, duration, samples, end)
	if end.containers != 0 {
		// The soak runs alone (make soak): any sandbox is one of its own.
		t.Errorf("%d sandbox containers on the engine after the drain; want none", end.containers)
	}
	replies := 0
	for _, c := range p.gh.Comments(pipeOwner, pipeRepo, commandIssue) {
		if strings.Contains(c.Body, "testfirst knows two commands") {
			replies++
		}
	}
	if replies != commands {
		t.Errorf("%d replies to %d commands; want one each", replies, commands)
	}
	// The replicas stop as an operator stops them (SIGINT); what they
	// leave in TMPDIR then is left for good. A killed replica's files are
	// among them.
	for _, s := range reps {
		s.proc.Signal(os.Interrupt)
	}
	for _, s := range reps {
		waitFor(t, "a replica to stop", 60*time.Second, func() bool { return exited(s.proc.Pid) }, s.log)
	}
	var left []string
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) > 0 {
		t.Errorf("the replicas left %d temporary files in their TMPDIR: %v", len(left), left)
	}
	t.Logf("soak: ran %s: %d deliveries (%d commands, %d replies), %d grades, %d check runs completed (%d not success), %d replicas killed; %d sandbox containers on the engine at the end (every user's), %d temporary files left in the replicas' TMPDIR after they stopped %v",
		time.Since(start).Round(time.Second), deliveries, commands, replies, len(heads), completed, failed, kills, end.containers, len(left), left)
}

// soakFigures is one sample of the soak.
type soakFigures struct {
	at         time.Duration
	rss        [2]float64 // MiB
	goroutines [2]float64
	containers int
}

// soakSample logs and returns the replicas' RSS and goroutines, and the
// sandbox containers on the engine.
func soakSample(t *testing.T, at time.Duration, reps []*service, p *pipelineEnv) soakFigures {
	t.Helper()
	f := soakFigures{at: at}
	for i, s := range reps {
		f.rss[i] = rssMiB(s.proc.Pid)
		f.goroutines[i] = s.metric(t, "go_goroutines")
	}
	f.containers = len(labelledIDs(t, sandbox.LabelSandbox, ""))
	done := 0
	for _, c := range p.gh.CheckRuns(pipeOwner, pipeRepo) {
		if c.Status == "completed" {
			done++
		}
	}
	t.Logf("soak: %8s %10.1f %10.1f %8.0f %8.0f %10d %9d", at.Round(time.Second), f.rss[0], f.rss[1], f.goroutines[0], f.goroutines[1], f.containers, done)
	return f
}

// exited reports whether a process ended (gone, or a zombie not yet
// waited for).
func exited(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err != nil || strings.Contains(string(data), "State:\tZ")
}

// rssMiB reads a process's resident set size from /proc.
func rssMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// soakFlat fails the soak when replica a, which lives the whole run, grew:
// its mean RSS over the run's last sixth more than a quarter above its
// mean between a twelfth and a quarter of the run (after its first grades
// warmed it), or its goroutines once drained and idle (end) more than ten
// above the most it had in that early window. A leak of 100 KiB a delivery
// would add 90 MiB over an hour; one goroutine a grade, 30.
func soakFlat(t *testing.T, duration time.Duration, samples []soakFigures, end soakFigures) {
	t.Helper()
	var early, late []soakFigures
	for _, f := range samples {
		switch {
		case f.at >= duration/12 && f.at < duration/4:
			early = append(early, f)
		case f.at >= duration-duration/6:
			late = append(late, f)
		}
	}
	if len(early) == 0 || len(late) == 0 {
		t.Errorf("soak: %d samples early and %d late: too few to judge replica a's memory", len(early), len(late))
		return
	}
	mean := func(fs []soakFigures) float64 {
		var sum float64
		for _, f := range fs {
			sum += f.rss[0]
		}
		return sum / float64(len(fs))
	}
	var most float64
	for _, f := range early {
		most = max(most, f.goroutines[0])
	}
	before, after := mean(early), mean(late)
	t.Logf("soak: replica a: RSS %.1f MiB early (%d samples), %.1f MiB late (%d); goroutines at most %.0f early, %.0f drained at the end",
		before, len(early), after, len(late), most, end.goroutines[0])
	if after > 1.25*before {
		t.Errorf("replica a's RSS grew from %.1f MiB to %.1f MiB over the run: a leak", before, after)
	}
	if end.goroutines[0] > most+10 {
		t.Errorf("replica a has %.0f goroutines drained at the end, %.0f at most early in the run: a leak", end.goroutines[0], most)
	}
}

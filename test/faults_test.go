package test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// The fault-injection suite: one case per fault of the table in
// docs/benchmarks.md ("Faults survived"). Each case asserts what the user
// sees: the grade completes (or completes as failed, saying why), no check
// run is left in progress, nothing is processed twice, nothing hidden
// reaches GitHub, the service recovers by itself once the fault clears,
// and the GitHub calls made meanwhile are few (no storm). Each logs one
// "fault:" line with its time to recover and its GitHub calls; the table
// in docs/benchmarks.md is made from those lines (go test -v).
//
// Cases that restart a daemon the whole machine shares (the Docker engine,
// the PostgreSQL server) run only with TESTFIRST_FAULTS_DISRUPTIVE=1.

const (
	checkRunsPath = "/repos/" + pipeOwner + "/" + pipeRepo + "/check-runs"
	tarballPath   = "/repos/" + pipeOwner + "/" + pipeRepo + "/tarball"
	codeloadPath  = "/_codeload"
)

// faultRig is one grading service with an approved ticket (#1): each
// case opens a pull request of its own that fixes it.
type faultRig struct {
	p  *pipelineEnv
	s  *service
	pr int
	// logs is every replica's log when several share a database
	// (any of them may process a delivery); s's log when nil.
	logs func() string
}

// allLogs is every replica's log.
func (r *faultRig) allLogs() string {
	if r.logs != nil {
		return r.logs()
	}
	return r.s.log()
}

// newFaultRig starts serve (on databaseURL, SQLite when empty), opens
// issue #1's ticket and approves the sample's hidden tests for it.
func newFaultRig(t *testing.T, databaseURL string, env ...string) *faultRig {
	t.Helper()
	p := newPipelineEnv(t)
	p.noReference = true // see TestFaultsGrading
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write")
	s := p.serve(t, databaseURL, env...)
	r := &faultRig{p: p, s: s, pr: 1}
	r.approve(t)
	return r
}

// approve opens the ticket on s and approves the sample's tests.
func (r *faultRig) approve(t *testing.T) {
	t.Helper()
	r.p.gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1, "sender.login": "alice"})
	if code := r.s.deliver(t, pipeSecret, "issues", "fault-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(r.allLogs(), `"msg":"ticket opened"`) }, r.allLogs)
	k, digest := r.p.push(t, "writer-bot", nil)
	r.p.decide(t, r.s, k, digest, "alice", "")
}

// openPR pushes the fixed tree with a marker file to a branch of its own
// and delivers a pull request that fixes #1; it returns the head SHA.
func (r *faultRig) openPR(t *testing.T, tag string) string {
	t.Helper()
	return r.openPRWith(t, tag, nil)
}

// openPRWith is openPR with files of extra replacing the fixed tree's.
func (r *faultRig) openPRWith(t *testing.T, tag string, extra map[string]string) string {
	t.Helper()
	r.pr++
	files := map[string]string{"FAULT.txt": tag + "\n"}
	for k, v := range extra {
		files[k] = v
	}
	sha := r.p.commit("fault-"+tag, r.p.fixed, files)
	r.p.gh.AddPull(pipeOwner, pipeRepo, r.pr, sha, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"number": r.pr, "pull_request.number": r.pr,
		"pull_request.body": "Fixes #1", "pull_request.head.sha": sha, "installation.id": 1})
	if code := r.s.deliver(t, pipeSecret, "pull_request", "fault-pr-"+tag, opened); code != http.StatusAccepted {
		t.Fatalf("pull request %s: %d", tag, code)
	}
	return sha
}

// grading waits until the service logs that it grades head.
func (r *faultRig) grading(t *testing.T, head string) {
	t.Helper()
	waitFor(t, "the grade of "+head[:7]+" to start", 120*time.Second, func() bool {
		return logLineHas(r.s.log(), `"msg":"grading"`, head)
	}, r.s.log)
}

// logLineHas reports whether one line of log holds every part.
func logLineHas(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// settled waits for head's check run to complete with conclusion and
// checks what the user sees: one check run on head, none in progress on
// the repository, nothing hidden in what reached GitHub. It logs the
// case's "fault:" line: the time since start and the GitHub calls since
// mark.
func (r *faultRig) settled(t *testing.T, name, head, conclusion string, start time.Time, mark int) fakegithub.CheckRun {
	t.Helper()
	run := r.p.run(t, r.s, head, "completed "+conclusion, func(c fakegithub.CheckRun) bool { return c.Status == "completed" })
	took := time.Since(start)
	if run.Conclusion != conclusion {
		t.Errorf("check run on %s: %s %q (%s); want %s", head[:7], run.Conclusion, run.Title, run.Summary, conclusion)
	}
	if runs := r.p.runsOn(head); len(runs) != 1 {
		t.Errorf("check runs on %s: %+v; want one", head[:7], runs)
	}
	noneInProgress(t, r.p.gh)
	noHiddenReachedGitHub(t, r.p.gh)
	reqs := r.p.gh.RequestsSince(mark)
	t.Logf("fault: %s: recovered in %.1f s, %d GitHub calls (%d to check runs, %d token mints)", name, took.Seconds(), len(reqs),
		fakegithub.CallsTo(reqs, "", checkRunsPath), fakegithub.CallsTo(reqs, "POST", "/app/installations/"))
	return run
}

// gradeSandboxesGone fails the test when a sandbox container of the
// grade behind run (its details link, /grades/{id}) is still on the
// engine within after the run completed: sandboxes remove themselves, a
// killed replica's are removed by the rescue, and the sweep takes those
// an engine failure left.
func gradeSandboxesGone(t *testing.T, run fakegithub.CheckRun, within time.Duration) {
	t.Helper()
	id := path.Base(run.DetailsURL)
	if _, err := strconv.ParseInt(id, 10, 64); err != nil || !strings.Contains(run.DetailsURL, "/grades/") {
		t.Fatalf("check run details %q: want a grade's page, /grades/{id}", run.DetailsURL)
	}
	var left []string
	deadline := time.Now().Add(within)
	for {
		if left = labelledIDs(t, sandbox.LabelGrade+"="+id, ""); len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("grade %s's sandbox containers are still on the engine: %s", id, left)
}

// noneInProgress fails the test for any grade's check run left in
// progress (a regression run, which follows its grade, may be under way
// still).
func noneInProgress(t *testing.T, gh *fakegithub.Server) {
	t.Helper()
	for _, r := range gh.CheckRuns(pipeOwner, pipeRepo) {
		if r.Status != "completed" && pipeline.IsCheckRunName(r.Name) {
			t.Errorf("check run %d on %s left %s: %q", r.ID, r.HeadSHA[:7], r.Status, r.Title)
		}
	}
}

// noHiddenReachedGitHub fails the test when a request body the service
// sent to GitHub carries the canary or a test body.
func noHiddenReachedGitHub(t *testing.T, gh *fakegithub.Server) {
	t.Helper()
	var bodies bytes.Buffer
	for _, r := range gh.Requests() {
		bodies.Write(r.Body)
	}
	for _, secret := range []string{"testfirst-canary", "tfc-", "def test_", "assert "} {
		if bytes.Contains(bodies.Bytes(), []byte(secret)) {
			t.Errorf("a request body sent to GitHub contains %q", secret)
		}
	}
}

// waitedAfter checks that the first request to route after the one
// answered status came at least wait later: the service waited as told.
func waitedAfter(t *testing.T, reqs []fakegithub.Request, method, route string, status int, wait time.Duration) {
	t.Helper()
	var refused time.Time
	for _, r := range reqs {
		if r.Method != method || !strings.HasPrefix(r.Path, route) {
			continue
		}
		if refused.IsZero() {
			if r.Status == status {
				refused = r.At
			}
			continue
		}
		if gap := r.At.Sub(refused); gap < wait {
			t.Errorf("%s %s again %v after a %d; GitHub asked to wait %v", method, route, gap, status, wait)
		}
		return
	}
	t.Errorf("no %d on %s %s, then another try: %v", status, method, route, fakegithub.CallsByRoute(reqs))
}

// metric returns the value of the first sample of name (with labels, as
// in the exposition format) on the service's /metrics, 0 when absent.
func (s *service) metric(t *testing.T, sample string) float64 {
	t.Helper()
	_, body := s.get(t, "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v
		}
	}
	return 0
}

// TestFaultsGrading: the faults of a grading service's neighbours, one
// after another on one service (SQLite, the hidden tests in a GCS bucket
// of the emulator), each on a pull request of its own: GitHub's, the
// store's, and at the end the service itself killed.
func TestFaultsGrading(t *testing.T) {
	relay := startGCSEmulator(t)
	p := newPipelineEnv(t)
	p.storeURL = "gs://" + gcsBucket + "/faults"
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write")
	url := "sqlite://" + filepath.Join(p.dir, "testfirst.db")
	env := []string{"TESTFIRST_JOB_RESCUE_AFTER=" + rescueAfter.String()}
	r := &faultRig{p: p, s: p.serve(t, url, env...), pr: 1}
	// The faults are a grade's, not a base check's: v1 has no reference
	// patch, so its base check is one run of the base.
	p.noReference = true
	r.approve(t)
	gh := r.p.gh

	t.Run("no fault", func(t *testing.T) {
		// The baseline: what one grade takes and calls without a fault.
		mark, start := gh.RequestCount(), time.Now()
		head := r.openPR(t, "baseline")
		r.settled(t, "none (baseline: one grade from the delivery)", head, "success", start, mark)
	})

	t.Run("5xx on check-run create and update", func(t *testing.T) {
		// More 502s than one call's attempts: the call fails, the job is
		// retried by River, and the run completes.
		mark, start := gh.RequestCount(), time.Now()
		gh.FailNextN(6, "", checkRunsPath, http.StatusBadGateway, nil)
		head := r.openPR(t, "5xx")
		r.settled(t, "GitHub 5xx on check-run create/update", head, "success", start, mark)
		if n := gh.PendingFaults(); n != 0 {
			t.Errorf("%d injected 502s never reached GitHub", n)
		}
		if n := fakegithub.CallsTo(gh.RequestsSince(mark), "", checkRunsPath); n > 25 {
			t.Errorf("%d calls to check runs for one grade with 6 faults: a storm", n)
		}
	})

	t.Run("5xx on the check run's completion", func(t *testing.T) {
		// Every attempt of the completing call fails: the grade is
		// recorded, and the retried job must still complete the run.
		head := r.openPR(t, "5xx-completion")
		r.grading(t, head)
		mark, start := gh.RequestCount(), time.Now()
		gh.FailNextWhere(5, "PATCH", checkRunsPath, `"status":"completed"`, http.StatusBadGateway)
		r.settled(t, "GitHub 5xx on the check run's completion", head, "success", start, mark)
		// The job logs the completion after GitHub took it: under load,
		// after the run reads as completed here.
		completed := func() bool { return strings.Contains(r.s.log(), `"msg":"check run completed after a failed update"`) }
		for deadline := time.Now().Add(10 * time.Second); !completed() && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		if !completed() {
			t.Errorf("the retried job did not complete the check run:\n%s", r.s.log())
		}
		if n := gh.PendingFaults(); n != 0 {
			t.Errorf("%d injected 502s never reached GitHub", n)
		}
	})

	for _, status := range []int{http.StatusForbidden, http.StatusTooManyRequests} {
		t.Run(fmt.Sprintf("secondary rate limit %d", status), func(t *testing.T) {
			before := r.s.metric(t, "testfirst_github_secondary_rate_limits_total")
			mark, start := gh.RequestCount(), time.Now()
			after := http.Header{"Retry-After": {"2"}}
			gh.FailNext("POST", checkRunsPath, status, after)
			gh.FailNext("GET", tarballPath, status, after)
			head := r.openPR(t, fmt.Sprintf("rate-%d", status))
			r.settled(t, fmt.Sprintf("GitHub secondary rate limit (%d + Retry-After 2)", status), head, "success", start, mark)
			reqs := gh.RequestsSince(mark)
			waitedAfter(t, reqs, "POST", checkRunsPath, status, 2*time.Second)
			waitedAfter(t, reqs, "GET", tarballPath, status, 2*time.Second)
			if got := r.s.metric(t, "testfirst_github_secondary_rate_limits_total"); got < before+2 {
				t.Errorf("testfirst_github_secondary_rate_limits_total %v, want at least %v", got, before+2)
			}
		})
	}

	t.Run("installation token expired mid-job", func(t *testing.T) {
		head := r.openPR(t, "token")
		r.grading(t, head)
		mark, start := gh.RequestCount(), time.Now()
		gh.ExpireTokens()
		r.settled(t, "installation token expired mid-job", head, "success", start, mark)
		reqs := gh.RequestsSince(mark)
		if n := fakegithub.CallsTo(reqs, "POST", "/app/installations/"); n < 1 || n > 2 {
			t.Errorf("%d tokens minted after the expiry; want one (or two)", n)
		}
		unauthorised := 0
		for _, q := range reqs {
			if q.Status == http.StatusUnauthorized {
				unauthorised++
			}
		}
		if unauthorised > 2 {
			t.Errorf("%d calls refused with the dead token: the service kept using it", unauthorised)
		}
	})

	t.Run("GitHub unreachable during the tree download", func(t *testing.T) {
		// GitHub goes away as the head's tree is asked for, and comes
		// back 6 s later: the download is tried again (in the call, then
		// by River) and the grade completes.
		mark := gh.RequestCount()
		gh.StopOnNext("GET", tarballPath)
		head := r.openPR(t, "unreachable")
		waitFor(t, "GitHub to go away at the tree download", 120*time.Second, func() bool {
			return gh.RequestCount() > mark && fakegithub.CallsTo(gh.RequestsSince(mark), "GET", tarballPath) > 0
		}, r.s.log)
		start := time.Now()
		time.Sleep(6 * time.Second)
		gh.Start()
		r.settled(t, "GitHub unreachable during the tree download (6 s)", head, "success", start, mark)
		if !logLineHas(r.s.log(), `"msg":"grade failed; River retries"`, "download tarball of", "connection refused") {
			t.Errorf("the grade was not retried after GitHub went away:\n%s", r.s.log())
		}
	})

	storeDown(t, r, relay)
	storeGone(t, r, relay)

	t.Run("archive downloads failing for good", func(t *testing.T) {
		// The archive host answers 502 to every download while the API
		// works. River would retry the grade 5 times over about 6
		// minutes; the case moves its job to the last attempt once the
		// first has failed (the row's attempt count, as if the other
		// retries had happened) and checks the run completes as failed,
		// saying why.
		gh.FailNextN(100, "GET", codeloadPath, http.StatusBadGateway, nil)
		defer gh.ClearFaults()
		mark, start := gh.RequestCount(), time.Now()
		head := r.openPR(t, "archive-gone")
		waitFor(t, "the grade's first attempt to fail", 120*time.Second, func() bool {
			return logLineHas(r.s.log(), `"msg":"grade failed; River retries"`, "archive download answered 502")
		}, r.s.log)
		lastAttempt(t, filepath.Join(p.dir, "testfirst.db"))
		run := r.settled(t, "archive downloads failing for good (final attempt)", head, "failure", start, mark)
		if run.Title != "not graded" || !strings.Contains(run.Summary, "could not be completed after 5 attempts") || !strings.Contains(run.Summary, "archive download answered 502") {
			t.Errorf("the failed run does not say what happened: %q\n%s", run.Title, run.Summary)
		}
		if n := fakegithub.CallsTo(gh.RequestsSince(mark), "GET", codeloadPath); n > 2*github.DefaultRetryAttempts*2 {
			t.Errorf("%d archive downloads for two attempts of one grade: a storm", n)
		}
	})

	t.Run("replica killed (-9) mid-grade, SQLite", func(t *testing.T) {
		// The one replica on SQLite is killed while a sandbox of the grade
		// runs, and started again on the same file: River rescues the job
		// after job_rescue_after (150 s), the new attempt
		// first removes the dead replica's sandbox, and the grade runs
		// again. The pull request's package sleeps ten minutes when
		// imported within 120 s of its push, so the first attempt's sandbox
		// runs on past the rescue, and later attempts do not wait.
		head := r.openPRWith(t, "kill-sqlite", sleepyFirstAttempt(t, r.p.fixed, sleepyWindow))
		r.grading(t, head)
		sleeper := runningFor(t, sandbox.LabelGrade+"="+gradeInLog(t, r.s.log(), head), 3*time.Second, r.s.log)
		mark, start := gh.RequestCount(), time.Now()
		r.s.kill(t)
		time.Sleep(2 * time.Second)
		if !slices.Contains(labelledIDs(t, sandbox.LabelMode+"="+wrapper.ModePytest, "running"), sleeper) {
			t.Fatalf("the sandbox %s ended within 2 s of its replica's kill: it was not the run that sleeps", sleeper[:12])
		}
		r.s = p.serve(t, url, env...)
		run := r.settled(t, "replica killed (-9) mid-grade, SQLite (job_rescue_after 150 s)", head, "success", start, mark)
		if !strings.Contains(r.s.log(), `"msg":"graded"`) {
			t.Errorf("the restarted replica did not grade:\n%s", r.s.log())
		}
		if sandboxContainers(t)[sleeper] {
			t.Errorf("the dead replica's sandbox %s is still on the engine after the rescued grade completed", sleeper[:12])
		}
		if n := r.s.metric(t, `testfirst_sandbox_leftovers_removed_total{reason="rescued_job"}`); n < 1 {
			t.Errorf("testfirst_sandbox_leftovers_removed_total{reason=\"rescued_job\"} = %v: the rescue did not remove the dead replica's sandbox", n)
		}
		gradeSandboxesGone(t, run, 15*time.Second)
	})
}

// sleepyFirstAttempt returns the sample's package __init__ from tree,
// made to sleep ten minutes when imported within window from now: a
// grade's first attempt, started at once, keeps its sandboxes running past
// a rescue; the rescued attempt, which starts job_rescue_after past the
// kill, does not wait. The window must be shorter than job_rescue_after
// and long enough for the first attempt's import under make test's load:
// 50 s was not (2026-12-03: the first attempt's run began later, ended on
// its own, and the rescue had nothing to remove).
func sleepyFirstAttempt(t *testing.T, tree *tree.Tree, window time.Duration) map[string]string {
	t.Helper()
	return initRunsFirst(t, tree, fmt.Sprintf("import time as _time\nif _time.time() < %d:\n    _time.sleep(600)\n", time.Now().Add(window).Unix()))
}

// rescueAfter is job_rescue_after in the cases that kill a replica
// mid-grade, and sleepyWindow their first attempt's window: a job's timeout
// is 8/9 of job_rescue_after, and under make test's load (five legs on two
// cores) a base check took longer than the 53 s that 60 s gives; it was
// cancelled on every attempt and the card never became ready (CI,
// 2026-12-03).
const (
	rescueAfter  = 150 * time.Second
	sleepyWindow = 120 * time.Second
)

// slowImport returns the sample's package __init__ from tree, made to
// sleep d whenever it is imported: every sandbox run of the pull request
// takes d more.
func slowImport(t *testing.T, tree *tree.Tree, d time.Duration) map[string]string {
	t.Helper()
	return initRunsFirst(t, tree, fmt.Sprintf("import time as _time\n_time.sleep(%g)\n", d.Seconds()))
}

// initRunsFirst returns the sample's package __init__ from tree with code
// before its own, as a pull request's files.
func initRunsFirst(t *testing.T, tree *tree.Tree, code string) map[string]string {
	t.Helper()
	init, ok := tree.Lookup("wordstats/__init__.py")
	if !ok {
		t.Fatal("the sample has no wordstats/__init__.py")
	}
	return map[string]string{"wordstats/__init__.py": code + string(init.Data)}
}

// gradeInLog returns the id of the grade of head from the service log's
// "grading" line.
func gradeInLog(t *testing.T, log, head string) string {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"grading"`) && strings.Contains(line, head) {
			var entry struct{ Grade int64 }
			if err := json.Unmarshal([]byte(line), &entry); err != nil || entry.Grade == 0 {
				t.Fatalf("no grade id in %s (%v)", line, err)
			}
			return strconv.FormatInt(entry.Grade, 10)
		}
	}
	t.Fatal("the grading line is gone")
	return ""
}

// engineClient is the Docker client of the tests' checks of the engine's
// containers, made once.
var engineClient = sync.OnceValues(func() (*client.Client, error) {
	return client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
})

// labelledIDs lists the ids of the engine's containers labelled label
// (key=value), in status when it is set.
func labelledIDs(t *testing.T, label, status string) []string {
	t.Helper()
	cli, err := engineClient()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range testenv.Labelled(t, cli, label, status) {
		ids = append(ids, c.ID)
	}
	return ids
}

// runningFor waits for a sandbox container labelled label (key=value)
// that runs the hidden tests on the tree under test (not the trusted
// collection before them, which a loaded engine may keep running for
// seconds, nor the base run beside them, which ends by itself) and has
// run for at least d, and returns its id.
func runningFor(t *testing.T, label string, d time.Duration, logs func() string) string {
	t.Helper()
	cli, err := engineClient()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]time.Time{}
	var id string
	waitFor(t, fmt.Sprintf("a sandbox labelled %s running the tests for %s", label, d), 120*time.Second, func() bool {
		for _, s := range testenv.Labelled(t, cli, label, "running") {
			// The base runs beside the tree under test and ends by
			// itself; only the tested tree's run is the sleeper.
			if s.Labels[sandbox.LabelMode] != wrapper.ModePytest || s.Labels[sandbox.LabelTree] != "tested" {
				continue
			}
			c := s.ID
			if _, ok := seen[c]; !ok {
				seen[c] = time.Now()
			}
			if time.Since(seen[c]) >= d {
				id = c
				return true
			}
		}
		return false
	}, logs)
	return id
}

// lastAttempt makes the retryable grade job of a SQLite database run
// now as its last attempt.
func lastAttempt(t *testing.T, path string) {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res sql.Result
	waitFor(t, "the grade job to wait for its retry", 60*time.Second, func() bool {
		res, err = c.Exec("UPDATE river_job SET attempt = max_attempts - 1, scheduled_at = created_at WHERE kind = ? AND state = 'retryable'", jobs.GradeArgs{}.Kind())
		if err != nil {
			return false
		}
		n, _ := res.RowsAffected()
		return n == 1
	}, func() string { return fmt.Sprint(err) })
}

// disruptive skips a case that restarts a daemon others share.
func disruptive(t *testing.T) {
	t.Helper()
	if os.Getenv("TESTFIRST_FAULTS_DISRUPTIVE") == "" {
		t.Skip("restarts a daemon the machine shares: set TESTFIRST_FAULTS_DISRUPTIVE=1")
	}
}

package test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// commentPayload is an issue_comment.created delivery on issue with body.
func commentPayload(t *testing.T, issue int, body string) []byte {
	t.Helper()
	return patchFixture(t, "issue_comment/created.payload.json", map[string]any{"issue.number": issue, "comment.body": body,
		"comment.user.type": "User", "installation.id": 1})
}

// countRows runs a count query on a SQLite file.
func countRows(t *testing.T, path, query string, args ...any) int {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestFaultsWebhookBurst: 5,000 deliveries are recorded while no worker
// runs (through the intake serve uses, into serve's SQLite file), then
// serve starts: every delivery is processed exactly once. 50 of them are
// unknown commands, each on an issue of its own, whose one reply each is
// what the user sees; the rest are plain comments.
func TestFaultsWebhookBurst(t *testing.T) {
	const total, commands = 5000, 50
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, map[string]string{"README.md": "hello\n"})
	for i := range commands {
		gh.AddIssue(pipeOwner, pipeRepo, 100+i, "octocat", "issue")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "testfirst.db")
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	intake := jobs.NewIntake(d)
	// Every delivery its own body, as GitHub's are: the intake takes the
	// same body under another id for a duplicate.
	plain := patchFixture(t, "issue_comment/created.payload.json", map[string]any{"issue.number": 1, "comment.body": "Thanks, looks good.",
		"comment.user.type": "User", "installation.id": 1, "comment.id": "COMMENT_ID"})
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, total)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < total; i += 16 {
				payload := bytes.Replace(plain, []byte(`"COMMENT_ID"`), []byte(strconv.Itoa(1_000_000+i)), 1)
				if i < commands {
					payload = commentPayload(t, 100+i, "/testfirst frobnicate")
				}
				dup, err := intake.Accept(ctx, github.Delivery{ID: fmt.Sprintf("burst-%d", i), Event: "issue_comment", Action: "created",
					Installation: 1, Handled: true, Payload: payload})
				if err != nil || dup {
					errs <- fmt.Errorf("delivery %d: duplicate %t, %v", i, dup, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	recorded := time.Since(start)
	d.Close()

	mark := gh.RequestCount()
	start = time.Now()
	s := startServe(t, gh, pipeSecret, "TESTFIRST_DATABASE_URL=sqlite://"+path)
	waitFor(t, "every delivery job completed", 180*time.Second, func() bool {
		return countRows(t, path, "SELECT count(*) FROM river_job WHERE kind = ? AND state = 'completed'", jobs.DeliveryArgs{}.Kind()) == total
	}, s.log)
	took := time.Since(start)
	if n := countRows(t, path, "SELECT count(*) FROM river_job WHERE kind = ?", jobs.DeliveryArgs{}.Kind()); n != total {
		t.Errorf("%d delivery jobs; want %d, one per delivery", n, total)
	}
	if n := countRows(t, path, "SELECT count(*) FROM river_job WHERE kind = ? AND attempt <> 1", jobs.DeliveryArgs{}.Kind()); n != 0 {
		t.Errorf("%d delivery jobs ran more than once", n)
	}
	for i := range commands {
		n := 0
		for _, c := range gh.Comments(pipeOwner, pipeRepo, 100+i) {
			if c.Body == pipeline.UnknownCommandReply {
				n++
			}
		}
		if n != 1 {
			t.Errorf("issue #%d: %d replies to its one command; want exactly one", 100+i, n)
		}
	}
	// A redelivery of any of them is recognised and processed no more:
	// the intake counts it a duplicate, and a while later there is still
	// one job per delivery and one reply per command.
	const dup = `testfirst_webhook_deliveries_total{event="issue_comment",result="duplicate"}`
	dupsBefore := s.metric(t, dup)
	if code := s.deliver(t, pipeSecret, "issue_comment", "burst-0", commentPayload(t, 100, "/testfirst frobnicate")); code != http.StatusAccepted {
		t.Errorf("redelivery: %d", code)
	}
	if n := s.metric(t, dup); n != dupsBefore+1 {
		t.Errorf("%s = %v after the redelivery, %v before: want it counted a duplicate", dup, n, dupsBefore)
	}
	time.Sleep(3 * time.Second) // what a second processing would take: the drain ran 500 jobs a second
	if n := countRows(t, path, "SELECT count(*) FROM river_job WHERE kind = ?", jobs.DeliveryArgs{}.Kind()); n != total {
		t.Errorf("%d delivery jobs after the redelivery; want %d, one per delivery", n, total)
	}
	reqs := gh.RequestsSince(mark)
	if n := fakegithub.CallsTo(reqs, "POST", "/repos/"); n != commands {
		t.Errorf("%d comments posted for %d commands: %v", n, commands, fakegithub.CallsByRoute(reqs))
	}
	t.Logf("fault: webhook burst of %d deliveries while the worker is down: recorded in %.1f s; drained in %.1f s after start, %d GitHub calls (%d replies)",
		total, recorded.Seconds(), took.Seconds(), len(reqs), commands)
}

// TestFaultsDiskFullSQLite: serve's SQLite file is on a 16 MiB tmpfs that
// fills up. The intake answers 503 (GitHub keeps the delivery and it is
// redelivered) with a log line that says the disk is full; once space
// returns the same delivery is recorded and processed, and the database
// passes SQLite's integrity check.
func TestFaultsDiskFullSQLite(t *testing.T) {
	// make test (TESTFIRST_REQUIRE_DOCKER, as root) must run this case;
	// elsewhere it may be left out.
	skip := t.Skipf
	if os.Getenv("TESTFIRST_REQUIRE_DOCKER") != "" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("mounting a tmpfs needs root (make test runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		skip("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	gh := fakegithub.New(t)
	gh.AddInstallation(1, pipeOwner)
	gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, map[string]string{"README.md": "hello\n"})
	gh.AddIssue(pipeOwner, pipeRepo, 7, "octocat", "issue")
	path := filepath.Join(dir, "testfirst.db")
	s := startServe(t, gh, pipeSecret, "TESTFIRST_DATABASE_URL=sqlite://"+path)
	if code := s.deliver(t, pipeSecret, "issue_comment", "before", commentPayload(t, 1, "first")); code != http.StatusAccepted {
		t.Fatalf("before the disk fills: %d", code)
	}

	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)
	cmd := commentPayload(t, 7, "/testfirst frobnicate")
	refused := 0
	for i := range 20 {
		// Deliveries keep coming while the disk is full; each is refused.
		if code := s.deliver(t, pipeSecret, "issue_comment", fmt.Sprintf("full-%d", i%2), cmd); code != http.StatusServiceUnavailable {
			t.Errorf("delivery on a full disk answered %d; want 503", code)
		} else {
			refused++
		}
	}
	if !logLineHas(s.log(), `"msg":"webhook error"`, "database or disk is full", `"status":503`) {
		t.Errorf("no log line says the disk is full:\n%s", s.log())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	start, mark := time.Now(), gh.RequestCount()
	// GitHub redelivers: the same delivery id, now recorded once.
	var code int
	waitFor(t, "the intake to take deliveries again", 30*time.Second, func() bool {
		code = s.deliver(t, pipeSecret, "issue_comment", "full-0", cmd)
		return code == http.StatusAccepted
	}, s.log)
	recovered := time.Since(start)
	s.deliver(t, pipeSecret, "issue_comment", "full-0", cmd) // a second redelivery: a duplicate
	waitFor(t, "the command's reply", 60*time.Second, func() bool {
		for _, c := range gh.Comments(pipeOwner, pipeRepo, 7) {
			if c.Body == pipeline.UnknownCommandReply {
				return true
			}
		}
		return false
	}, s.log)
	time.Sleep(time.Second) // room for a second, wrong, reply
	replies := 0
	for _, c := range gh.Comments(pipeOwner, pipeRepo, 7) {
		if c.Body == pipeline.UnknownCommandReply {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d replies to the one command; want one", replies)
	}
	if n := countRows(t, path, "SELECT count(*) FROM deliveries WHERE id LIKE 'full-%'"); n != 1 {
		t.Errorf("%d of the refused deliveries recorded; want only full-0, once", n)
	}
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var check string
	if err := c.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check after the disk filled: %q, %v", check, err)
	}
	t.Logf("fault: disk full for SQLite: %d deliveries refused with 503; intake back %.1f s after space returned, the command answered %.1f s after, %d GitHub calls",
		refused, recovered.Seconds(), time.Since(start).Seconds(), len(gh.RequestsSince(mark)))
}

// fillDisk writes path until its file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

package test

import (
	"archive/zip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestServeScenarioOneTicket walks one ticket through the real binary,
// SQLite, the file store and Docker, with real payloads, and asserts each
// check run's status, title and summary along the way:
//
//	label → comment (what next, the push command) → push → ready (the
//	requester mentioned) → early pull request (queued, waiting) →
//	approval → graded (the same run, success) → new version (the green
//	run completed again as superseded) → /testfirst regrade (says it waits)
//	→ approval → graded again → label removed (withdrawn) → label back
//	(graded again).
//
// The enforce leg (a second signer with write access) belongs to the
// card's policy and is not walked here.
func TestServeScenarioOneTicket(t *testing.T) {
	p := newPipelineEnv(t)
	gh := p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words\n\n- [ ] counts words")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	only := func(when string) fakegithub.CheckRun {
		t.Helper()
		runs := p.runsOn(p.fixedSHA)
		if len(runs) != 1 {
			t.Fatalf("%s: %d check runs on the head, want one: %+v", when, len(runs), runs)
		}
		return runs[0]
	}

	// Label → a comment at once, with the exact command.
	deliver("issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	opened := p.comment(t, s, 1, "testfirst opened a ticket for #1")
	for _, want := range []string{"testfirst tests push --ticket " + pipeOwner + "/" + pipeRepo + "#1 --installation 1 DIR", "@alice is told here",
		"/tickets/" + pipeOwner + "/" + pipeRepo + "/1"} {
		if !strings.Contains(opened, want) {
			t.Errorf("opening comment lacks %q:\n%s", want, opened)
		}
	}

	// The command as printed, run verbatim on a writer's own machine (no
	// settings, no keys, another directory): refused, naming the upload on
	// the ticket's page, and nothing stored. Where serve runs, with its
	// store, the push below goes through: serve marked the store as read.
	printed := opened[strings.Index(opened, "testfirst tests push"):]
	printed = printed[:strings.Index(printed, "\n")]
	hidden := t.TempDir()
	testenv.WriteTree(hidden, testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden")))
	args := strings.Fields(strings.Replace(printed, " DIR", " "+hidden, 1))[1:]
	writer := exec.Command(p.bin, args...)
	writer.Dir, writer.Env = t.TempDir(), []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := writer.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not the store of a testfirst service") || !strings.Contains(string(out), "upload the tests on") {
		t.Errorf("the printed command, run on a writer's machine: %v\n%s", err, out)
	}
	if names, _ := filepath.Glob(filepath.Join(writer.Dir, "var", "hidden", "*")); len(names) > 0 {
		t.Errorf("the refused push stored %v on the writer's machine", names)
	}

	// Push → ready, mentioning the requester.
	k1, d1 := p.push(t, "writer-bot", nil)
	if ready := p.comment(t, s, 1, "**v1** are ready for review"); !strings.Contains(ready, "@alice can review") {
		t.Errorf("ready comment does not notify the requester:\n%s", ready)
	}

	// An early pull request: its check run at once, queued, waiting.
	gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	deliver("pull_request", "pr-opened", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": p.fixedSHA,
		"pull_request.state": "open", "installation.id": 1}))
	p.run(t, s, p.fixedSHA, "waiting", func(r fakegithub.CheckRun) bool { return r.Status == "queued" })
	if r := only("early pull request"); r.Name != "testfirst" || r.Title != "waiting for approved hidden tests (v1 awaits review)" ||
		!strings.Contains(r.Summary, "closes #1, whose hidden tests are not approved yet: v1 awaits review") {
		t.Errorf("early pull request: %+v", r)
	}

	// Approval → graded on that same run.
	p.decide(t, s, k1, d1, "alice", "")
	green := p.run(t, s, p.fixedSHA, "passing", completed("success"))
	if r := only("graded"); r.ID != green.ID || r.Title != "10/10 hidden tests passed · trust: isolated" ||
		!strings.Contains(r.Summary, "graded against hidden tests v1 of [#1](/"+pipeOwner+"/"+pipeRepo+"/issues/1)") ||
		!strings.Contains(r.Summary, "Trust isolated: ") || !strings.Contains(r.Summary, "Reproduce (for reviewers)") ||
		!strings.Contains(r.Summary, "### The approved tests") || !strings.Contains(r.Summary, "- signed by `alice` after ") ||
		!strings.Contains(r.Summary, "- 10 hidden tests, ") {
		t.Errorf("graded: %+v", r)
	}
	// A reviewer who may see the card grades the head again on their own
	// machine, as the grade page says: its tests' zip and testfirst grade.
	reproduceGrade(t, p, s, green.DetailsURL)

	// A new version reopens the approval: the green run is superseded.
	k2, d2 := p.push(t, "writer-bot", nil)
	p.run(t, s, p.fixedSHA, "superseded", completed("action_required"))
	if r := only("v2 pushed"); r.Title != "superseded: graded against v1, which v2 replaces; awaiting approval" ||
		!strings.Contains(r.Summary, "10/10 hidden tests passed") {
		t.Errorf("v2 pushed: %+v", r)
	}
	p.comment(t, s, 1, "**v2** are ready for review")

	// /testfirst status, on the issue and on the pull request, does not
	// give v1's pass as where the head stands: v2 replaces it.
	status := func(issue int, pull bool, id string) {
		t.Helper()
		payload := map[string]any{"issue.number": issue, "comment.body": "/testfirst status", "comment.user.login": "alice",
			"comment.user.type": "User", "sender.login": "alice", "installation.id": 1}
		if pull {
			payload["issue.pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"}
		}
		deliver("issue_comment", id, patchFixture(t, "issue_comment/created.payload.json", payload))
	}
	status(1, false, "status-issue")
	if reply := p.comment(t, s, 1, "**testfirst** #1"); !strings.Contains(reply, "not graded against v2: v2 awaits review; its grade against v1, which v2 replaces, was pass") {
		t.Errorf("/testfirst status on the issue after v2:\n%s", reply)
	}
	status(2, true, "status-pull")
	if reply := p.comment(t, s, 2, "**testfirst** #2"); !strings.Contains(reply, "- #1: replaced by v2; was hidden tests v1: pass") {
		t.Errorf("/testfirst status on the pull request after v2:\n%s", reply)
	}

	// /testfirst regrade while v2 awaits approval says so.
	deliver("issue_comment", "regrade", patchFixture(t, "issue_comment/created.payload.json", map[string]any{
		"issue.number": 2, "issue.pull_request": map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"},
		"comment.body": "/testfirst regrade", "comment.user.login": "alice", "comment.user.type": "User", "sender.login": "alice", "installation.id": 1}))
	reply := p.comment(t, s, 2, "Not graded now")
	if strings.Contains(reply, "Grading") || !strings.Contains(reply, "#1 (v2 awaits review) has no approved hidden tests yet") {
		t.Errorf("regrade reply:\n%s", reply)
	}
	waiting := p.run(t, s, p.fixedSHA, "waiting again", func(r fakegithub.CheckRun) bool { return r.Status == "queued" })
	if waiting.Title != "waiting for approved hidden tests (v2 awaits review)" {
		t.Errorf("after regrade: %+v", waiting)
	}
	// The implementer, who may only read the repository, follows the
	// waiting run's Details: the ticket's summary, not a 404.
	gh.SetPermission(pipeOwner, pipeRepo, "rita", "read")
	if code, page := p.page(t, s, "rita", waiting.DetailsURL); code != http.StatusOK || !strings.Contains(page, "as its check runs tell it") ||
		!strings.Contains(page, "v2 awaits review") || !strings.Contains(page, "(v1, which v2 replaces)") || strings.Contains(page, "def test_") {
		t.Errorf("the waiting run's Details (%s) for a reader: %d\n%s", waiting.DetailsURL, code, page)
	}

	// The repository turns enforce on (its config is read again on the
	// next event): alice's signature alone does not approve v2, the issue
	// asks for a second, and wes, with write access, signs it.
	withEnforce := files(p.base)
	withEnforce[".github/testfirst.yml"] = "approval:\n  policy: enforce\n"
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, withEnforce)
	gh.SetPermission(pipeOwner, pipeRepo, "wes", "write")
	p.decide(t, s, k2, d2, "alice", "")
	if asked := p.comment(t, s, 1, "**v2** were signed by `alice`, the requester"); !strings.Contains(asked, "anyone with write access") || !strings.Contains(asked, "@wes") {
		t.Errorf("the comment after alice's signature does not ask for a second one:\n%s", asked)
	}
	for _, r := range p.runsOn(p.fixedSHA) {
		if r.ID == waiting.ID && r.Status != "queued" {
			t.Errorf("after one signature under enforce: %+v; want the waiting run still queued", r)
		}
	}

	// The second signature approves v2 → graded again, on the waiting run.
	p.decide(t, s, k2, d2, "wes", "")
	again := p.run(t, s, p.fixedSHA, "passing against v2", func(r fakegithub.CheckRun) bool {
		return r.Status == "completed" && r.Conclusion == "success" && strings.Contains(r.Summary, "v2 of")
	})
	if again.ID != waiting.ID {
		t.Errorf("v2's grade made a new run %d instead of completing the waiting run %d", again.ID, waiting.ID)
	}
	// One run of the ticket on the head: v1's superseded run, with its
	// Regrade button, does not stay beside the green one.
	only("passing against v2")

	// The label removed by someone with triage access only: refused, said
	// on the issue, the green run unchanged.
	p.gh.SetPermission(pipeOwner, pipeRepo, "tori", "triage")
	deliver("issues", "unlabel-triage", patchFixture(t, "issues/unlabeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "tori"}))
	p.comment(t, s, 1, "`tori` removed the `test-first` label, but only the requester (@alice) or someone with write access")
	if r := p.run(t, s, p.fixedSHA, "still green", func(r fakegithub.CheckRun) bool { return r.ID == again.ID }); r.Conclusion != "success" {
		t.Errorf("after a refused withdrawal: %+v; want the green run as it was", r)
	}
	// Removed by the requester: the green run is withdrawn at once, and
	// stays blocking. Put back: the head is graded again.
	deliver("issues", "unlabel", patchFixture(t, "issues/unlabeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	withdrawn := p.run(t, s, p.fixedSHA, "withdrawn", func(r fakegithub.CheckRun) bool {
		return r.ID == again.ID && r.Conclusion == "action_required"
	})
	if withdrawn.Title != "withdrawn: #1 no longer carries the test-first label" || !strings.Contains(withdrawn.Summary, "10/10 hidden tests passed") ||
		!strings.Contains(withdrawn.Summary, "by `alice`") {
		t.Errorf("after the label was removed: %+v", withdrawn)
	}
	// Put back on the issue: the service asks GitHub before it takes the
	// ticket up again.
	// Its payload is not the first labeling's: the issue was updated since
	// (GitHub's bodies differ; the same body again is a replay).
	p.gh.LabelIssue(pipeOwner, pipeRepo, 1, "test-first")
	deliver("issues", "relabel", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice", "issue.updated_at": "2026-12-01T10:00:00Z"}))
	p.run(t, s, p.fixedSHA, "graded again after the label came back", func(r fakegithub.CheckRun) bool {
		return r.ID == again.ID && r.Conclusion == "success"
	})

	// Commands neither cancel their job nor log a nil cancel.
	if strings.Contains(s.log(), "JobCancelError: <nil>") {
		t.Error("the log has JobCancelError: <nil>")
	}
	if _, metrics := s.get(t, "/metrics"); strings.Contains(metrics, `testfirst_jobs_total{kind="delivery",outcome="cancelled"}`) {
		for _, l := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(l, `testfirst_jobs_total{kind="delivery",outcome="cancelled"}`) && !strings.HasSuffix(l, " 0") {
				t.Errorf("a delivery was counted cancelled: %s", l)
			}
		}
	}
}

// reproduceGrade follows the grade page at details as the requester: it
// downloads the version's tests from the link the page gives and grades
// the pull request's tree with them and testfirst grade, which must pass
// as the service's grade did.
func reproduceGrade(t *testing.T, p *pipelineEnv, s *service, details string) {
	t.Helper()
	code, page := p.page(t, s, "alice", details)
	m := regexp.MustCompile(`href="(/tickets/[^"]+/tests\.zip)"`).FindStringSubmatch(page)
	if code != http.StatusOK || m == nil || !strings.Contains(page, "testfirst grade --repo . --tests ") {
		t.Fatalf("the grade page %s offers the requester no tests to grade with: %d\n%s", details, code, page)
	}
	code, archive := p.page(t, s, "alice", m[1])
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", m[1], code)
	}
	zr, err := zip.NewReader(strings.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		path := filepath.Join(dir, filepath.FromSlash(zf.Name))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo := t.TempDir()
	if err := testenv.WriteTree(repo, p.fixed); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(p.bin, "grade", "--repo", repo, "--tests", filepath.Join(dir, "tests"), "--format", "json").Output()
	var rep struct{ Verdict string }
	if json.Unmarshal(out, &rep); rep.Verdict != "pass" {
		t.Errorf("testfirst grade with the downloaded tests: %v, verdict %q\n%s", err, rep.Verdict, out)
	}
}

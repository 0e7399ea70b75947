package test

import (
	"archive/tar"
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestServeKeepTestsAfterPass walks keep_tests: commit through the real
// binary, SQLite, the file store and Docker. An approval of a failing pull
// request keeps nothing; the author's review keeps nothing; the passing
// pull request approved by a writer gets one commit of the app's on its
// head branch: the approved hidden tests at their paths without their
// canary lines, the ticket and digest in its message, audited. A
// redelivered approval keeps nothing twice. The grade of the kept commit
// passes and says the tests are public. The repository's own CI
// configuration's test command, read from its workflow, passes on the
// kept commit in the grader image, and fails on the failing pull request
// with the kept tests added (the command runs them). With keep_tests off
// when a writer approves, nothing is kept either.
func TestServeKeepTestsAfterPass(t *testing.T) {
	p := newPipelineEnv(t)
	p.noReference = true
	gh := p.gh
	ci := map[string]string{".github/workflows/ci.yml": sampleCI}
	// The default branch starts with keep_tests off.
	p.baseSHA = p.commit(pipeBranch, p.base, ci)
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Bigrams\n\n- [ ] bigrams of a sentence")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	gh.SetPermission(pipeOwner, pipeRepo, "rita", "write")
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	openPull := func(n int, head string) {
		t.Helper()
		gh.AddPull(pipeOwner, pipeRepo, n, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
		deliver("pull_request", "pr-opened-"+itoa(int64(n)), patchFixture(t, "pull_request/opened.payload.json", map[string]any{
			"number": n, "pull_request.number": n, "pull_request.body": "Fixes #1", "pull_request.head.sha": head,
			"pull_request.state": "open", "installation.id": 1}))
	}
	// review submits a review on the fake and delivers its webhook; the
	// webhook's state is state unless claimed says otherwise.
	review := func(id string, n int, by, state, claimed string) {
		t.Helper()
		rv := gh.AddReview(pipeOwner, pipeRepo, n, by, state, "")
		if claimed != "" {
			rv["state"] = claimed
		}
		deliver("pull_request_review", id, patchFixture(t, "pull_request/opened.payload.json", map[string]any{
			"action": "submitted", "number": n, "pull_request.number": n, "pull_request.body": "Fixes #1", "installation.id": 1,
			"review": rv, "sender.login": by}))
	}
	// logged waits for the service's log to hold line n times.
	logged := func(line string, n int) {
		t.Helper()
		waitFor(t, "the log saying "+line, 120*time.Second, func() bool { return strings.Count(s.log(), line) >= n }, s.log)
	}

	deliver("issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	p.comment(t, s, 1, "testfirst opened a ticket for #1")
	k1, d1 := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "**v1** are ready for review")
	p.decide(t, s, k1, d1, "alice", "")

	// keep_tests on the default branch from now on, or off.
	config := func(keep string) {
		files := map[string]string{".github/testfirst.yml": "keep_tests: " + keep + "\n"}
		for k, v := range ci {
			files[k] = v
		}
		p.commit(pipeBranch, p.base, files)
	}
	config("commit")

	// A failing pull request, approved by a writer: nothing.
	failSHA := p.commit("keep-fail", p.base, ci)
	openPull(3, failSHA)
	p.run(t, s, failSHA, "fail", completed("failure"))
	review("fail-approve", 3, "rita", "APPROVED", "")
	logged("not a pass", 1)
	if h := gh.PullHead(pipeOwner, pipeRepo, 3); h != failSHA {
		t.Fatalf("failing pull request: its head moved to %s", h)
	}

	// The passing pull request, not approved yet: its pass keeps nothing.
	// Its author's review: GitHub shows a comment (it lets no author
	// approve their own pull request), whatever a webhook claims; nothing.
	fixedSHA := p.commit("keep-fix", p.fixed, ci)
	openPull(2, fixedSHA)
	p.run(t, s, fixedSHA, "pass", completed("success"))
	const noApproval = "no reviewer with write access other than the author approved it"
	logged(noApproval, 1)
	review("author-review", 2, pipeOwner, "COMMENTED", "approved")
	logged(noApproval, 2)
	if h := gh.PullHead(pipeOwner, pipeRepo, 2); h != fixedSHA {
		t.Fatalf("the author's review: the head of #2 moved to %s", h)
	}

	// keep_tests off when a writer approves: nothing.
	config("off")
	review("off-approve", 2, "rita", "APPROVED", "")
	logged("tests not kept: keep_tests is off", 1)
	if h := gh.PullHead(pipeOwner, pipeRepo, 2); h != fixedSHA {
		t.Fatalf("keep_tests off: the head of #2 moved to %s", h)
	}
	config("commit")

	// On again, a writer approves again: kept.
	review("keep-approve", 2, "rita", "APPROVED", "")
	p.comment(t, s, 1, "testfirst kept the hidden tests of this ticket")
	kept, ok := gh.CommitOf(pipeOwner, pipeRepo, "keep-fix")
	if !ok || kept.SHA == fixedSHA || gh.PullHead(pipeOwner, pipeRepo, 2) != kept.SHA {
		t.Fatalf("no commit on #2's branch: %+v", kept)
	}
	if kept.Parent != fixedSHA || kept.Author != "testfirst[bot]" {
		t.Errorf("kept commit: parent %s, author %q; want the passing head %s by testfirst[bot]", kept.Parent, kept.Author, fixedSHA)
	}
	for _, want := range []string{"Refs #1", "version 1", d1, "Testfirst-Kept-Tests: #1 " + d1, "approved them"} {
		if !strings.Contains(kept.Message, want) {
			t.Errorf("kept commit's message lacks %q:\n%s", want, kept.Message)
		}
	}
	if strings.Contains(strings.ToLower(kept.Message), "fixes #") {
		t.Errorf("kept commit's message closes the ticket:\n%s", kept.Message)
	}
	hidden := files(testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden")))
	before, _ := gh.CommitOf(pipeOwner, pipeRepo, fixedSHA)
	for path, content := range kept.Files {
		if strings.Contains(content, "testfirst-canary") {
			t.Errorf("kept %s holds a canary line", path)
		}
		if want, ok := hidden[path]; ok && content != want {
			t.Errorf("kept %s is not the approved test:\n%s\nwant\n%s", path, content, want)
		} else if !ok && content != before.Files[path] {
			t.Errorf("kept commit changed %s, which is no hidden test", path)
		}
	}
	for path := range hidden {
		if _, ok := kept.Files[path]; !ok {
			t.Errorf("hidden test %s was not kept", path)
		}
	}
	if len(kept.Files) != len(before.Files)+len(hidden) {
		t.Errorf("kept commit holds %d files; want the head's %d and the %d hidden ones", len(kept.Files), len(before.Files), len(hidden))
	}
	_, auditPage := p.page(t, s, "alice", pipelineTicketPath+"/audit")
	if !strings.Contains(auditPage, "tests.kept") || !strings.Contains(auditPage, kept.SHA) {
		t.Errorf("the ticket's audit log does not record the kept tests:\n%s", auditPage)
	}

	// A redelivered approval keeps nothing twice.
	review("keep-approve-again", 2, "rita", "APPROVED", "")
	logged("tests not kept again: kept already", 1)
	if h := gh.PullHead(pipeOwner, pipeRepo, 2); h != kept.SHA {
		t.Errorf("the approval again moved #2's head to %s", h)
	}
	if n := strings.Count(commentsText(p, 1), "testfirst kept the hidden tests"); n != 1 {
		t.Errorf("the ticket was told %d times", n)
	}

	// GitHub sends synchronize for the app's push: the kept commit is
	// graded, passes, and says the tests are public.
	deliver("pull_request", "pr-sync-kept", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"action": "synchronize", "number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": kept.SHA,
		"pull_request.state": "open", "installation.id": 1}))
	r := p.run(t, s, kept.SHA, "graded", func(r fakegithub.CheckRun) bool { return r.Status == "completed" })
	if r.Conclusion != "success" || !strings.Contains(r.Summary, "commit of the hidden tests") {
		t.Errorf("the kept commit's grade: %s\n%s", r.Conclusion, r.Summary)
	}

	// The repository's own CI test command, on the kept commit, in the
	// grader image: it passes. On the failing pull request with the kept
	// tests added it fails: the command runs them.
	cmds, err := ciTestCommands([]byte(kept.Files[".github/workflows/ci.yml"]))
	if err != nil {
		t.Fatal(err)
	}
	if res := runCI(t, kept.Files, cmds); res.ExitCode != 0 {
		t.Errorf("%q on the kept commit: exit %d\n%s\n%s", cmds, res.ExitCode, res.Stdout, res.Stderr)
	} else if !strings.Contains(string(res.Stdout), "passed") {
		t.Errorf("%q on the kept commit ran no test:\n%s", cmds, res.Stdout)
	}
	broken, _ := gh.CommitOf(pipeOwner, pipeRepo, failSHA)
	for path, content := range hidden {
		broken.Files[path] = content
	}
	if res := runCI(t, broken.Files, cmds); res.ExitCode == 0 {
		t.Errorf("%q passes on the base with the kept tests: it does not run them\n%s", cmds, res.Stdout)
	}
}

// commentsText is every comment on issue, joined.
func commentsText(p *pipelineEnv, issue int) string {
	var b strings.Builder
	for _, c := range p.gh.Comments(pipeOwner, pipeRepo, issue) {
		b.WriteString(c.Body + "\n")
	}
	return b.String()
}

// runCI runs commands, one shell each after the other, on a tree of files
// in the grader image: no network, the sandbox's limits.
func runCI(t *testing.T, tree map[string]string, commands []string) sandbox.Result {
	t.Helper()
	g := testenv.Grading(t)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(tree[p])), Typeflag: tar.TypeReg})
		tw.Write([]byte(tree[p]))
	}
	tw.Close()
	script := "set -e\nmkdir /tmp/ci\ncd /tmp/ci\npython3 -c 'import sys, tarfile; tarfile.open(fileobj=sys.stdin.buffer, mode=\"r|\").extractall(\".\")'\n" +
		strings.Join(commands, "\n") + "\n"
	lim := sandbox.Limits{Memory: 512 << 20, NanoCPUs: 1e9, Pids: 128, RepoSize: 8 << 20, HiddenSize: 1 << 20, TmpSize: 64 << 20}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := g.Docker.Run(ctx, sandbox.Spec{Image: g.Image, Entrypoint: []string{"sh", "-c", script}, Input: &buf, Timeout: 2 * time.Minute,
		Limits: lim, Runtime: g.Runtime, Labels: map[string]string{"app.testfirst.test": "keep-tests-ci"}, StdoutLimit: 1 << 20, StderrLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// The scripted agents' programs, run by the command preset in the agent
// sandbox. The writer hands in the sample's hidden tests and criteria map
// from its files (with the reference patch in #1's second round), and
// what it was told. The implementer copies
// /agent/impl/round-N (the last one for later rounds) over /workspace and
// writes what it was told into notes/feedback.txt (and the issue into
// notes/issue.txt, so two tickets' commits differ); on issue #2 it prints
// what /agent/leak.txt holds (the test setup puts a rejected version's
// canary there).
const (
	scriptedWriter = `#!/bin/sh
set -eu
mkdir -p /out/tests
cp -R /agent/hidden/. /out/tests/
cp /agent/criteria.json /out/criteria.json
round=$(sed -n 's/.*"round": *\([0-9]*\).*/\1/p' /task/task.json)
issue=$(sed -n 's/.*"issue": *\([0-9]*\).*/\1/p' /task/task.json)
# The reference patch only where it is approved and graded with: its
# mutants take the base check's time.
if [ "$issue" = 1 ] && [ "$round" = 2 ]; then cp /agent/reference.patch /out/reference.patch; fi
{ echo "# Hidden tests"; echo; echo "round $round"; cat /task/task.json; } > /out/RESULT.md
`
	scriptedImplementer = `#!/bin/sh
set -eu
round=$(sed -n 's/.*"round": *\([0-9]*\).*/\1/p' /task/task.json)
issue=$(sed -n 's/.*"issue": *\([0-9]*\).*/\1/p' /task/task.json)
if [ "$issue" = 2 ] && [ -f /agent/leak.txt ]; then cat /agent/leak.txt; fi
dir=/agent/impl/round-$round
[ -d "$dir" ] || dir=/agent/impl/round-2
cp -R "$dir"/. /workspace/
mkdir -p /workspace/notes
echo "$issue" > /workspace/notes/issue.txt
sed -n 's/.*"feedback": *"\(.*\)".*/\1/p' /task/task.json > /workspace/notes/feedback.txt
echo "round $round done" > /out/RESULT.md
`
)

// agentFiles lays out the harnesses' files: the writer's hidden tests,
// reference patch and criteria map, the implementer's rounds (round 1
// implements frequencies only, round 2 is the reference fix).
func (p *pipelineEnv) agentFiles(t *testing.T) (writer, implementer string) {
	t.Helper()
	writer, implementer = filepath.Join(p.dir, "agents", "writer"), filepath.Join(p.dir, "agents", "implementer")
	writeFile(t, filepath.Join(writer, "run.sh"), scriptedWriter, 0o755)
	writeFile(t, filepath.Join(implementer, "run.sh"), scriptedImplementer, 0o755)
	for path, content := range files(testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden"))) {
		writeFile(t, filepath.Join(writer, "hidden", path), content, 0o644)
	}
	patch, err := os.ReadFile(filepath.Join(sampleDir, "reference.patch"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(writer, "reference.patch"), string(patch), 0o644)
	writeFile(t, filepath.Join(writer, "criteria.json"), `{"counts words": ["tests/test_wordstats.py::test_frequencies_counts_words_case_insensitively"]}`, 0o644)
	base, fixed := files(p.base), files(p.fixed)
	for path, content := range fixed {
		if base[path] != content {
			writeFile(t, filepath.Join(implementer, "impl", "round-2", path), content, 0o644)
		}
	}
	stats := base["wordstats/stats.py"]
	partial := strings.Replace(stats, `    raise NotImplementedError("frequencies")`, "    from collections import Counter\n\n    return dict(Counter(tokenize(text)))", 1)
	if partial == stats {
		t.Fatal("the sample's stats.py no longer raises NotImplementedError(\"frequencies\")")
	}
	writeFile(t, filepath.Join(implementer, "impl", "round-1", "wordstats", "stats.py"), partial, 0o644)
	return writer, implementer
}

// listed is a version as testfirst tests list shows it.
type listed struct {
	Number int    `json:"number"`
	Digest string `json:"digest"`
	State  string `json:"state"`
	Author string `json:"author"`
}

// versions lists issue's versions in the store.
func (p *pipelineEnv) versions(t *testing.T, issue int) []listed {
	t.Helper()
	out, err := exec.Command(p.bin, "tests", "list", "--store", p.storeURL, "--ticket", fmt.Sprintf("%s/%s#%d", pipeOwner, pipeRepo, issue),
		"--installation", "1", "--format", "json").Output()
	if err != nil {
		t.Fatalf("tests list: %v", err)
	}
	var list []listed
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("tests list printed %q: %v", out, err)
	}
	return list
}

// waitVersion waits for version k of issue and returns it.
func (p *pipelineEnv) waitVersion(t *testing.T, s *service, issue, k int) listed {
	t.Helper()
	var v listed
	waitFor(t, fmt.Sprintf("v%d of #%d in the store", k, issue), 240*time.Second, func() bool {
		for _, l := range p.versions(t, issue) {
			if l.Number == k {
				v = l
				return true
			}
		}
		return false
	}, s.log)
	return v
}

// decideOn approves (or, with a reason, rejects) version k of issue on
// the card as by.
func (p *pipelineEnv) decideOn(t *testing.T, s *service, issue, k int, digest, by, reason string) {
	t.Helper()
	c := p.signIn(t, s, by)
	action, form := "approve", url.Values{"digest": {digest}}
	if reason != "" {
		action = "reject"
		form.Set("reason", reason)
	}
	path := fmt.Sprintf("/tickets/%s/%s/%d/versions/%d/%s", pipeOwner, pipeRepo, issue, k, action)
	for deadline := time.Now().Add(240 * time.Second); ; time.Sleep(time.Second) {
		resp, err := c.PostForm(s.url+path, form)
		if err != nil {
			t.Fatalf("%s v%d: %v", action, k, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(resp.Request.URL.RawQuery, "decided=") {
			return
		}
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "not ready for review yet") || time.Now().After(deadline) {
			t.Fatalf("%s v%d of #%d as %s: %d at %s\n%s\n%s", action, k, issue, by, resp.StatusCode, resp.Request.URL, body, s.log())
		}
	}
}

// signIn returns a client signed in to s as login.
func (p *pipelineEnv) signIn(t *testing.T, s *service, login string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	p.gh.SignInWeb(login)
	resp, err := c.Get(s.url + "/login")
	if err != nil {
		t.Fatalf("sign in as %s: %v", login, err)
	}
	resp.Body.Close()
	return c
}

// page returns a page of s as the signed-in client c sees it.
func page(t *testing.T, c *http.Client, s *service, path string) string {
	t.Helper()
	resp, err := c.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
	}
	return string(body)
}

// openedPull waits for the pull request the app opened for issue, with a
// head that satisfies ok.
func (p *pipelineEnv) openedPull(t *testing.T, s *service, issue int, what string, ok func(fakegithub.OpenedPull) bool) fakegithub.OpenedPull {
	t.Helper()
	var found fakegithub.OpenedPull
	waitFor(t, fmt.Sprintf("the app's pull request for #%d %s", issue, what), 240*time.Second, func() bool {
		for _, pr := range p.gh.OpenedPulls(pipeOwner, pipeRepo) {
			if pr.HeadRef == fmt.Sprintf("testfirst/issue-%d", issue) && ok(pr) {
				found = pr
				return true
			}
		}
		return false
	}, s.log)
	return found
}

// TestServeAgents walks two tickets through the real binary with a
// scripted command writer and implementer in the real agent sandbox,
// against the fake GitHub:
//
//	#1: label → the writer's tests (v1, writer:scripted-writer) → rejected
//	→ round 2 with the reason → v2 → approved → the implementer's round 1
//	→ pull request opened by the app, "Fixes #1" → failing grade → round 2
//	told counts and failing ids, on the same branch → passing grade.
//	#2: label → v1 rejected → v2 approved; the implementer prints v1's
//	canary (leaked to it by the test) → its grade is contaminated, and no
//	second round starts.
func TestServeAgents(t *testing.T) {
	p := newPipelineEnv(t)
	gh := p.gh
	writerDir, implDir := p.agentFiles(t)
	withAgents := files(p.base)
	withAgents[".github/testfirst.yml"] = "writer: scripted-writer\nimplementer: scripted-implementer\nagents:\n  max_rounds: 3\n"
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, withAgents)
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Word statistics\n\n- [ ] counts words")
	gh.AddIssue(pipeOwner, pipeRepo, 2, "alice", "Bigrams\n\n- [ ] lists bigrams")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	config := filepath.Join(p.dir, "testfirst.yml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`harnesses:
  scripted-writer: {preset: command, command: ["/agent/run.sh"], files: %s}
  scripted-implementer: {preset: command, command: ["/agent/run.sh"], files: %s}
agents: {timeout: 5m, memory: 512MiB, cpus: 1, pids: 256, independence: warn}
`, writerDir, implDir)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The command preset's image is built before the clock starts: on a
	// fresh machine its build is minutes of the waits below.
	if _, err := testenv.Docker(t).EnsureDebianImage(context.Background(), agent.CommandRecipe, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s", "TESTFIRST_CONFIG="+config)
	label := func(issue int) {
		t.Helper()
		body := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "issue.number": issue,
			"issue.title": map[int]string{1: "Word statistics", 2: "Bigrams"}[issue], "installation.id": 1, "sender.login": "alice"})
		if code := s.deliver(t, pipeSecret, "issues", fmt.Sprintf("label-%d", issue), body); code != http.StatusAccepted {
			t.Fatalf("label #%d: %d", issue, code)
		}
	}

	// #1: the label starts the writer; its tests become v1.
	label(1)
	v1 := p.waitVersion(t, s, 1, 1)
	if v1.Author != "writer:scripted-writer" {
		t.Errorf("v1 author %q; want writer:scripted-writer", v1.Author)
	}
	p.comment(t, s, 1, "**v1** are ready for review")
	alice := p.signIn(t, s, "alice")
	card := page(t, alice, s, pipelineTicketPath+"/versions/1")
	for _, want := range []string{"harness <code>scripted-writer</code>, round 1", "RESULT.md", "# Hidden tests", "No request left the sandbox."} {
		if !strings.Contains(card, want) {
			t.Errorf("v1's card lacks %q", want)
		}
	}
	// A rejection sends the reason back: round 2, same base, same harness.
	p.decideOn(t, s, 1, 1, v1.Digest, "alice", "cover the empty text too")
	v2 := p.waitVersion(t, s, 1, 2)
	if card := page(t, alice, s, pipelineTicketPath+"/versions/2"); !strings.Contains(card, "round 2") ||
		!strings.Contains(card, "cover the empty text too") {
		t.Errorf("v2's card does not show round 2 with the reason")
	}
	p.decideOn(t, s, 1, 2, v2.Digest, "alice", "")

	// The implementer's round 1 opens the pull request; its grade fails.
	pr1 := p.openedPull(t, s, 1, "opened", func(fakegithub.OpenedPull) bool { return true })
	if !strings.HasPrefix(pr1.Body, "Fixes #1") || pr1.Author != "testfirst[bot]" || pr1.BaseRef != pipeBranch {
		t.Errorf("pull request %+v", pr1)
	}
	failing := p.run(t, s, pr1.HeadSHA, "failing (round 1)", completed("failure"))
	if !strings.Contains(failing.Title, "hidden tests passed") || strings.Contains(failing.Title, "10/10") {
		t.Errorf("round 1's check run: %+v", failing)
	}
	// Round 2: a new commit on the same branch, told counts and ids only.
	pr2 := p.openedPull(t, s, 1, "moved to round 2", func(pr fakegithub.OpenedPull) bool { return pr.HeadSHA != pr1.HeadSHA })
	if pr2.Number != pr1.Number || len(pr2.Commits) < 2 || pr2.Commits[1] != pr1.HeadSHA {
		t.Errorf("round 2 did not push onto round 1's branch: %+v", pr2)
	}
	feedback := pr2.Files["notes/feedback.txt"]
	if !strings.Contains(feedback, "hidden tests passed") || !strings.Contains(feedback, "tests/test_") || strings.Contains(feedback, "NotImplementedError") {
		t.Errorf("round 2 was told %q; want counts and failing ids, never output", feedback)
	}
	passing := p.run(t, s, pr2.HeadSHA, "passing (round 2)", completed("success"))
	if !strings.HasPrefix(passing.Title, "10/10 hidden tests passed") {
		t.Errorf("round 2's check run: %+v", passing)
	}

	// #2: v1 rejected, its canary leaked to the implementer; v2 approved.
	label(2)
	w1 := p.waitVersion(t, s, 2, 1)
	p.decideOn(t, s, 2, 1, w1.Digest, "alice", "try again")
	w2 := p.waitVersion(t, s, 2, 2)
	if err := os.WriteFile(filepath.Join(implDir, "leak.txt"), []byte("found in a log: "+p.canaryOf(t, 2, 1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.decideOn(t, s, 2, 2, w2.Digest, "alice", "")
	pr := p.openedPull(t, s, 2, "opened", func(fakegithub.OpenedPull) bool { return true })
	dirty := p.run(t, s, pr.HeadSHA, "contaminated", completed("failure"))
	if !strings.HasPrefix(dirty.Title, "contaminated") || !strings.Contains(dirty.Summary, "appears in the implementer's stdout") {
		t.Errorf("the contaminated run's check run: %+v", dirty)
	}
	time.Sleep(5 * time.Second)
	if prs := p.gh.OpenedPulls(pipeOwner, pipeRepo); prs[len(prs)-1].HeadSHA != pr.HeadSHA {
		t.Errorf("a round followed the contaminated one: %+v", prs[len(prs)-1])
	}
	if _, metrics := s.get(t, "/metrics"); !strings.Contains(metrics, `testfirst_agent_runs_total{harness="scripted-implementer",outcome="contaminated",role="implementer"} 1`) ||
		!strings.Contains(metrics, `testfirst_agent_runs_total{harness="scripted-writer",outcome="delivered",role="writer"} 4`) {
		t.Errorf("agent metrics:\n%s", grepLines(metrics, "testfirst_agent_"))
	}
}

// canaryOf reads version k of issue's canary from the store with the
// grader's key, as only the test setup can.
func (p *pipelineEnv) canaryOf(t *testing.T, issue, k int) string {
	t.Helper()
	f, err := os.Open(os.Getenv("TESTFIRST_GRADER_IDENTITY_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(f)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := store.NewFileBlobs(strings.TrimPrefix(p.storeURL, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.NewReader(blobs, ids)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.Canaries(t.Context(), store.Ticket{Installation: 1, Owner: pipeOwner, Repo: pipeRepo, Issue: issue})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if strings.HasSuffix(c.HiddenFile, fmt.Sprintf("(v%d)", k)) {
			return c.Token
		}
	}
	t.Fatalf("no canary of v%d of #%d among %d", k, issue, len(cs))
	return ""
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

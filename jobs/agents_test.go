package jobs

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/tree"
)

// scriptedRunner stands in for the sandbox in these tests of the job
// logic only (the end-to-end test in test/ runs the real Docker runner):
// it records each request and answers with what answer makes of it.
type scriptedRunner struct {
	requests []agent.Request
	answer   func(agent.Request) agent.Result
}

func (r *scriptedRunner) Run(_ context.Context, req agent.Request) (agent.Result, error) {
	r.requests = append(r.requests, req)
	return r.answer(req), nil
}

// agentFixture is the sync fixture with a writer and an implementer
// harness configured, the repository naming them.
type agentFixture struct {
	*syncFixture
	runner *scriptedRunner
	aq     *agentQueue
	aw     *agentWorker
}

func newAgentFixture(t *testing.T, repoConfig string, independence string) *agentFixture {
	t.Helper()
	f := &agentFixture{syncFixture: newSyncFixture(t), runner: &scriptedRunner{}}
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": repoConfig})
	cfg := agent.DefaultConfig()
	cfg.Independence = independence
	cfg.Harnesses = map[string]agent.Harness{
		"scribe": {Name: "scribe", Preset: agent.PresetCommand, Command: []string{"/agent/write.sh"}},
		"coder":  {Name: "coder", Preset: agent.PresetCommand, Command: []string{"/agent/code.sh"}, Egress: []string{"*.github.com"}},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.aq = &agentQueue{db: f.d, cfg: cfg, log: log}
	f.sync.agents = f.aq
	f.aw = &agentWorker{db: f.d, github: f.sync.github, agents: f.aq, runner: f.runner, store: f.w, canaries: f.r, grades: f.sync.grades, log: log}
	return f
}

func (f *agentFixture) runs(t *testing.T) []db.AgentRun {
	t.Helper()
	return readTx(t, f.d, func(tx *db.Tx) ([]db.AgentRun, error) { return tx.AgentRuns(t.Context(), f.ticket.ID) })
}

func (f *agentFixture) work(t *testing.T, a db.AgentRun) db.AgentRun {
	t.Helper()
	row := &rivertype.JobRow{ID: a.JobID, Attempt: 1, MaxAttempts: 3}
	var err error
	if a.Role == pipeline.RoleWriter {
		err = (&WriterWorker{agentWorker: f.aw}).Work(t.Context(), &river.Job[WriterArgs]{JobRow: row, Args: WriterArgs{Run: a.ID}})
	} else {
		err = (&ImplementerWorker{agentWorker: f.aw}).Work(t.Context(), &river.Job[ImplementerArgs]{JobRow: row, Args: ImplementerArgs{Run: a.ID}})
	}
	if err != nil {
		t.Fatalf("%s run %d: %v", a.Role, a.ID, err)
	}
	for _, r := range f.runs(t) {
		if r.ID == a.ID {
			return r
		}
	}
	t.Fatalf("run %d is gone", a.ID)
	return db.AgentRun{}
}

func (f *agentFixture) startWriter(t *testing.T) db.AgentRun {
	t.Helper()
	fc := pipeline.ParseFetchedConfig([]byte(f.repoConfig(t)))
	if err := f.d.Tx(t.Context(), func(tx *db.Tx) error { return f.aq.startWriter(t.Context(), tx, f.ticket, fc.Config, "") }); err != nil {
		t.Fatal(err)
	}
	runs := f.runs(t)
	return runs[len(runs)-1]
}

func (f *agentFixture) repoConfig(t *testing.T) string {
	t.Helper()
	data, err := f.gi.File(t.Context(), "octo-org", "app", "main", pipeline.RepoConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var testFile = tree.File{Path: "tests/test_count.py", Mode: 0o644, Data: []byte("from app import count\n\n\ndef test_count():\n    assert count('a b') == 2\n")}

// TestWriterRounds: the writer's tests become a version authored
// writer:<harness>; a rejection sends the reason back as the next round,
// on the same base with the same harness; the rejection cap stops it.
func TestWriterRounds(t *testing.T) {
	f := newAgentFixture(t, "writer: scribe\napproval:\n  max_rejections: 2\n", agent.IndependenceWarn)
	ctx := t.Context()
	f.runner.answer = func(agent.Request) agent.Result {
		return agent.Result{Tests: []tree.File{testFile}, Criteria: map[string][]string{"counts": {"tests/test_count.py::test_count"}},
			Summary: []byte("# Tests\nOne test.\n"), Egress: []agent.EgressRecord{{Host: "api.example:443", Method: "POST", Path: "/v1", Status: 200, Allowed: true},
				{Host: "github.com:443", Method: "CONNECT", Status: 403, Refused: "GitHub is never reachable"}}}
	}
	w1 := f.work(t, f.startWriter(t))
	if w1.Outcome != pipeline.OutcomeDelivered || w1.VersionNumber != 1 || w1.Summary != "# Tests\nOne test.\n" || !strings.Contains(string(w1.Egress), `"allowed":false`) {
		t.Errorf("round 1 = %+v", w1)
	}
	if req := f.runner.requests[0]; req.Task.Role != agent.RoleWriter || req.Task.Round != 1 || req.Task.BaseSHA != f.ticket.BaseSHA ||
		req.Harness != "scribe" || req.Base == nil || len(req.Base.Files) == 0 {
		t.Errorf("round 1 request = %+v", req)
	}
	vs, err := f.w.Versions(ctx, f.st)
	if err != nil || len(vs) != 1 || vs[0].Author != "writer:scribe" {
		t.Fatalf("versions = %+v, %v; want v1 by writer:scribe", vs, err)
	}
	f.run(t)
	if _, err := f.w.Reject(ctx, f.st, 1, vs[0].Digest, "alice", "test the empty string too"); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	f.run(t) // a second sync starts no second round
	runs := f.runs(t)
	if len(runs) != 2 || runs[1].Round != 2 || runs[1].Feedback != "test the empty string too" || runs[1].Harness != "scribe" || runs[1].State != pipeline.AgentQueued {
		t.Fatalf("after the rejection: %+v; want round 2 queued with the reason", runs)
	}
	w2 := f.work(t, runs[1])
	if req := f.runner.requests[1]; req.Task.Round != 2 || req.Task.Feedback != "test the empty string too" || req.Task.BaseSHA != f.ticket.BaseSHA {
		t.Errorf("round 2 request = %+v", req.Task)
	}
	vs, _ = f.w.Versions(ctx, f.st)
	if w2.VersionNumber != 2 || len(vs) != 2 {
		t.Fatalf("round 2 = %+v, versions %d", w2, len(vs))
	}
	f.run(t)
	if _, err := f.w.Reject(ctx, f.st, 2, vs[1].Digest, "alice", "still weak"); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	if runs := f.runs(t); len(runs) != 2 || f.state(t) != pipeline.TicketStopped {
		t.Errorf("after the second rejection (the cap): %d runs, ticket %s; want no third round, stopped", len(runs), f.state(t))
	}
	assertAudit(t, f.syncFixture, "agent.queued", "agent.started", "agent.delivered")
}

// TestImplementerContaminated: an implementer that prints the canary of a
// rejected version (leaked to it in this setup) is contaminated; its
// changes, which carry none, are committed and the pull request opened,
// and no further round starts. One whose changes carry a canary commits
// nothing, and the issue says so.
func TestImplementerContaminated(t *testing.T) {
	f := newAgentFixture(t, "writer: scribe\nimplementer: coder\n", agent.IndependenceWarn)
	ctx := t.Context()
	v1 := f.push(t)
	if _, err := f.w.Reject(ctx, f.st, 1, v1.Digest, "alice", "no"); err != nil {
		t.Fatal(err)
	}
	cs, err := f.r.Canaries(ctx, f.st)
	if err != nil || len(cs) == 0 {
		t.Fatalf("canaries %v, %v", cs, err)
	}
	leaked := cs[0].Token
	v2 := f.push(t)
	f.run(t)
	if _, err := f.w.Approve(ctx, f.st, 2, v2.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	inPatch := false
	f.runner.answer = func(agent.Request) agent.Result {
		code := []byte("def count(s):\n    return len(s.split())\n")
		r := agent.Result{Changes: []agent.Change{{Path: "app.py", Content: code}}, Stdout: []byte("I found " + leaked + " somewhere\n")}
		if inPatch {
			r.Changes[0].Content = append(code, []byte("# "+leaked+"\n")...)
		}
		return r
	}
	f.run(t) // the approval starts round 1
	runs := f.runs(t)
	if len(runs) != 1 || runs[0].Role != pipeline.RoleImplementer || runs[0].Digest != v2.Digest || runs[0].VersionNumber != 2 {
		t.Fatalf("after the approval: %+v", runs)
	}
	var warnings []string
	_ = json.Unmarshal(runs[0].Warnings, &warnings)
	if len(warnings) != 1 || warnings[0] != pipeline.EgressGitHubWarning {
		t.Errorf("warnings %q; want the egress one (coder's egress names *.github.com)", warnings)
	}
	im := f.work(t, runs[0])
	if im.Outcome != pipeline.OutcomeContaminated || im.HeadSHA == "" || im.PRNumber == 0 || !strings.Contains(string(im.Sightings), `"where":"stdout"`) ||
		!strings.Contains(string(im.Sightings), "(v1)") {
		t.Fatalf("contaminated run = %+v", im)
	}
	prs := f.gh.OpenedPulls("octo-org", "app")
	if len(prs) != 1 || prs[0].HeadRef != "testfirst/issue-7" || !strings.HasPrefix(prs[0].Body, "Fixes #7") || prs[0].HeadSHA != im.HeadSHA ||
		!strings.Contains(prs[0].Files["app.py"], "len(s.split())") {
		t.Fatalf("pull requests = %+v", prs)
	}
	var g db.Grade
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		g, err = tx.GradeByHead(ctx, im.HeadSHA, v2.Digest)
		return err
	}); err != nil || g.PRNumber != im.PRNumber {
		t.Fatalf("grade of the head: %+v, %v", g, err)
	}
	// The grade of that head is contaminated whatever the tests say, and
	// starts no further round.
	rep := &report.Report{Verdict: report.VerdictFail, Counts: report.Counts{Total: 3, Passed: 1, Failed: 2}, Failed: []string{"tests/test_count.py::test_count"}}
	warned, run, err := gradeContext(ctx, f.d, f.ticket.ID, im.HeadSHA)
	if err != nil || run == nil || run.ID != im.ID || len(warned) != 1 {
		t.Fatalf("grade context: %v, %+v, %v", warned, run, err)
	}
	applyRun(rep, run)
	if rep.Verdict != report.VerdictContaminated || !rep.Contaminated || !strings.Contains(strings.Join(rep.Reasons, "\n"), "appears in the implementer's stdout") {
		t.Errorf("report after the run: %+v", rep)
	}
	if err := f.aq.afterGrade(ctx, f.ticket, g, rep, run, pipeline.RepoConfig{Implementer: "coder", MaxRounds: 3}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.runs(t)); n != 1 {
		t.Errorf("%d runs after the contaminated grade; want no further round", n)
	}

	// A new approved version starts round 1 against it; its changes carry
	// the canary: nothing is committed.
	v3 := f.push(t)
	f.run(t)
	if _, err := f.w.Approve(ctx, f.st, 3, v3.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	inPatch = true
	f.run(t)
	runs = f.runs(t)
	last := f.work(t, runs[len(runs)-1])
	if last.Outcome != pipeline.OutcomeContaminated || last.HeadSHA != "" || !strings.Contains(string(last.Sightings), `"where":"change:app.py"`) {
		t.Errorf("contaminated changes: %+v", last)
	}
	if prs := f.gh.OpenedPulls("octo-org", "app"); len(prs) != 1 || prs[0].HeadSHA != im.HeadSHA {
		t.Errorf("after contaminated changes the branch moved: %+v", prs)
	}
	comments := f.comments()
	if c := comments[len(comments)-1]; !strings.Contains(c, "The implementer `coder` (round 1) ended **contaminated**") || strings.Contains(c, leaked) {
		t.Errorf("last comment = %q", c)
	}
}

// TestImplementerRounds: a failing grade of round 1's commit starts round
// 2 with counts and failing ids only, whose commit follows round 1's on
// the same branch; at max_rounds no round follows.
func TestImplementerRounds(t *testing.T) {
	f := newAgentFixture(t, "implementer: coder\nagents:\n  max_rounds: 2\n", agent.IndependenceWarn)
	ctx := t.Context()
	v1 := f.push(t)
	f.run(t)
	if _, err := f.w.Approve(ctx, f.st, 1, v1.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.runner.answer = func(req agent.Request) agent.Result {
		return agent.Result{Changes: []agent.Change{{Path: "app.py", Content: []byte("ROUND = " + string(rune('0'+req.Task.Round)) + "\n")}}}
	}
	f.run(t)
	r1 := f.work(t, f.runs(t)[0])
	if r1.Outcome != pipeline.OutcomeDelivered || r1.PRNumber == 0 {
		t.Fatalf("round 1 = %+v", r1)
	}
	cfg := pipeline.RepoConfig{Implementer: "coder", MaxRounds: 2}
	grade := func(r db.AgentRun) db.Grade {
		var g db.Grade
		if err := f.d.Tx(ctx, func(tx *db.Tx) error {
			var err error
			g, err = tx.GradeByHead(ctx, r.HeadSHA, v1.Digest)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return g
	}
	failing := &report.Report{Verdict: report.VerdictFail, Counts: report.Counts{Total: 4, Passed: 3, Failed: 1}, Failed: []string{"tests/test_count.py::test_empty"},
		Output: "AssertionError: secret output"}
	if err := f.aq.afterGrade(ctx, f.ticket, grade(r1), failing, &r1, cfg); err != nil {
		t.Fatal(err)
	}
	runs := f.runs(t)
	if len(runs) != 2 || runs[1].Round != 2 || runs[1].Digest != v1.Digest {
		t.Fatalf("after a failing grade: %+v", runs)
	}
	fb := runs[1].Feedback
	if !strings.Contains(fb, "3 of 4 hidden tests passed") || !strings.Contains(fb, "- tests/test_count.py::test_empty") || strings.Contains(fb, "secret output") {
		t.Errorf("round 2 feedback = %q; want counts and ids, never output", fb)
	}
	r2 := f.work(t, runs[1])
	prs := f.gh.OpenedPulls("octo-org", "app")
	if r2.PRNumber != r1.PRNumber || len(prs) != 1 || prs[0].HeadSHA != r2.HeadSHA || len(prs[0].Commits) < 2 ||
		prs[0].Commits[1] != r1.HeadSHA || prs[0].Files["app.py"] != "ROUND = 2\n" || prs[0].Title != "Implement #7" {
		t.Fatalf("round 2 = %+v; pull requests %+v", r2, prs)
	}
	if err := f.aq.afterGrade(ctx, f.ticket, grade(r2), failing, &r2, cfg); err != nil {
		t.Fatal(err)
	}
	if n := len(f.runs(t)); n != 2 {
		t.Errorf("%d runs after round max_rounds failed; want 2", n)
	}
}

// TestIndependenceRefuse: a writer and implementer of one harness get no
// implementer run under refuse, and the issue says why; under warn the
// run carries the warning.
func TestIndependenceRefuse(t *testing.T) {
	for _, policy := range []string{agent.IndependenceRefuse, agent.IndependenceWarn} {
		t.Run(policy, func(t *testing.T) {
			f := newAgentFixture(t, "writer: scribe\nimplementer: scribe\n", policy)
			ctx := t.Context()
			v, err := f.w.Push(ctx, f.st, draftBy("writer:scribe"))
			if err != nil {
				t.Fatal(err)
			}
			f.run(t)
			if _, err := f.w.Approve(ctx, f.st, 1, v.Digest, "alice"); err != nil {
				t.Fatal(err)
			}
			f.run(t)
			runs := f.runs(t)
			if len(runs) != 1 {
				t.Fatalf("runs %+v", runs)
			}
			want := pipeline.IndependenceWarning("scribe", "scribe")
			if policy == agent.IndependenceRefuse {
				if runs[0].Outcome != pipeline.OutcomeRefused || runs[0].JobID != 0 || !strings.Contains(runs[0].Error, want) {
					t.Errorf("refused run = %+v", runs[0])
				}
				if c := f.comments(); !strings.Contains(c[len(c)-1], "ended **refused**") {
					t.Errorf("last comment %q", c[len(c)-1])
				}
				return
			}
			if runs[0].State != pipeline.AgentQueued || !strings.Contains(string(runs[0].Warnings), "same harness (scribe)") {
				t.Errorf("warned run = %+v", runs[0])
			}
		})
	}
}

func draftBy(author string) store.Draft {
	return store.Draft{Author: author, Files: []store.File{{Path: "tests/test_count.py", Data: []byte("def test_count():\n    assert 1\n")}}}
}

// TestNewApprovalCancelsImplementer: a newer approved version cancels the
// implementer still working against the old one and starts round 1
// against the new; removing the label cancels that one too.
func TestNewApprovalCancelsImplementer(t *testing.T) {
	f := newAgentFixture(t, "implementer: coder\n", agent.IndependenceWarn)
	ctx := t.Context()
	v1 := f.push(t)
	f.run(t)
	if _, err := f.w.Approve(ctx, f.st, 1, v1.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	v2 := f.push(t)
	f.run(t)
	if _, err := f.w.Approve(ctx, f.st, 2, v2.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	runs := f.runs(t)
	if len(runs) != 2 || runs[0].State != pipeline.AgentCancelled || runs[1].Digest != v2.Digest || runs[1].State != pipeline.AgentQueued {
		t.Fatalf("runs after v2's approval: %+v", runs)
	}
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { return f.aq.cancelAll(ctx, tx, f.ticket.ID, "the ticket was withdrawn") }); err != nil {
		t.Fatal(err)
	}
	if runs := f.runs(t); runs[1].State != pipeline.AgentCancelled {
		t.Errorf("after the withdrawal: %+v", runs[1])
	}
	// A cancelled run's job does nothing.
	f.runner.answer = func(agent.Request) agent.Result { t.Error("a cancelled run ran"); return agent.Result{} }
	f.work(t, runs[1])
	assertAudit(t, f.syncFixture, "agent.cancelled")
}

// TestLabelUnknownHarness: a repository that names a harness the service
// does not have is told so on the issue, with the names there are, and no
// ticket opens; with a known writer the label opens the ticket and queues
// the writer's first round.
func TestLabelUnknownHarness(t *testing.T) {
	f := newAgentFixture(t, "writer: scrbe\n", agent.IndependenceWarn)
	ctx := t.Context()
	f.gh.AddIssue("octo-org", "app", 8, "alice", "- [ ] counts")
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, agents: f.aq, log: f.sync.log}
	label := func() {
		t.Helper()
		a := issueDelivery(t, "labeled", map[string]any{"issue.number": 8, "label.name": "test-first"})
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	label()
	cs := f.gh.Comments("octo-org", "app", 8)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, `writer "scrbe": no such harness; want none or one of the service's harnesses: coder, scribe`) {
		t.Fatalf("comments on #8: %+v", cs)
	}
	f.gh.Commit("octo-org", "app", "main", map[string]string{"README.md": "base\n", ".github/testfirst.yml": "writer: scribe\n"})
	label()
	var runs []db.AgentRun
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		tk, err := tx.TicketByIssue(ctx, 30, 8)
		if err != nil {
			return err
		}
		runs, err = tx.AgentRuns(ctx, tk.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Role != pipeline.RoleWriter || runs[0].Harness != "scribe" || runs[0].Round != 1 || runs[0].JobID == 0 {
		t.Errorf("runs after the label: %+v", runs)
	}
	if cs := f.gh.Comments("octo-org", "app", 8); !strings.Contains(cs[len(cs)-1].Body, "The writer `scribe` is writing the hidden tests now") {
		t.Errorf("the opening comment does not say the writer is at work:\n%s", cs[len(cs)-1].Body)
	}
}

// TestWriterAfterImplementation: once a pull request closes the ticket,
// the writer does not run, unless the issue is reopened after it.
func TestWriterAfterImplementation(t *testing.T) {
	f := newAgentFixture(t, "writer: scribe\n", agent.IndependenceWarn)
	ctx := t.Context()
	f.runner.answer = func(agent.Request) agent.Result { return agent.Result{Tests: []tree.File{testFile}} }
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		return tx.UpsertPullRequest(ctx, db.PullRequest{RepositoryID: 30, Number: 9, HeadSHA: "abc", Author: "bob", Open: true, Links: []int{7}})
	}); err != nil {
		t.Fatal(err)
	}
	refused := f.work(t, f.startWriter(t))
	if refused.Outcome != pipeline.OutcomeRefused || !strings.Contains(refused.Error, "an implementation exists (pull request #9)") || len(f.runner.requests) != 0 {
		t.Fatalf("writer after a pull request: %+v, %d runs of the agent", refused, len(f.runner.requests))
	}
	time.Sleep(10 * time.Millisecond)
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		return audit(ctx, tx, "alice", f.ticket.ID, "ticket.reopened", nil)
	}); err != nil {
		t.Fatal(err)
	}
	if again := f.work(t, f.startWriter(t)); again.Outcome != pipeline.OutcomeDelivered || again.Round != 2 {
		t.Errorf("writer after the issue was reopened: %+v", again)
	}
}

// TestWriterRetriesInvalid: a writer's version that the base check finds
// invalid goes back to the writer as its next round, with the problems in
// counts (what the issue is told, never more); a second sync starts no
// second round; after agents.max_rounds invalid versions in a row the
// issue says people must push the tests, and no round starts.
func TestWriterRetriesInvalid(t *testing.T) {
	f := newAgentFixture(t, "writer: scribe\nagents:\n  max_rounds: 2\n", agent.IndependenceWarn)
	f.runner.answer = func(agent.Request) agent.Result {
		return agent.Result{Tests: []tree.File{testFile}, Criteria: map[string][]string{"counts": {"tests/test_count.py::test_count"}}}
	}
	const allPass = `{"tests":["tests/test_count.py::test_count"],"base":{"all_pass":true},"trust":"isolated"}`
	if w1 := f.work(t, f.startWriter(t)); w1.VersionNumber != 1 {
		t.Fatalf("round 1 = %+v", w1)
	}
	f.run(t)
	setCheck(t, f.syncFixture, 1, allPass)
	f.run(t)
	f.run(t)
	runs := f.runs(t)
	if len(runs) != 2 || runs[1].Round != 2 || runs[1].State != pipeline.AgentQueued ||
		runs[1].Feedback != pipeline.InvalidFeedbackPrefix+" (v1)\n- all 1 tests already pass on the base commit\n" {
		t.Fatalf("after v1 was found invalid: %+v; want round 2 queued with the problems", runs)
	}
	last := func() string { c := f.comments(); return c[len(c)-1] }
	if c := last(); !strings.Contains(c, "**v1** are not a valid task") || !strings.Contains(c, "The writer `scribe` takes this up in round 2.") {
		t.Errorf("the issue was told:\n%s", c)
	}
	if w2 := f.work(t, runs[1]); w2.VersionNumber != 2 || f.runner.requests[1].Task.Feedback != runs[1].Feedback {
		t.Fatalf("round 2 = %+v, its task's feedback %q", w2, f.runner.requests[1].Task.Feedback)
	}
	f.run(t)
	setCheck(t, f.syncFixture, 2, allPass)
	f.run(t)
	if runs := f.runs(t); len(runs) != 2 {
		t.Errorf("after the second invalid version in a row (agents.max_rounds 2): %d runs, want no third", len(runs))
	}
	if c := last(); !strings.Contains(c, "**v2** are not a valid task") || !strings.Contains(c, "wrote 2 versions in a row that were not valid") {
		t.Errorf("the issue was told:\n%s", c)
	}
}

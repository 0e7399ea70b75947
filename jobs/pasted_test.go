package jobs

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

const pastedHidden = `from counter import count_words


def test_counts_words_across_lines():
    text = "alpha beta\ngamma  delta\n\nepsilon"
    assert count_words(text) == 5
    assert count_words(text.upper()) == 5
    assert count_words("") == 0
`

// An issue comment with an approved hidden test pasted into it (renamed,
// reformatted) is recorded on the ticket, audited, and makes a grade
// contaminated naming the comment; an honest comment, and the same
// comment delivered again, add nothing.
func TestPastedCommentContaminatesGrades(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	w, v := approvedPasted(t, f, pastedHidden)
	comment := func(id, action, body, link string) {
		t.Helper()
		payload, _ := json.Marshal(map[string]any{"action": action, "installation": map[string]any{"id": 3},
			"repository": map[string]any{"id": 30, "name": "app", "default_branch": "main", "owner": map[string]any{"login": "octo-org", "type": "Organization"}},
			"issue":      map[string]any{"number": 7}, "comment": map[string]any{"body": body, "html_url": link, "user": map[string]any{"login": "mallory", "type": "User"}},
			"sender": map[string]any{"login": "mallory", "id": 99}})
		if err := w.issueComment(ctx, DeliveryArgs{Delivery: id, Event: "issue_comment", Action: action, Installation: 3, Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	sightings := func() []db.PastedSighting { return pastedSightings(t, f) }

	comment("honest", "created", "`count_words(\"a b\")` gives 1 on main:\n```\n>>> count_words(\"a b\")\n1\n```", "https://github.com/octo-org/app/issues/7#issuecomment-1")
	if s := sightings(); len(s) != 0 {
		t.Fatalf("an honest comment was taken for a paste: %+v", s)
	}
	rep := &report.Report{Verdict: report.VerdictPass}
	if err := applyPasted(ctx, f.d, f.ticket.ID, rep); err != nil || rep.Verdict != report.VerdictPass || rep.Contaminated {
		t.Fatalf("before the paste: %v, %+v", err, rep)
	}

	pasted := "Try this one:\n\n```python\ndef test_it():\n    s = (\n        \"alpha beta\\ngamma  delta\\n\\nepsilon\"\n    )\n" +
		"    assert count_words(s) == 5\n    assert count_words(s.upper()) == 5\n```"
	link := "https://github.com/octo-org/app/issues/7#issuecomment-2"
	comment("pasted", "edited", pasted, link)
	comment("pasted-again", "edited", pasted, link)
	s := sightings()
	if len(s) != 1 || s[0].Test != "test_counts_words_across_lines" || s[0].HiddenFile != "tests/test_count.py" || s[0].Version != v.Number ||
		s[0].SeenIn != "a comment on issue #7" || s[0].URL != link || s[0].Author != "mallory" || s[0].Matched == 0 {
		t.Fatalf("sightings after the paste: %+v", s)
	}
	var events []db.AuditEvent
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { var err error; events, err = tx.AuditLog(ctx, f.ticket.ID); return err }); err != nil {
		t.Fatal(err)
	}
	audited := 0
	for _, e := range events {
		if e.Kind == "tests.pasted" {
			audited++
		}
	}
	if audited != 1 {
		t.Errorf("tests.pasted audited %d times, want once", audited)
	}
	if err := applyPasted(ctx, f.d, f.ticket.ID, rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != report.VerdictContaminated || !rep.Contaminated || len(rep.Reasons) != 1 || !strings.Contains(rep.Reasons[0], link) ||
		strings.Contains(rep.Reasons[0], "test_counts_words") || strings.Contains(rep.Reasons[0], "epsilon") {
		t.Errorf("the grade after the paste: %+v; want contaminated, naming the comment and nothing of the test", rep)
	}
}

// The issue's own examples are the specification the tests were written
// from: a writer turns them into asserts, and quoting them again (the
// requester fixing a typo in the issue, a reviewer quoting it, the
// implementer's task, which carries the issue) pastes nothing hidden. Text
// added to the issue after the approval still counts.
func TestPastedIssueExamplesAreTheSpecification(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	example := "```python\n>>> words = count_words(\"alpha beta\\ngamma  delta\\n\\nepsilon\")\n>>> assert words == 5\n" +
		">>> assert count_words(\"alpha beta\\ngamma  delta\\n\\nepsilon\".upper()) == 5\n```"
	body := "count_words should count words across lines and blank lines:\n\n" + example + "\n"
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { return tx.SetTicketIssue(ctx, f.ticket.ID, "count words", body) }); err != nil {
		t.Fatal(err)
	}
	// The writer took the issue's example as it was.
	hidden := "from counter import count_words\n\n\ndef test_counts_words_across_lines():\n" +
		"    words = count_words(\"alpha beta\\ngamma  delta\\n\\nepsilon\")\n    assert words == 5\n" +
		"    assert count_words(\"alpha beta\\ngamma  delta\\n\\nepsilon\".upper()) == 5\n" +
		"    assert count_words(\"\") == 0\n    assert count_words(\"one\\ttwo\\u00a0three\") == 3\n" +
		"    assert count_words(\" leading and trailing \") == 3\n"
	w, _ := approvedPasted(t, f, hidden)
	var p repoPayload
	if err := json.Unmarshal([]byte(`{"installation":{"id":3},"repository":{"id":30,"name":"app","default_branch":"main","owner":{"login":"octo-org","type":"Organization"}}}`), &p); err != nil {
		t.Fatal(err)
	}
	var repo db.Repository
	if err := f.d.Tx(ctx, func(tx *db.Tx) error { var err error; repo, err = p.record(ctx, tx); return err }); err != nil {
		t.Fatal(err)
	}
	// edit is an edit of the issue as the delivery worker takes it: the
	// new text scanned, then kept as the ticket's.
	edit := func(newBody string) {
		t.Helper()
		if err := w.scanPasted(ctx, p, "count words\n"+newBody, pastedPlace{SeenIn: "the description of issue #7", Author: "alice"}); err != nil {
			t.Fatal(err)
		}
		if err := f.d.Tx(ctx, func(tx *db.Tx) error { return tx.SetTicketIssue(ctx, f.ticket.ID, "count words", newBody) }); err != nil {
			t.Fatal(err)
		}
	}
	sightings := func() []db.PastedSighting { return pastedSightings(t, f) }

	// The requester fixes a typo; a reviewer quotes the example; the
	// implementer's task carries the issue.
	edit(strings.Replace(body, "should count", "must count", 1))
	quote := "As the issue says:\n\n> " + strings.ReplaceAll(example, "\n", "\n> ") + "\n\nso the upper-case case must hold too."
	if _, err := w.pasted.scan(ctx, f.gi, repo, quote, pastedPlace{SeenIn: "a comment on pull request #9"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.pasted.scan(ctx, f.gi, repo, "count words\n"+body+"\n", pastedPlace{SeenIn: "the task of the implementer `bot`, round 1"}); err != nil {
		t.Fatal(err)
	}
	if s := sightings(); len(s) != 0 {
		t.Fatalf("the issue's own example was taken for a pasted hidden test: %+v", s)
	}

	// What the issue did not say, added after the approval, is a paste.
	edit(body + "\nAlso:\n```python\nassert count_words(\"\") == 0\nassert count_words(\"one\\ttwo\\u00a0three\") == 3\n" +
		"assert count_words(\" leading and trailing \") == 3\n```\n")
	if s := sightings(); len(s) != 1 || s[0].Test != "test_counts_words_across_lines" {
		t.Fatalf("the hidden lines added to the issue after the approval: sightings %+v, want one", s)
	}
}

// approvedPasted pushes hidden as tests/test_count.py, approves it, and
// returns a delivery worker whose pasted-test scanner reads the ticket.
func approvedPasted(t *testing.T, f *syncFixture, hidden string) (*DeliveryWorker, store.Version) {
	t.Helper()
	ctx := t.Context()
	v, err := f.w.Push(ctx, f.st, store.Draft{Author: "writer-bot", Files: []store.File{{Path: "tests/test_count.py", Data: []byte(hidden)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	clients := testkit.Clients(t, f.gh)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &DeliveryWorker{db: f.d, github: clients, pasted: newPastedScanner(f.d, f.w, clients, log), log: log}, v
}

// pastedSightings are the sightings kept on the fixture's ticket.
func pastedSightings(t *testing.T, f *syncFixture) []db.PastedSighting {
	t.Helper()
	return readTx(t, f.d, func(tx *db.Tx) ([]db.PastedSighting, error) { return tx.PastedSightings(t.Context(), f.ticket.ID) })
}

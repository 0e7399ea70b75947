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
	v, err := f.w.Push(ctx, f.st, store.Draft{Author: "writer-bot", Files: []store.File{{Path: "tests/test_count.py", Data: []byte(pastedHidden)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	clients := testkit.Clients(t, f.gh)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &DeliveryWorker{db: f.d, github: clients, pasted: newPastedScanner(f.d, f.w, clients, log), log: log}
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
	sightings := func() []db.PastedSighting {
		t.Helper()
		var out []db.PastedSighting
		if err := f.d.Tx(ctx, func(tx *db.Tx) error { var err error; out, err = tx.PastedSightings(ctx, f.ticket.ID); return err }); err != nil {
			t.Fatal(err)
		}
		return out
	}

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

package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pasted"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// pastedScanner compares text that reaches testfirst (issue bodies,
// comments, pull request descriptions and reviews, an implementer's task)
// with the approved hidden tests of the repository's tickets, as the card
// shows them (canary masked), and records a match on the ticket whose
// tests matched: every grade of it from then on is contaminated. A nil
// *pastedScanner (a service without the store) scans nothing.
type pastedScanner struct {
	db     *db.DB
	store  *store.Writer
	github installationClients
	log    *slog.Logger

	mu sync.Mutex
	// indexes are the tickets' indexes by ticket id, each with the key
	// it was built from (the issue's text and the approved versions'
	// digests): hidden tests and the base never change for a digest, so
	// an index is built again only when the issue's text or the approved
	// versions change.
	indexes map[int64]keyedIndex
}

func newPastedScanner(d *db.DB, w *store.Writer, gh installationClients, log *slog.Logger) *pastedScanner {
	if w == nil {
		return nil
	}
	return &pastedScanner{db: d, store: w, github: gh, log: log, indexes: map[int64]keyedIndex{}}
}

// keyedIndex is a ticket's index and what it was built from: the issue's
// text and the approved versions' digests.
type keyedIndex struct {
	key string
	ix  *pasted.Index
}

// pastedPlace is where a text was read: a description for the card, the
// check run and the audit log, a link, and its author.
type pastedPlace struct {
	SeenIn string
	URL    string
	Author string
}

// scan compares text with the approved hidden tests of every ticket of
// repo and records each match. It returns the sightings it recorded now.
func (s *pastedScanner) scan(ctx context.Context, gi *github.Installation, repo db.Repository, text string, at pastedPlace) ([]db.PastedSighting, error) {
	if s == nil || strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var tickets []db.Ticket
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		tickets, err = tx.RepositoryTickets(ctx, repo.ID)
		return err
	}); err != nil {
		return nil, err
	}
	var found []db.PastedSighting
	for _, tk := range tickets {
		ix, err := s.index(ctx, gi, repo, tk)
		if err != nil {
			return nil, err
		}
		if ix == nil {
			continue
		}
		for _, m := range ix.Find(text) {
			var version int
			fmt.Sscanf(m.Label, "v%d", &version)
			found = append(found, db.PastedSighting{TicketID: tk.ID, SeenIn: at.SeenIn, URL: at.URL, Author: at.Author, Version: version,
				HiddenFile: m.Path, Test: m.Test, Matched: m.Matched, Of: m.Of, FirstLine: m.FirstLine, LastLine: m.LastLine})
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	var recorded []db.PastedSighting
	err := s.db.Tx(ctx, func(tx *db.Tx) error {
		recorded = recorded[:0]
		for _, f := range found {
			created, err := tx.AddPastedSighting(ctx, f)
			if err != nil {
				return err
			}
			if !created {
				continue
			}
			recorded = append(recorded, f)
			if err := audit(ctx, tx, "testfirst", f.TicketID, "tests.pasted", map[string]any{"seen_in": f.SeenIn, "url": f.URL, "author": f.Author,
				"version": f.Version, "hidden_file": f.HiddenFile, "test": f.Test, "matched": f.Matched, "of": f.Of,
				"lines": fmt.Sprintf("%d-%d", f.FirstLine, f.LastLine)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range recorded {
		s.log.WarnContext(ctx, "hidden test pasted", "ticket", f.TicketID, "seen_in", f.SeenIn, "version", f.Version, "hidden_file", f.HiddenFile,
			"test", f.Test, "matched", f.Matched, "of", f.Of)
	}
	return recorded, nil
}

// index is the index of a ticket's approved versions against its base,
// nil when it has none.
func (s *pastedScanner) index(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) (*pasted.Index, error) {
	st := storeTicket(repo, tk.IssueNumber)
	vs, err := s.store.Versions(ctx, st)
	if err != nil {
		return nil, err
	}
	// The issue as the ticket holds it is the specification the tests
	// were written from (an edit is scanned before it is kept): a writer
	// turns its examples into asserts, and quoting them pastes nothing
	// hidden. Its text joins the base the new shingles are counted
	// against, and a new text of the issue makes a new index.
	issue := tk.Title + "\n" + tk.Body
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(issue)))
	var approved []store.Version
	for _, v := range vs {
		if v.Decision != nil && v.Decision.Approved {
			approved = append(approved, v)
			key += " " + v.Digest
		}
	}
	if len(approved) == 0 {
		return nil, nil
	}
	s.mu.Lock()
	cached, ok := s.indexes[tk.ID]
	s.mu.Unlock()
	if ok && cached.key == key {
		return cached.ix, nil
	}
	var hidden []pasted.Hidden
	for _, v := range approved {
		card, err := s.store.Card(ctx, st, v.Number)
		if err != nil {
			return nil, err
		}
		for _, f := range card.Files {
			if strings.HasSuffix(f.Path, ".py") {
				hidden = append(hidden, pasted.Hidden{Label: fmt.Sprintf("v%d", v.Number), Path: f.Path, Source: string(f.Data)})
			}
		}
	}
	files := [][]byte{[]byte(issue)}
	if tk.BaseSHA != "" {
		t, err := downloadTree(ctx, gi, repo, tk.BaseSHA)
		if err != nil {
			return nil, retryOrCancel(err)
		}
		for _, f := range t.Files {
			files = append(files, f.Data)
		}
	}
	ix := pasted.NewIndex(hidden, pasted.NewBase(files, pasted.Default), pasted.Default)
	s.mu.Lock()
	s.indexes[tk.ID] = keyedIndex{key, ix}
	s.mu.Unlock()
	return ix, nil
}

// scanPasted reads text of a delivery for pasted hidden tests.
func (w *DeliveryWorker) scanPasted(ctx context.Context, p repoPayload, text string, at pastedPlace) error {
	if w.pasted == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	var repo db.Repository
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		repo, err = p.record(ctx, tx)
		return err
	}); err != nil {
		return err
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	recorded, err := w.pasted.scan(ctx, gi, repo, text, at)
	if err != nil || len(recorded) == 0 || w.grades == nil {
		return err
	}
	// The open pull requests of each ticket marked now are graded again:
	// their grades so far did not know, the new ones are contaminated.
	seen := map[int64]bool{}
	for _, r := range recorded {
		if seen[r.TicketID] {
			continue
		}
		seen[r.TicketID] = true
		var (
			tk  db.Ticket
			prs []db.PullRequest
		)
		if err := w.db.Tx(ctx, func(tx *db.Tx) error {
			var err error
			if tk, err = tx.Ticket(ctx, r.TicketID); err != nil {
				return err
			}
			prs, err = tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
			return err
		}); err != nil {
			return err
		}
		for _, pr := range prs {
			if _, err := w.grades.gradeTicket(ctx, gi, repo, tk, pr.Number, pr.HeadSHA, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// reviewPayload is the part of a pull_request_review or
// pull_request_review_comment payload the worker reads.
type reviewPayload struct {
	repoPayload
	PullRequest struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Review  pastedText `json:"review"`
	Comment pastedText `json:"comment"`
}

// pastedText is a text GitHub delivers, with its link and author (and a
// review's state).
type pastedText struct {
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	State   string `json:"state"`
	User    struct {
		Login string `json:"login"`
	} `json:"user"`
}

// review reads a pull request review's text for pasted hidden tests; an
// approving review submitted enqueues the keep_tests job of each ticket
// the pull request closes, which reads the reviews from GitHub itself.
func (w *DeliveryWorker) review(ctx context.Context, a DeliveryArgs) error {
	var p reviewPayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if err := w.scanPasted(ctx, p.repoPayload, p.Review.Body, pastedPlace{SeenIn: fmt.Sprintf("a review of pull request #%d", p.PullRequest.Number),
		URL: p.Review.HTMLURL, Author: p.Review.User.Login}); err != nil {
		return err
	}
	if a.Action != "submitted" || !strings.EqualFold(p.Review.State, "approved") || !w.keeps {
		return nil
	}
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		repo, err := p.record(ctx, tx)
		if err != nil {
			return err
		}
		return enqueueKeep(ctx, tx, repo.ID, p.PullRequest.Number)
	})
}

// reviewComment reads a pull request review comment for pasted hidden
// tests.
func (w *DeliveryWorker) reviewComment(ctx context.Context, a DeliveryArgs) error {
	var p reviewPayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	return w.scanPasted(ctx, p.repoPayload, p.Comment.Body, pastedPlace{SeenIn: fmt.Sprintf("a review comment on pull request #%d", p.PullRequest.Number),
		URL: p.Comment.HTMLURL, Author: p.Comment.User.Login})
}

// applyPasted makes a grade contaminated when a hidden test of its ticket
// was seen pasted, naming where (the check run says it; what matched is on
// the card).
func applyPasted(ctx context.Context, d *db.DB, ticketID int64, rep *report.Report) error {
	var pastes []db.PastedSighting
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		pastes, err = tx.PastedSightings(ctx, ticketID)
		return err
	}); err != nil {
		return err
	}
	if len(pastes) == 0 {
		return nil
	}
	var reasons []string
	seen := map[string]bool{}
	for _, p := range pastes {
		if seen[p.SeenIn+p.URL] {
			continue
		}
		seen[p.SeenIn+p.URL] = true
		reasons = append(reasons, pipeline.PastedReason(p.SeenIn, p.URL))
	}
	rep.Contaminated, rep.Verdict = true, report.VerdictContaminated
	rep.Reasons = append(reasons, rep.Reasons...)
	return nil
}

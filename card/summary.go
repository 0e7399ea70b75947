package card

import (
	"context"
	"fmt"
	"slices"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
)

// Summary implements handlers.Cards: the ticket as anyone who can read its
// repository may know it. It holds what the check runs and the issue's
// comments already say, the approved version's test ids and criteria,
// never a test body, a reference patch or a rejection's reason; the test
// ids of a version not approved are not in it.
func (s *Service) Summary(ctx context.Context, viewer string, ref handlers.TicketRef) (*handlers.TicketSummary, error) {
	ct, err := s.resolveFor(ctx, viewer, ref, pipeline.MaySeeCheck)
	if err != nil {
		return nil, err
	}
	vs, err := s.store.Versions(ctx, ct.st)
	if err != nil {
		return nil, err
	}
	sum := &handlers.TicketSummary{Ticket: s.ticketInfo(ct)}
	approved := slices.IndexFunc(vs, func(v store.Version) bool { return v.State == store.StateApproved })
	var (
		newest  versionState
		checked versionState
		pulls   []db.PullRequest
		grades  = map[string][]db.Grade{}
	)
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if len(vs) > 0 {
			if newest, err = s.versionState(ctx, tx, ct.tk.ID, vs[len(vs)-1].Number); err != nil {
				return err
			}
		}
		if approved >= 0 {
			if checked, err = s.versionState(ctx, tx, ct.tk.ID, vs[approved].Number); err != nil {
				return err
			}
		}
		if pulls, err = tx.OpenPullsClosing(ctx, ct.repo.ID, ct.tk.IssueNumber); err != nil {
			return err
		}
		pastes, err := tx.PastedSightings(ctx, ct.tk.ID)
		if err != nil {
			return err
		}
		for _, p := range pastes {
			place := handlers.PastedPlace{SeenIn: p.SeenIn, URL: p.URL}
			if !slices.Contains(sum.PastedIn, place) {
				sum.PastedIn = append(sum.PastedIn, place)
			}
		}
		for _, pr := range pulls {
			if grades[pr.HeadSHA], err = tx.GradesOfHead(ctx, pr.HeadSHA); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}

	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		item := handlers.HistoryItem{Number: v.Number, State: string(v.State), Author: v.Author, Created: v.Created, Digest: v.Digest}
		if d := v.Decision; d != nil {
			// The reason of a rejection stays on the card.
			item.Decision = &handlers.DecisionInfo{Approved: d.Approved, By: d.By, At: d.At}
		}
		if i == len(vs)-1 && v.State == store.StatePending && newest.check != nil && !newest.check.Valid() {
			item.Invalid = true
		}
		sum.Versions = append(sum.Versions, item)
	}

	if len(vs) > 0 {
		sum.Newest = vs[len(vs)-1].Number
	}
	issue := pipeline.ParseCriteria(ct.tk.Body)
	if approved < 0 {
		var st *pipeline.VersionStatus
		if len(vs) > 0 {
			v := vs[len(vs)-1]
			st = &pipeline.VersionStatus{Number: v.Number, State: pipeline.VersionState(v.State), Check: newest.check}
		}
		sum.Waiting = pipeline.WaitingFor(st)
		sum.Criteria = criteriaView(issue)
	} else {
		v := vs[approved]
		card, err := s.store.Card(ctx, ct.st, v.Number)
		if err != nil {
			return nil, fmt.Errorf("summary of %s: the approved version's criteria: %w", ct.st, err)
		}
		var known []string
		if checked.check != nil {
			known = checked.check.Tests
		}
		cov := pipeline.CoverageOf(issue, card.Criteria, known)
		sum.Criteria = criteriaView(cov.Rows)
		a := &handlers.ApprovedSummary{Number: v.Number, Digest: v.Digest}
		if v.Decision != nil {
			a.By = v.Decision.By
		}
		byTest := cov.ByTest()
		for _, id := range known {
			a.Tests = append(a.Tests, handlers.TestInfo{ID: id, Criteria: byTest[id]})
		}
		sum.Approved = a
	}

	for _, pr := range pulls {
		p := handlers.PullSummary{Number: pr.Number, Head: pr.HeadSHA,
			URL: fmt.Sprintf("%s%s/%s/pull/%d", s.webURL, ct.repo.Owner, ct.repo.Name, pr.Number)}
		for _, g := range grades[pr.HeadSHA] {
			if g.TicketID == ct.tk.ID {
				p.Grade, p.Version, p.State, p.Verdict, p.Passed, p.Total = g.ID, g.VersionNumber, string(g.State), string(g.Verdict), g.Passed, g.Total
			}
		}
		sum.Pulls = append(sum.Pulls, p)
	}
	return sum, nil
}

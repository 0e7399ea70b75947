package card

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
)

// decisionSourceCard is the source the card records with its decisions:
// a person signed in with GitHub, on the card.
const decisionSourceCard = "card"

// Audit implements handlers.Cards: the ticket's audit log, newest first,
// for those who may see its card.
func (s *Service) Audit(ctx context.Context, viewer string, ref handlers.TicketRef, f handlers.AuditFilter) (*handlers.AuditPage, error) {
	ct, err := s.resolve(ctx, viewer, ref)
	if err != nil {
		return nil, err
	}
	var es []db.AuditEvent
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		es, err = tx.AuditLog(ctx, ct.tk.ID)
		return err
	}); err != nil {
		return nil, err
	}
	info := s.ticketInfo(ct)
	page := &handlers.AuditPage{Owner: ct.repo.Owner, Repo: ct.repo.Name, Ticket: &info}
	if strings.ToLower(ct.perm) == pipeline.PermAdmin {
		page.RepoAudit = pipeline.RepoAuditPath(ct.repo.Owner, ct.repo.Name)
	}
	s.fillAudit(page, es, func(int64) int { return ct.tk.IssueNumber }, f)
	return page, nil
}

// RepoAudit implements handlers.Cards: the audit log of every ticket of a
// repository, for its admins only.
func (s *Service) RepoAudit(ctx context.Context, viewer, owner, repo string, f handlers.AuditFilter) (*handlers.AuditPage, error) {
	var r db.Repository
	err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		r, err = tx.RepositoryByName(ctx, owner, repo)
		return err
	})
	if errors.Is(err, db.ErrNotFound) || (err == nil && !r.RemovedAt.IsZero()) {
		return nil, handlers.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	perm, err := s.permission(ctx, r, viewer)
	if err != nil {
		return nil, err
	}
	if strings.ToLower(perm) != pipeline.PermAdmin {
		return nil, handlers.ErrNotFound
	}
	var (
		es     []db.AuditEvent
		issues map[int64]int
	)
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		es, issues, err = tx.RepositoryAuditLog(ctx, r.ID)
		return err
	}); err != nil {
		return nil, err
	}
	page := &handlers.AuditPage{Owner: r.Owner, Repo: r.Name}
	s.fillAudit(page, es, func(id int64) int { return issues[id] }, f)
	return page, nil
}

// fillAudit fills page with the events f selects, newest first, and the
// filter's choices.
func (s *Service) fillAudit(page *handlers.AuditPage, es []db.AuditEvent, issue func(ticketID int64) int, f handlers.AuditFilter) {
	page.Filter, page.Total = f, len(es)
	kinds, actors := map[string]bool{}, map[string]bool{}
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		kinds[e.Kind], actors[e.Actor] = true, true
		if f.Kind != "" && e.Kind != f.Kind && !strings.HasPrefix(e.Kind, strings.TrimSuffix(f.Kind, ".")+".") {
			continue
		}
		if f.Actor != "" && !strings.EqualFold(e.Actor, f.Actor) {
			continue
		}
		ref := handlers.TicketRef{Owner: page.Owner, Repo: page.Repo, Issue: issue(e.TicketID)}
		page.Events = append(page.Events, s.auditRow(e, ref))
	}
	for k := range kinds {
		page.Kinds = append(page.Kinds, k)
	}
	for a := range actors {
		page.Actors = append(page.Actors, a)
	}
	slices.Sort(page.Kinds)
	slices.Sort(page.Actors)
}

// auditRow is one event as the audit page shows it: its details as facts,
// canary-shaped tokens masked, decisions with where they were taken, and
// links to what it concerns.
func (s *Service) auditRow(e db.AuditEvent, ref handlers.TicketRef) handlers.AuditRow {
	row := handlers.AuditRow{At: e.At, Actor: e.Actor, Kind: e.Kind, Ticket: ref}
	var detail map[string]any
	json.Unmarshal(e.Detail, &detail)
	if e.Kind == "version.approved" || e.Kind == "version.rejected" || e.Kind == "version.signed" {
		if detail["source"] == decisionSourceCard {
			detail["source"] = "the card, signed in with GitHub"
		} else if detail["source"] == nil {
			detail["source"] = "the store, outside the card: not proven to be " + e.Actor
		}
	}
	names := make([]string, 0, len(detail))
	for k := range detail {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		row.Facts = append(row.Facts, handlers.AuditFact{Name: strings.ReplaceAll(k, "_", " "), Value: maskCanaries(factValue(detail[k]))})
	}
	row.Links = append(row.Links, handlers.AuditLink{Text: "card", URL: ref.Path()})
	if k, ok := detail["version"].(float64); ok && k > 0 {
		row.Links = append(row.Links, handlers.AuditLink{Text: fmt.Sprintf("v%d", int(k)), URL: ref.VersionPath(int(k))})
	}
	if g, ok := detail["grade"].(float64); ok && g > 0 {
		row.Links = append(row.Links, handlers.AuditLink{Text: fmt.Sprintf("grade %d", int64(g)), URL: pipeline.GradePath(int64(g))})
	}
	if pr, ok := detail["pull_request"].(float64); ok && pr > 0 {
		row.Links = append(row.Links, handlers.AuditLink{Text: fmt.Sprintf("#%d", int(pr)), URL: fmt.Sprintf("%s%s/%s/pull/%d", s.webURL, ref.Owner, ref.Repo, int(pr))})
	}
	return row
}

// factValue writes one detail's value for people.
func factValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = factValue(e)
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

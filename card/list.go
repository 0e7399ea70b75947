package card

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
)

// cardListMax bounds the tickets the list looks at.
const cardListMax = 200

// Tickets implements handlers.Cards: the open tickets viewer may see,
// newest first, with what each waits for. It reads the database's mirror
// of the store, so a version appears once the store sync recorded it.
func (s *Service) Tickets(ctx context.Context, viewer string) ([]handlers.TicketItem, error) {
	var open []db.RepoTicket
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		open, err = tx.OpenTickets(ctx, cardListMax)
		return err
	}); err != nil {
		return nil, err
	}
	var out []handlers.TicketItem
	for _, rt := range open {
		ct := cardTicket{repo: rt.Repo, tk: rt.Ticket}
		ok, err := s.authorize(ctx, viewer, &ct, pipeline.MayView)
		if err != nil {
			// GitHub did not answer for this repository: leave its
			// tickets out rather than the whole list.
			s.log.WarnContext(ctx, "card list: permission unknown", "repo", rt.Repo.Owner+"/"+rt.Repo.Name, "ticket", rt.ID, "err", err)
			continue
		}
		if !ok {
			continue
		}
		item := handlers.TicketItem{Ref: ct.ref, Title: rt.Title, Requester: rt.Requester, State: string(rt.State), Created: rt.CreatedAt}
		if err := s.waiting(ctx, viewer, ct, &item); err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

// waiting fills in the ticket's newest version and what it waits for.
func (s *Service) waiting(ctx context.Context, viewer string, ct cardTicket, item *handlers.TicketItem) error {
	var (
		vs   []db.Version
		sigs []db.Approval
	)
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if vs, err = tx.Versions(ctx, ct.tk.ID); err != nil || len(vs) == 0 {
			return err
		}
		sigs, err = tx.Approvals(ctx, vs[len(vs)-1].ID)
		return err
	}); err != nil {
		return err
	}
	if len(vs) == 0 {
		item.Waiting = "hidden tests from the writer"
		return nil
	}
	v := vs[len(vs)-1]
	item.Newest, item.NewestState = v.Number, string(v.State)
	cfg := pipeline.DefaultRepoConfig()
	if c, err := s.repoConfig(ctx, ct.repo); err == nil && c.ParseError == nil {
		cfg = c.Config
	}
	states := make([]pipeline.VersionState, len(vs))
	for i, x := range vs {
		states[i] = x.State
	}
	rejected := pipeline.Rejections(states)
	switch v.State {
	case pipeline.VersionApproved:
		item.Waiting = "pull requests that fix the issue"
	case pipeline.VersionRejected:
		if cfg.RejectionCapReached(rejected) {
			item.Waiting = fmt.Sprintf("a person to pair on it: stopped after %d rejections", rejected)
		} else {
			item.Waiting = fmt.Sprintf("a new version after the rejection of v%d", v.Number)
		}
	default:
		if v.ReadyAt.IsZero() {
			item.Waiting = fmt.Sprintf("the base check of v%d", v.Number)
			return nil
		}
		signed := signers(sigs)
		mine := slices.ContainsFunc(signed, viewerAccount(ctx, viewer).Same)
		byRequester := slices.ContainsFunc(signed, requesterAccount(ct.tk).Same)
		switch {
		case cfg.Policy != pipeline.PolicyEnforce:
			item.Waiting, item.OnViewer = fmt.Sprintf("your review of v%d", v.Number), true
			if !ct.requester {
				item.Waiting, item.OnViewer = fmt.Sprintf("review of v%d by %s (you may decide too)", v.Number, ct.tk.Requester), ct.decides()
				if !ct.decides() {
					item.Waiting = fmt.Sprintf("review of v%d by %s", v.Number, ct.tk.Requester)
				}
			}
		case mine:
			item.Waiting = fmt.Sprintf("a second approver for v%d", v.Number)
		case ct.requester:
			item.Waiting, item.OnViewer = fmt.Sprintf("your review of v%d", v.Number), true
		case len(signed) > 0 && !byRequester:
			item.Waiting = fmt.Sprintf("%s's review of v%d", ct.tk.Requester, v.Number)
		default:
			item.Waiting, item.OnViewer = fmt.Sprintf("your signature on v%d as second approver", v.Number), pipeline.HasWriteAccess(ct.perm)
		}
	}
	return nil
}

// configProblemsLooked bounds the config errors the home page looks at.
const configProblemsLooked = 100

// ConfigProblems implements handlers.Cards: the repositories whose config
// error was said on an issue, that viewer administers or maintains, and
// whose file (read again, kept a minute) is still broken: the admin sees
// it on the app's home page, not only on an issue.
func (s *Service) ConfigProblems(ctx context.Context, viewer string) ([]handlers.ConfigProblem, error) {
	var events []db.AuditEvent
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		events, err = tx.RecentAudit(ctx, pipeline.AuditConfigError, configProblemsLooked)
		return err
	}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []handlers.ConfigProblem
	for _, e := range events {
		var d struct {
			Owner, Repo string
			Issue       int
		}
		if json.Unmarshal(e.Detail, &d) != nil || d.Owner == "" {
			continue
		}
		key := strings.ToLower(d.Owner + "/" + d.Repo)
		if seen[key] {
			continue // the newest says it
		}
		seen[key] = true
		var repo db.Repository
		if err := s.db.Tx(ctx, func(tx *db.Tx) error {
			var err error
			repo, err = tx.RepositoryByName(ctx, d.Owner, d.Repo)
			return err
		}); err != nil || !repo.RemovedAt.IsZero() {
			continue
		}
		perm, err := s.permission(ctx, repo, viewer)
		if err != nil || (perm != pipeline.PermAdmin && perm != pipeline.PermMaintain) {
			continue
		}
		fc, err := s.repoConfig(ctx, repo)
		if err != nil || fc.ParseError == nil {
			continue // fixed since, or unknown now
		}
		out = append(out, handlers.ConfigProblem{Owner: repo.Owner, Repo: repo.Name, Error: fc.ParseError.Error(), Issue: d.Issue,
			IssueURL: fmt.Sprintf("%s%s/%s/issues/%d", s.webURL, repo.Owner, repo.Name, d.Issue)})
	}
	return out, nil
}

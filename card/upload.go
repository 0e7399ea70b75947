package card

import (
	"context"
	"strings"

	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
)

// UploadForm implements handlers.Cards: the criteria to map, for
// those who may upload (the requester, maintainers, admins).
func (s *Service) UploadForm(ctx context.Context, viewer string, ref handlers.TicketRef) (*handlers.UploadPage, error) {
	ct, err := s.resolve(ctx, viewer, ref)
	if err != nil {
		return nil, err
	}
	if !ct.decides() {
		return nil, handlers.Refusef("Only the requester, %s, and the repository's maintainers and admins upload tests for this ticket.", ct.tk.Requester)
	}
	vs, err := s.store.Versions(ctx, ct.st)
	if err != nil {
		return nil, err
	}
	page := &handlers.UploadPage{Ticket: s.ticketInfo(ct), Criteria: criteriaView(pipeline.ParseCriteria(ct.tk.Body))}
	if len(vs) == 0 {
		return page, nil
	}
	// The next version starts from the newest one: its criteria map and
	// its reference patch, as its card copy holds them.
	page.Newest = vs[len(vs)-1].Number
	c, err := s.store.Card(ctx, ct.st, page.Newest)
	if err != nil {
		return nil, err
	}
	page.HasReference = len(c.Reference) > 0
	for _, cr := range page.Criteria {
		if ids := c.Criteria[cr.ID]; len(ids) > 0 {
			if page.Mapped == nil {
				page.Mapped = map[string]string{}
			}
			page.Mapped[cr.ID] = strings.Join(ids, " ")
		}
	}
	return page, nil
}

// Upload implements handlers.Cards: the uploaded files become the
// ticket's next version through the store's Writer, as tests push makes
// one, written by the viewer; the store sync then mirrors it and starts
// its base check.
func (s *Service) Upload(ctx context.Context, viewer string, ref handlers.TicketRef, u handlers.Upload) (int, error) {
	ct, err := s.resolveToAct(ctx, viewer, ref)
	if err != nil {
		return 0, err
	}
	if !ct.decides() {
		return 0, handlers.Refusef("Only the requester, %s, and the repository's maintainers and admins upload tests for this ticket.", ct.tk.Requester)
	}
	d := store.Draft{Author: viewer, Criteria: u.Criteria, Reference: u.Reference}
	if len(d.Reference) == 0 && u.KeepReferenceOf > 0 {
		c, err := s.store.Card(ctx, ct.st, u.KeepReferenceOf)
		if err != nil {
			return 0, err
		}
		d.Reference = c.Reference
	}
	for _, f := range u.Files {
		d.Files = append(d.Files, store.File{Path: f.Path, Data: f.Data})
	}
	v, err := s.store.Push(ctx, ct.st, d)
	if err != nil {
		// The store says what is wrong with the draft (a canary line, a
		// file too large, two files of one path).
		return 0, handlers.Refusef("The store refused the version: %v.", err)
	}
	s.log.InfoContext(ctx, "card upload", "ticket", ct.tk.ID, "repo", ct.repo.Owner+"/"+ct.repo.Name, "version", v.Number, "digest", v.Digest, "login", viewer, "files", len(d.Files))
	s.callHook(ctx, ct.tk.ID)
	return v.Number, nil
}

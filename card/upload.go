package card

import (
	"context"

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
	if len(vs) > 0 {
		page.Newest = vs[len(vs)-1].Number
	}
	return page, nil
}

// Upload implements handlers.Cards: the uploaded files become the
// ticket's next version through the store's Writer, as tests push makes
// one, written by the viewer; the store sync then mirrors it and starts
// its base check.
func (s *Service) Upload(ctx context.Context, viewer string, ref handlers.TicketRef, u handlers.Upload) (int, error) {
	ct, err := s.resolve(ctx, viewer, ref)
	if err != nil {
		return 0, err
	}
	if !ct.decides() {
		return 0, handlers.Refusef("Only the requester, %s, and the repository's maintainers and admins upload tests for this ticket.", ct.tk.Requester)
	}
	d := store.Draft{Author: viewer, Criteria: u.Criteria, Reference: u.Reference}
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

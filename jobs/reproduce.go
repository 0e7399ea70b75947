package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// gradedTests is what reproducing a grade reads of the store.
type gradedTests interface {
	// OpenGraded opens the version approved with digest, even once
	// superseded; it refuses a version never approved.
	OpenGraded(ctx context.Context, t store.Ticket, digest string) (*store.Content, store.Version, error)
}

// Reproducer grades recorded grades again from what the database
// records of them: the head and base commits (fetched again from GitHub by
// SHA with the installation token, as the grade job does), the approved
// version's digest (opened again from the store) and the grader image's id
// (from the recorded report; the engine must still have that image).
type Reproducer struct {
	db      *db.DB
	github  installationClients
	tests   gradedTests
	grader  *grader.Grader
	imageID string
	engine  ImageEngine
}

// ImageEngine is the sandbox engine a reproduction runs on: it must still
// hold the image a grade ran in.
type ImageEngine interface {
	grader.Sandbox
	// ImageID returns the id of the image ref names, or an error when the
	// engine does not have it.
	ImageID(ctx context.Context, ref string) (string, error)
}

// NewReproducer returns a reproducer over the service's database, GitHub
// App clients, hidden-test store, and the current grader (running image
// imageID) on engine.
func NewReproducer(d *db.DB, clients *github.Clients, tests *store.Reader, g *grader.Grader, imageID string, engine ImageEngine) *Reproducer {
	return &Reproducer{db: d, github: clients, tests: tests, grader: g, imageID: imageID, engine: engine}
}

// Reproduce grades grade id again and compares it with its recorded
// report. It returns an error when the grade is not completed or has no
// report, when a tree, the hidden tests or the grader image cannot be had
// again, or when the engine fails.
func (p *Reproducer) Reproduce(ctx context.Context, id int64) (*report.Reproduction, error) {
	var (
		g    db.Grade
		tk   db.Ticket
		repo db.Repository
		raw  json.RawMessage
	)
	if err := p.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if g, err = tx.Grade(ctx, id); err != nil {
			return err
		}
		if tk, err = tx.Ticket(ctx, g.TicketID); err != nil {
			return err
		}
		if repo, err = tx.Repository(ctx, tk.RepositoryID); err != nil {
			return err
		}
		raw, err = tx.GradeReport(ctx, id)
		return err
	}); err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	if g.State != pipeline.GradeCompleted || len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("reproduce grade %d: it is %s with no recorded report: only a completed grade's report can be reproduced", id, g.State)
	}
	var recorded report.Report
	if err := json.Unmarshal(raw, &recorded); err != nil {
		return nil, fmt.Errorf("reproduce grade %d: read its report: %w", id, err)
	}
	gi, err := p.github.Installation(repo.InstallationID)
	if err != nil {
		return nil, err
	}
	base, err := downloadTree(ctx, gi, repo, tk.BaseSHA)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: fetch base %s: %w", id, tk.BaseSHA, err)
	}
	head, err := downloadTree(ctx, gi, repo, g.HeadSHA)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: fetch head %s: %w", id, g.HeadSHA, err)
	}
	st := store.Ticket{Installation: repo.InstallationID, Owner: repo.Owner, Repo: repo.Name, Issue: tk.IssueNumber}
	content, _, err := p.tests.OpenGraded(ctx, st, g.Digest)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	hidden, err := content.HiddenTree()
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	// The recorded report names the timeout and limits it ran with; the
	// repository's configuration now is only for reports that do not.
	fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	switch {
	case fc.LoadError != nil:
		return nil, fmt.Errorf("reproduce grade %d: %w", id, fc.LoadError)
	case fc.ParseError != nil:
		return nil, fmt.Errorf("reproduce grade %d: %w", id, fc.ParseError)
	}
	cfg := fc.Config
	gr, err := p.graderFor(ctx, recorded.Image)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	rp, err := gr.Reproduce(ctx, grader.Request{Repo: head, Hidden: hidden, Base: base, Reference: content.Reference,
		TestsDigest: g.Digest, Timeout: cfg.Timeout, Limits: sandboxLimits(cfg),
		Python: cfg.Python, Mirror: cfg.Network == report.NetworkMirror, TrustedCollection: true}, &recorded)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	return rp, nil
}

// graderFor returns a grader that runs the image with id imageID: the
// current one, or an older one the engine still has.
func (p *Reproducer) graderFor(ctx context.Context, imageID string) (*grader.Grader, error) {
	if imageID == p.imageID {
		return p.grader, nil
	}
	if imageID == "" {
		return nil, errors.New("the recorded report names no grader image")
	}
	got, err := p.engine.ImageID(ctx, imageID)
	if err != nil || got != imageID {
		return nil, fmt.Errorf("the grader image %s the grade ran in is not on this engine (the current image is %s): a grade can only be reproduced where its image is kept", imageID, p.imageID)
	}
	return grader.New(p.engine, imageID, imageID), nil
}

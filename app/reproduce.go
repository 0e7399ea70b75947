package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/store"
)

// gradedTests is what reproducing a grade reads of the store.
type gradedTests interface {
	// OpenGraded opens the version approved with digest, even once
	// superseded; it refuses a version never approved.
	OpenGraded(ctx context.Context, t store.Ticket, digest string) (*store.Content, store.Version, error)
}

// GradeReproducer grades recorded grades again from what the database
// records of them: the head and base commits (fetched again from GitHub by
// SHA with the installation token, as the grade job does), the approved
// version's digest (opened again from the store) and the grader image's id
// (from the recorded report; the engine must still have that image).
type GradeReproducer struct {
	db      *db.DB
	github  installationClients
	tests   gradedTests
	grading *Grading
}

// NewGradeReproducer returns a reproducer over the service's database,
// GitHub App clients, hidden-test store and sandbox engine.
func NewGradeReproducer(d *db.DB, clients *github.Clients, tests *store.Reader, g *Grading) *GradeReproducer {
	return &GradeReproducer{db: d, github: clients, tests: tests, grading: g}
}

// GradeReproduction is a recorded grade beside the same grade made again.
type GradeReproduction struct{ rp *grader.Reproduction }

// Same reports whether the new grade has the recorded verdict, counts and
// outcomes.
func (r *GradeReproduction) Same() bool { return r.rp.Same }

// WriteText writes both reports side by side.
func (r *GradeReproduction) WriteText(w io.Writer) error { return grader.WriteSideBySide(w, r.rp) }

// WriteJSON writes both reports and their differences, indented.
func (r *GradeReproduction) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.rp)
}

// Reproduce grades grade id again and compares it with its recorded
// report. It returns an error when the grade is not completed or has no
// report, when a tree, the hidden tests or the grader image cannot be had
// again, or when the engine fails.
func (p *GradeReproducer) Reproduce(ctx context.Context, id int64) (*GradeReproduction, error) {
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
	if g.State != db.GradeCompleted || len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("reproduce grade %d: it is %s with no recorded report: only a completed grade's report can be reproduced", id, g.State)
	}
	var recorded grader.Report
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
	cfg, err := repoConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	gr, err := p.graderFor(ctx, recorded.Image)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	rp, err := gr.Reproduce(ctx, grader.Request{Repo: head, Hidden: hidden, Base: base, Reference: content.Reference,
		TestsDigest: g.Digest, Timeout: cfg.Timeout, Limits: repoLimits(cfg)}, &recorded)
	if err != nil {
		return nil, fmt.Errorf("reproduce grade %d: %w", id, err)
	}
	return &GradeReproduction{rp: rp}, nil
}

// graderFor returns a grader that runs the image with id imageID: the
// current one, or an older one the engine still has.
func (p *GradeReproducer) graderFor(ctx context.Context, imageID string) (*grader.Grader, error) {
	if imageID == p.grading.ImageID {
		return p.grading.Grader, nil
	}
	if imageID == "" {
		return nil, errors.New("the recorded report names no grader image")
	}
	got, err := p.grading.Docker.ImageID(ctx, imageID)
	if err != nil || got != imageID {
		return nil, fmt.Errorf("the grader image %s the grade ran in is not on this engine (the current image is %s): a grade can only be reproduced where its image is kept", imageID, p.grading.ImageID)
	}
	return grader.New(p.grading.Docker, imageID, imageID), nil
}

// ReproduceGrade opens the service's database, GitHub App, store and
// sandbox engine as cfg says and reproduces grade id; see
// GradeReproducer.Reproduce.
func ReproduceGrade(ctx context.Context, cfg Config, id int64) (*GradeReproduction, error) {
	if !cfg.HasApp() {
		return nil, errors.New("reproducing a grade fetches its trees from GitHub: configure the GitHub App (TESTFIRST_GITHUB_APP_ID and TESTFIRST_GITHUB_PRIVATE_KEY_FILE) as for serve")
	}
	d, err := db.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	clients, err := github.NewClients(github.AppConfig{AppID: cfg.GitHubAppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL})
	if err != nil {
		return nil, err
	}
	r, closeR, err := OpenStoreReader(ctx, cfg.StoreURL)
	if err != nil {
		return nil, fmt.Errorf("hidden test store: %w", err)
	}
	defer closeR()
	g, err := OpenGrading(ctx, GradingConfig{Progress: io.Discard})
	if err != nil {
		return nil, fmt.Errorf("sealed grader: %w", err)
	}
	return NewGradeReproducer(d, clients, r, g).Reproduce(ctx, id)
}

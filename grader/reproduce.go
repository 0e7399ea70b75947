package grader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
)

// ErrNotReproducible is wrapped by Reproduce's errors for inputs that are
// not the recorded grade's.
var ErrNotReproducible = errors.New("not the recorded grade's inputs")

// Reproduce grades req again with g and compares the report with
// recorded. It refuses, with an error wrapping ErrNotReproducible, when
// req's tree, its hidden tests or g's image are not those the recorded
// report names: a grade made from other inputs reproduces nothing.
func (g *Grader) Reproduce(ctx context.Context, req Request, recorded *report.Report) (*report.Reproduction, error) {
	if recorded == nil {
		return nil, errors.New("reproduce: no recorded report")
	}
	if req.Repo == nil || req.Hidden == nil {
		return nil, errors.New("reproduce: a repo tree and hidden tests are required")
	}
	if got := req.Repo.Digest(); got != recorded.RepoDigest {
		return nil, fmt.Errorf("reproduce: the tree under test is %s, the recorded grade graded %s: %w", got, recorded.RepoDigest, ErrNotReproducible)
	}
	if got := cmp.Or(req.TestsDigest, req.Hidden.Digest()); got != recorded.TestsDigest {
		return nil, fmt.Errorf("reproduce: the hidden tests are %s, the recorded grade used %s: %w", got, recorded.TestsDigest, ErrNotReproducible)
	}
	if g.imageID != recorded.Image {
		return nil, fmt.Errorf("reproduce: the grader image is %s, the recorded grade ran in %s: %w", g.imageID, recorded.Image, ErrNotReproducible)
	}
	note := ""
	// The grade ran split when its settings say so, or, recorded before
	// they did, when it says how much was sealed: only a split grade does.
	req.Split = recorded.Sealing != nil || (recorded.Settings != nil && recorded.Settings.Split)
	if s := recorded.Settings; s != nil {
		applySettings(s, &req)
	} else {
		note = "the recorded grade does not say which timeout and sandbox limits it ran with: the ones given now were used"
	}
	again, err := g.Grade(ctx, req)
	if err != nil {
		return nil, err
	}
	rp := report.CompareReports(recorded, again)
	if note != "" {
		rp.Notes = append(rp.Notes, note)
	}
	return rp, nil
}

func settingsOf(req Request) *report.Settings {
	return &report.Settings{TimeoutSeconds: req.Timeout.Seconds(), Memory: req.Limits.Memory, NanoCPUs: req.Limits.NanoCPUs, Pids: req.Limits.Pids, Split: req.splits()}
}

// applySettings sets req's timeout and limits to s's.
func applySettings(s *report.Settings, req *Request) {
	req.Timeout = time.Duration(s.TimeoutSeconds * float64(time.Second))
	if req.Limits == (sandbox.Limits{}) {
		req.Limits = sandbox.DefaultLimits
	}
	req.Limits.Memory, req.Limits.NanoCPUs, req.Limits.Pids = s.Memory, s.NanoCPUs, s.Pids
}

package grader

import (
	"context"
	"crypto/rand"

	"golang.org/x/sync/errgroup"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// newTwinSeed returns a fresh seed for the twins of one grade.
func newTwinSeed() string {
	return rand.Text()
}

// startTwin runs tree's twin run in group; its failure is kept in dst,
// not returned, so it never cancels the grade's other runs.
func (g *Grader) startTwin(group *errgroup.Group, ctx context.Context, req Request, tree *tree.Tree, canaries []detect.Canary, tj wrapper.TwinJob, dst *evaluate.TwinRun) {
	tj.Twins = true
	group.Go(func() error {
		r, err := g.run(ctx, req, tree, canaries, tj)
		if r != nil {
			dst.Result, dst.Eval = r.res, r.ev
		}
		dst.Err = err
		return nil
	})
}

package grader

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// maxCollectTime bounds the trusted collection of a grade.
const maxCollectTime = 2 * time.Minute

// collectTrusted collects the hidden tests with pytest against a trusted
// tree (the reference when the grade has one, else the base), in a sandbox
// of its own, before any run of the tree under test. It returns what the
// syntax-tree listing could not know: the cases of tests parametrized over
// computed lists or parametrized fixtures, and tests it does not list
// (a unittest class whose TestCase base lives in the tree). Every run of
// the grade then expects them.
//
// A collection that fails (the hidden modules do not import on that tree,
// as is usual for tests of what the pull request adds) knows less, never
// more: its modules stay as the listing has them. It returns an error only
// when the sandbox engine fails.
func (g *Grader) collectTrusted(ctx context.Context, req Request, trusted *tree.Tree) ([]wrapper.ExpectedTest, error) {
	if trusted == nil || req.Command != nil {
		return nil, nil
	}
	// A budget of its own, as every run of a grade has.
	timeout := min(req.Timeout/4, maxCollectTime)
	if timeout <= 0 {
		return nil, nil
	}
	clean, _ := detect.WithoutBytecode(trusted)
	uid := testUIDBase + int(rand.Int32N(testUIDSpan))
	job := wrapper.Job{
		Mode:          wrapper.ModeCollect,
		UIDSplit:      !req.NoUIDSplit,
		TestUID:       uid,
		TimeoutMillis: (timeout - timeout/10).Milliseconds(),
		OutputLimit:   outputLimit,
		JUnitLimit:    junitLimit,
		ProcLimit:     int(max(req.Limits.Pids-procReserve, req.Limits.Pids/2)),
		SourceDir:     detect.SourceDir(req.Base),
	}
	sres, err := g.runWrapper(ctx, job, req.laid, clean, timeout, req.Limits, "", req.Labels)
	if err != nil {
		return nil, err
	}
	var res wrapper.Result
	if json.Unmarshal(sres.Stdout, &res) != nil || sres.StdoutTruncated || res.Error != "" || res.TimedOut || res.ListError != "" {
		return nil, nil
	}
	return wrapper.CollectedTests(res.Expected, res.Collected), nil
}

package bench

import (
	"context"
	"io"
	"path/filepath"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/grader"
)

// GradeBench is the outcome of BenchGradeLocal.
type GradeBench struct {
	BenchResult
	// ImageID is the grader image the sealed runs used.
	ImageID string
	// Runtime is the runtime of the sealed runs (the engine's default),
	// AltRuntime that of the other sealed runs, if any.
	Runtime, AltRuntime string
}

// BenchGradeLocal connects to the sandbox engine as cfg says and runs
// BenchGrade on the trees at repoDir and hiddenDir of this host: runs
// sealed and bare grades, alternated, each timing written to progress.
//
// With altRuntime, every round also grades sealed under that runtime of
// the engine (runsc: gVisor), so the two runtimes and bare are measured in
// one run, alternated.
func BenchGradeLocal(ctx context.Context, cfg app.GradingConfig, altRuntime string, split bool, repoDir, hiddenDir string, runs int, progress io.Writer) (GradeBench, error) {
	repoAbs, err := filepath.Abs(repoDir)
	if err != nil {
		return GradeBench{}, err
	}
	hiddenAbs, err := filepath.Abs(hiddenDir)
	if err != nil {
		return GradeBench{}, err
	}
	g, err := app.OpenGrading(ctx, cfg)
	if err != nil {
		return GradeBench{}, err
	}
	defer g.Close()
	out := GradeBench{ImageID: g.ImageID, Runtime: g.Runtime}
	var altGrader *grader.Grader
	if altRuntime != "" {
		// The same engine, under the other runtime.
		altCfg := cfg
		altCfg.Runtime, altCfg.Docker = altRuntime, g.Docker
		alt, err := app.OpenGrading(ctx, altCfg)
		if err != nil {
			return GradeBench{}, err
		}
		defer alt.Close()
		out.AltRuntime, altGrader = alt.Runtime, alt.Grader
	}
	if out.BenchResult, err = BenchGrade(ctx, g.Grader, altGrader, split, repoAbs, hiddenAbs, runs, progress); err != nil {
		return GradeBench{}, err
	}
	return out, nil
}

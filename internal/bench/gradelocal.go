package bench

import (
	"context"
	"io"
	"path/filepath"

	"github.com/testfirst-app/testfirst/app"
)

// GradeBench is the outcome of BenchGradeLocal.
type GradeBench struct {
	BenchResult
	// ImageID is the grader image the sealed runs used.
	ImageID string
}

// BenchGradeLocal connects to the sandbox engine as cfg says and runs
// BenchGrade on the trees at repoDir and hiddenDir of this host: runs
// sealed and bare grades, alternated, each timing written to progress.
func BenchGradeLocal(ctx context.Context, cfg app.GradingConfig, repoDir, hiddenDir string, runs int, progress io.Writer) (GradeBench, error) {
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
	res, err := BenchGrade(ctx, g.Grader, repoAbs, hiddenAbs, runs, progress)
	if err != nil {
		return GradeBench{}, err
	}
	return GradeBench{BenchResult: res, ImageID: g.ImageID}, nil
}

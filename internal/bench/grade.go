package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// BareInterpreter runs the bare side of the benchmark: Debian's python3,
// which has the same pytest as the grader image.
const BareInterpreter = "/usr/bin/python3"

// BenchResult holds the timings of a grading benchmark.
type BenchResult struct {
	Sealed, Bare []time.Duration
	// Alt holds the sealed grades under the other runtime, when the
	// benchmark was given one.
	Alt []time.Duration
	// Split holds the split grades (grader.Request.Split), when the
	// benchmark was asked for them.
	Split []time.Duration
}

// SplitRatio is the median split grade over the median bare run.
func (r BenchResult) SplitRatio() float64 {
	return Median(r.Split).Seconds() / Median(r.Bare).Seconds()
}

// AltRatio is the other runtime's median sealed grade over the default's.
func (r BenchResult) AltRatio() float64 {
	return Median(r.Alt).Seconds() / Median(r.Sealed).Seconds()
}

// AltOverhead is the other runtime's median sealed grade minus the
// default's.
func (r BenchResult) AltOverhead() time.Duration {
	return Median(r.Alt) - Median(r.Sealed)
}

// Median returns the median of d.
func Median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ratio is median sealed over median bare.
func (r BenchResult) Ratio() float64 {
	return Median(r.Sealed).Seconds() / Median(r.Bare).Seconds()
}

// Overhead is median sealed minus median bare.
func (r BenchResult) Overhead() time.Duration {
	return Median(r.Sealed) - Median(r.Bare)
}

// BenchGrade grades repo against hidden sealed and runs the same tests
// bare on the host, alternately, runs times each; with alt, each round
// also grades sealed with alt (the same grader under another runtime)
// between the two. A sealed grade must pass: the benchmark measures a
// working grade, not a failing one.
//
// With split, each round also grades split (the code under test in a
// process of its own), which must pass with trust sealed or split.
func BenchGrade(ctx context.Context, g, alt *grader.Grader, split bool, repoDir, hiddenDir string, runs int, progress io.Writer) (BenchResult, error) {
	var res BenchResult
	if _, err := exec.LookPath(BareInterpreter); err != nil {
		return res, fmt.Errorf("bare runs need %s with pytest: apt-get install python3-pytest", BareInterpreter)
	}
	for i := range runs {
		began := time.Now()
		repo, err := tree.Load(repoDir)
		if err != nil {
			return res, err
		}
		hidden, err := tree.Load(hiddenDir)
		if err != nil {
			return res, err
		}
		sealed, err := gradeOnce(ctx, g, false, repoDir, hiddenDir, repo, hidden, began, i)
		if err != nil {
			return res, err
		}
		var splitTime time.Duration
		if split {
			began = time.Now()
			if splitTime, err = gradeOnce(ctx, g, true, repoDir, hiddenDir, nil, nil, began, i); err != nil {
				return res, err
			}
			res.Split = append(res.Split, splitTime)
		}
		var altTime time.Duration
		if alt != nil {
			began = time.Now()
			if altTime, err = gradeOnce(ctx, alt, false, repoDir, hiddenDir, nil, nil, began, i); err != nil {
				return res, err
			}
			res.Alt = append(res.Alt, altTime)
		}

		began = time.Now()
		cmd := exec.CommandContext(ctx, BareInterpreter, "-I", "-m", "pytest", "-c", "/dev/null", "-p", "no:cacheprovider",
			"--rootdir", hiddenDir, "-o", "pythonpath="+repoDir, "-q", hiddenDir)
		cmd.Dir = repoDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return res, fmt.Errorf("bare run %d: %w\n%s", i+1, err, out)
		}
		bare := time.Since(began)
		res.Sealed = append(res.Sealed, sealed)
		res.Bare = append(res.Bare, bare)
		if split {
			fmt.Fprintf(progress, "run %2d  sealed %6.3fs  split %6.3fs  bare %6.3fs\n", i+1, sealed.Seconds(), splitTime.Seconds(), bare.Seconds())
			continue
		}
		if alt != nil {
			fmt.Fprintf(progress, "run %2d  sealed %6.3fs  other runtime %6.3fs  bare %6.3fs\n", i+1, sealed.Seconds(), altTime.Seconds(), bare.Seconds())
			continue
		}
		fmt.Fprintf(progress, "run %2d  sealed %6.3fs  bare %6.3fs\n", i+1, sealed.Seconds(), bare.Seconds())
	}
	return res, nil
}

// gradeOnce grades the trees (loaded from their directories when nil)
// with g and returns the time since began; the grade must pass and, when
// the grader names a runtime, run under it.
func gradeOnce(ctx context.Context, g *grader.Grader, split bool, repoDir, hiddenDir string, repo, hidden *tree.Tree, began time.Time, i int) (time.Duration, error) {
	var err error
	if repo == nil {
		if repo, err = tree.Load(repoDir); err != nil {
			return 0, err
		}
		if hidden, err = tree.Load(hiddenDir); err != nil {
			return 0, err
		}
	}
	rep, err := g.Grade(ctx, grader.Request{Repo: repo, Hidden: hidden, Split: split})
	if err != nil {
		return 0, err
	}
	if rep.Verdict != report.VerdictPass {
		return 0, fmt.Errorf("sealed run %d (runtime %s): verdict %s (%v): the benchmark needs a passing suite", i+1, rep.Runtime, rep.Verdict, rep.Reasons)
	}
	if split && rep.Trust != report.TrustSealed && rep.Trust != report.TrustSplit {
		return 0, fmt.Errorf("split run %d: trust %s (isolation %+v): the benchmark measures split grades", i+1, rep.Trust, rep.Isolation)
	}
	if !split && rep.Trust != report.TrustIsolated {
		return 0, fmt.Errorf("sealed run %d (runtime %s): trust %s (isolation %+v): the benchmark measures isolated grades", i+1, rep.Runtime, rep.Trust, rep.Isolation)
	}
	return time.Since(began), nil
}

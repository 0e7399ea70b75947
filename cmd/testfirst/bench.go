package main

import (
	"context"
	"fmt"
	"io"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/internal/bench"
)

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) > 0 && args[0] == "intake" {
		return benchIntakeCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "pasted" {
		return benchPastedCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "grade" {
		return exitUsage, usageError{"usage: testfirst bench grade --repo DIR --tests DIR [--runs N] [--runtime NAME] [--split]\n       testfirst bench intake [--deliveries N] [--concurrency C] [--database URL] [--burst N] [--cpuprofile FILE]\n       testfirst bench pasted --repos GITDIR,... [--per-repo N] [--honest FILES] [--compare] [-v]"}
	}
	fs := newFlags("bench grade", stderr)
	repo := fs.String("repo", "", "tree under test; its hidden tests must all pass (required). Its code also runs BARE on this host: only trees you trust")
	tests := fs.String("tests", "", "directory of hidden pytest files (required)")
	runs := fs.Int("runs", 10, "sealed and bare runs, alternated")
	wrapper := fs.String("wrapper", "", "path of the testfirst-wrapper binary")
	runtime := fs.String("runtime", "", "also grade each round sealed under this OCI runtime of the engine, e.g. runsc (gVisor), to measure it against the default in the same run")
	split := fs.Bool("split", false, "also grade each round split (the code under test in a process of its own), to measure it against bare pytest in the same run")
	if err := parse(fs, args[1:]); err != nil {
		return exitUsage, err
	}
	if *repo == "" || *tests == "" || *runs < 1 {
		return exitUsage, usageError{"--repo and --tests are required and --runs must be at least 1"}
	}
	res, err := bench.BenchGradeLocal(ctx, app.GradingConfig{Wrapper: *wrapper, Progress: stderr}, *runtime, *split, *repo, *tests, *runs, stdout)
	if err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "median  sealed %.3fs  bare %.3fs  ratio %.2fx  overhead %+.3fs  (%d runs each, image %s, runtime %s)\n",
		bench.Median(res.Sealed).Seconds(), bench.Median(res.Bare).Seconds(), res.Ratio(), res.Overhead().Seconds(), *runs, res.ImageID, res.Runtime)
	if len(res.Split) > 0 {
		fmt.Fprintf(stdout, "median  split %.3fs  against bare %.2fx  against sealed in-process %.2fx\n",
			bench.Median(res.Split).Seconds(), res.SplitRatio(), bench.Median(res.Split).Seconds()/bench.Median(res.Sealed).Seconds())
	}
	if len(res.Alt) > 0 {
		fmt.Fprintf(stdout, "median  sealed under %s %.3fs  against %s %.2fx  overhead %+.3fs  against bare %.2fx\n",
			res.AltRuntime, bench.Median(res.Alt).Seconds(), res.Runtime, res.AltRatio(), res.AltOverhead().Seconds(),
			bench.Median(res.Alt).Seconds()/bench.Median(res.Bare).Seconds())
	}
	return exitPass, nil
}

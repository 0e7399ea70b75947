package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/testfirst-app/testfirst/internal/bench"
)

// benchIntakeCmd runs testfirst bench intake: the webhook stack on a
// loopback port, signed deliveries at a set concurrency, exactly-once
// verification and an optional burst drain.
func benchIntakeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("bench intake", stderr)
	deliveries := fs.Int("deliveries", 20000, "signed deliveries sent over HTTP, half needing a job")
	concurrency := fs.Int("concurrency", 64, "requests in flight at once")
	database := fs.String("database", "", "database URL (default: a fresh SQLite file in a temporary directory)")
	burst := fs.Int("burst", 0, "deliveries that each need a job, then drained by a no-op worker (0: no drain)")
	fixtures := fs.String("fixtures", "../shared/fixtures/github-webhooks", "directory of GitHub webhook fixture payloads")
	timeout := fs.Duration("timeout", benchIntakeTimeout, "give up after this long")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run (server and load generator) to this file, for go tool pprof")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return exitUsage, err
		}
		defer stop()
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	res, err := bench.BenchIntake(ctx, bench.BenchIntakeConfig{
		DatabaseURL: *database, Deliveries: *deliveries, Concurrency: *concurrency, Burst: *burst, Fixtures: *fixtures, Log: log,
	})
	if err != nil {
		return exitUsage, err
	}
	if res.Deliveries > 0 {
		fmt.Fprintf(stdout, "%s: %d deliveries at concurrency %d in %.2fs: %.0f deliveries/s, ack p50 %s p99 %s\n",
			res.Engine, res.Deliveries, *concurrency, res.Elapsed.Seconds(), res.Rate(), ms(res.Percentile(50)), ms(res.Percentile(99)))
	}
	if res.Burst > 0 {
		fmt.Fprintf(stdout, "%s: burst of %d recorded in %.2fs (%.0f/s); %d jobs drained in %.2fs (%.0f jobs/s)\n",
			res.Engine, res.Burst, res.BurstInsert.Seconds(), float64(res.Burst)/res.BurstInsert.Seconds(),
			res.Drained, res.Drain.Seconds(), float64(res.Drained)/res.Drain.Seconds())
	}
	if err := res.Verify(); err != nil {
		fmt.Fprintf(stdout, "NOT exactly once: %v\n", err)
		return exitOther, nil
	}
	fmt.Fprintf(stdout, "exactly once: %d deliveries recorded, %d jobs, %d redeliveries answered 202 without change\n", res.Recorded, res.Jobs, res.Redelivered)
	return exitPass, nil
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// benchIntakeTimeout bounds a whole bench intake run.
const benchIntakeTimeout = 10 * time.Minute

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", d.Seconds()*1000) }

package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/testfirst-app/testfirst/internal/bench"
	"github.com/testfirst-app/testfirst/pasted"
)

// benchPastedCmd runs testfirst bench pasted: the pasted-test detector's
// recall and false matches on real fix commits of git repositories.
func benchPastedCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("bench pasted", stderr)
	perRepo := fs.Int("per-repo", 6, "fix commits used of each repository")
	extra := fs.String("honest", "", "comma-separated files of honest text (issue threads) tried against every commit")
	compare := fs.Bool("compare", false, "also measure the other normalisations and shingle sizes the default was chosen against")
	verbose := fs.Bool("v", false, "list every miss and false match")
	repos := fs.String("repos", "", "comma-separated git directories of the repositories whose fix commits are used (required)")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if *repos == "" {
		return exitUsage, usageError{"--repos is required: the git directories of real repositories, comma-separated"}
	}
	black, _ := exec.LookPath("black")
	if black == "" {
		io.WriteString(stderr, "black is not on PATH: the black-formatted variants are left out\n")
	}
	opts := []bench.NamedOptions{{Name: "default", Options: pasted.Default}}
	if *compare {
		// The other options vary the default of before 2026-12-07 (6
		// shingles and 15 %, any test alone), as docs/pasted-tests.md's
		// table does.
		d := pasted.Default
		d.MinShingles, d.MinFraction, d.MinTest = 6, 0.15, 0
		opts = append(opts, bench.NamedOptions{Name: "before-2026-12-07", Options: d})
		lit := d
		lit.KeepLiterals = false
		all := lit
		all.KeepAttributes, all.KeepBuiltins = false, false
		k6, k14, m12, f25 := d, d, d, d
		k6.K, k14.K = 6, 14
		m12.MinShingles, m12.MinFraction = 12, 0.25
		f25.MinFraction = 0.25
		opts = append(opts,
			bench.NamedOptions{Name: "literals-a-placeholder", Options: lit},
			bench.NamedOptions{Name: "every-name-and-literal-a-placeholder", Options: all},
			bench.NamedOptions{Name: "k=6", Options: k6},
			bench.NamedOptions{Name: "k=14", Options: k14},
			bench.NamedOptions{Name: "min-shingles=12,min-fraction=0.25", Options: m12},
			bench.NamedOptions{Name: "min-fraction=0.25", Options: f25})
		for _, v := range []struct {
			m, t int // MinShingles, MinTest
			f    float64
		}{{4, 0, 0.15}, {6, 0, 0.05}, {4, 0, 0.05}, {3, 0, 0.05}, {3, 0, 0.08}, {3, 0, 0.10}, {3, 0, 0.12}, {4, 0, 0.10}, {2, 0, 0.10},
			{3, 6, 0.10}, {3, 6, 0.11}, {3, 6, 0.12}, {3, 8, 0.10}, {4, 8, 0.10}, {3, 6, 0.15}} {
			x := d
			x.MinShingles, x.MinFraction, x.MinTest = v.m, v.f, v.t
			name := fmt.Sprintf("min-shingles=%d,min-fraction=%.2f", v.m, v.f)
			if v.t > 0 {
				name += fmt.Sprintf(",min-test=%d", v.t)
			}
			opts = append(opts, bench.NamedOptions{Name: name, Options: x})
		}
	}
	var files []string
	if *extra != "" {
		files = strings.Split(*extra, ",")
	}
	err := bench.BenchPasted(ctx, bench.PastedConfig{Repos: strings.Split(*repos, ","), PerRepo: *perRepo, Extra: files, Black: black, Options: opts, Verbose: *verbose, Out: stdout})
	if err != nil {
		return exitUsage, err
	}
	return 0, nil
}

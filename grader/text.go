package grader

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes a short table of r for people. It never includes the
// runner output.
func WriteText(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	rows := func(k string, vs []string) {
		for i, v := range vs {
			if i > 0 {
				k = ""
			}
			row(k, v)
		}
	}
	row("verdict", string(r.Verdict))
	row("trust", string(r.Trust))
	c := r.Counts
	counts := fmt.Sprintf("%d/%d passed (%d failed, %d errors, %d skipped)", c.Passed, c.Total, c.Failed, c.Errors, c.Skipped)
	if c.Flaky > 0 {
		counts = strings.Replace(counts, " failed,", fmt.Sprintf(" failed, %d flaky,", c.Flaky), 1)
	}
	row("hidden tests", counts)
	rows("why", r.Reasons)
	rows("not passed", r.Failed)
	var signals []string
	for _, s := range r.TamperSignals {
		signals = append(signals, s.Path+": "+s.Reason)
	}
	rows("tamper signals", signals)
	var evidence []string
	for _, e := range r.Evidence {
		evidence = append(evidence, e.describe())
	}
	rows("evidence", evidence)
	rows("touched tests", r.TouchedTests)
	var seen []string
	for _, s := range r.Contamination {
		seen = append(seen, "canary of "+s.HiddenFile+" in "+s.Where)
	}
	rows("contaminated", seen)
	if b := r.BaseCheck; b != nil {
		v := fmt.Sprintf("%d/%d pass on base", b.Counts.Passed, b.Counts.Total)
		if len(b.GuardTests) > 0 {
			v += " (guard tests: " + strings.Join(b.GuardTests, ", ") + ")"
		}
		if b.Error != "" {
			v += "; error: " + b.Error
		}
		row("base check", v)
		rows("flaky", b.Flaky)
	}
	if ref := r.ReferenceCheck; ref != nil {
		v := fmt.Sprintf("%d/%d pass with the reference patch", ref.Counts.Passed, ref.Counts.Total)
		if ref.Error != "" {
			v += "; error: " + ref.Error
		}
		row("reference check", v)
		writeMutation(row, rows, ref.Mutation)
	}
	row("sentinels", r.Sentinels)
	row("tests digest", r.TestsDigest)
	row("repo digest", r.RepoDigest)
	row("image", r.Image)
	row("took", fmt.Sprintf("%.1fs", r.DurationSeconds))
	return tw.Flush()
}

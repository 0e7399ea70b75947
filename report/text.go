package report

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
	rows("why", escapeAll(r.Reasons))
	rows("not passed", escapeAll(r.Failed))
	if len(r.TamperSignals) > 0 {
		groups := GroupTamperSignals(r.TamperSignals)
		signals := []string{fmt.Sprintf("%d in total, %d kinds", len(r.TamperSignals), len(groups))}
		for _, g := range groups {
			line := fmt.Sprintf("%d× %s: %s", g.Count, g.Reason, strings.Join(g.Examples, ", "))
			if more := g.Count - len(g.Examples); more > 0 {
				line += fmt.Sprintf(" and %d more", more)
			}
			signals = append(signals, line)
		}
		rows("tamper signals", signals)
	}
	if n := len(r.TamperContext); n > 0 {
		row("tamper context", fmt.Sprintf("%d signal(s) of files as they are on the base: not counted", n))
	}
	if len(r.Evidence) > 0 {
		strong, weak := StrongSignals(r.Evidence), WeakSignals(r.Evidence)
		evidence := []string{fmt.Sprintf("%d in total (%d strong, %d weak)", strong+weak, strong, weak)}
		for _, e := range r.Evidence {
			evidence = append(evidence, EscapeText(e.Describe()))
		}
		rows("evidence", evidence)
	}
	rows("touched tests", escapeAll(r.TouchedTests))
	var seen []string
	for _, s := range r.Contamination {
		seen = append(seen, "canary of "+EscapeText(s.HiddenFile)+" in "+EscapeText(s.Where))
	}
	rows("contaminated", seen)
	if b := r.BaseCheck; b != nil {
		v := fmt.Sprintf("%d/%d pass on base", b.Counts.Passed, b.Counts.Total)
		if len(b.GuardTests) > 0 {
			v += " (guard tests: " + strings.Join(escapeAll(b.GuardTests), ", ") + ")"
		}
		if b.Error != "" {
			v += "; error: " + EscapeText(b.Error)
		}
		row("base check", v)
		rows("flaky", escapeAll(b.Flaky))
	}
	if ref := r.ReferenceCheck; ref != nil {
		v := fmt.Sprintf("%d/%d pass with the reference patch", ref.Counts.Passed, ref.Counts.Total)
		if ref.Error != "" {
			v += "; error: " + EscapeText(ref.Error)
		}
		row("reference check", v)
		writeMutation(row, rows, ref.Mutation)
	}
	if tw := r.Twins; tw != nil {
		row("twins", TwinsLine(tw))
	}
	row("sentinels", r.Sentinels)
	row("tests digest", r.TestsDigest)
	row("repo digest", r.RepoDigest)
	row("image", r.Image)
	if line := EnvironmentLine(r.Environment, r.Network); line != "" {
		row("environment", EscapeText(line))
	}
	row("took", fmt.Sprintf("%.1fs", r.DurationSeconds))
	return tw.Flush()
}

// escapeAll returns ss with every element escaped (see EscapeText).
func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = EscapeText(s)
	}
	return out
}

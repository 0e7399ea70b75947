package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Reproduction is a recorded grade beside the same grade made again from
// the same trees, hidden tests and grader image.
type Reproduction struct {
	Recorded *Report `json:"recorded"`
	Again    *Report `json:"again"`
	// Same is true when the verdict, trust, counts, sentinels and every
	// test's outcome are the same in both.
	Same bool `json:"same"`
	// Differences say what differs, one line each: "verdict: pass | fail".
	Differences []string `json:"differences"`
	// Notes say what the reproduction could not hold equal.
	Notes []string `json:"notes"`
}

// Settings are the bounds a grade ran with.
type Settings struct {
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// Memory is in bytes, NanoCPUs in billionths of a CPU.
	Memory   int64 `json:"memory"`
	NanoCPUs int64 `json:"nano_cpus"`
	Pids     int64 `json:"pids"`
	// Split is true when the grade ran split (grader.Request.Split): a
	// reproduction grades split again whatever the configuration says now.
	Split bool `json:"split,omitempty"`
}

// CompareReports compares a recorded report with a new one of the same
// inputs.
func CompareReports(recorded, again *Report) *Reproduction {
	rp := &Reproduction{Recorded: recorded, Again: again, Differences: []string{}, Notes: []string{}}
	diff := func(what, a, b string) {
		if a != b {
			rp.Differences = append(rp.Differences, fmt.Sprintf("%s: %s | %s", what, a, b))
		}
	}
	diff("verdict", string(recorded.Verdict), string(again.Verdict))
	diff("trust", string(recorded.Trust), string(again.Trust))
	diff("hidden tests", countsText(recorded.Counts), countsText(again.Counts))
	diff("sentinels", recorded.Sentinels, again.Sentinels)
	outcomes := func(r *Report) map[string]Outcome {
		m := map[string]Outcome{}
		for _, t := range r.Tests {
			m[t.ID] = t.Outcome
		}
		return m
	}
	ra, rb := outcomes(recorded), outcomes(again)
	for _, t := range recorded.Tests {
		diff(t.ID, string(t.Outcome), cmp.Or(string(rb[t.ID]), "absent"))
	}
	for _, t := range again.Tests {
		if _, ok := ra[t.ID]; !ok {
			diff(t.ID, "absent", string(t.Outcome))
		}
	}
	rp.Same = len(rp.Differences) == 0
	return rp
}

func countsText(c Counts) string {
	s := fmt.Sprintf("%d/%d passed (%d failed, %d errors, %d skipped)", c.Passed, c.Total, c.Failed, c.Errors, c.Skipped)
	if c.Flaky > 0 {
		s = strings.Replace(s, " failed,", fmt.Sprintf(" failed, %d flaky,", c.Flaky), 1)
	}
	return s
}

// WriteSideBySide writes the recorded report and the new one in two
// columns, a mark on each row that differs. It never includes the runner
// output.
func WriteSideBySide(w io.Writer, rp *Reproduction) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	a, b := rp.Recorded, rp.Again
	row := func(k, x, y string) {
		mark := ""
		if x != y && k != "took" {
			mark = "≠"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", mark, k, x, y)
	}
	fmt.Fprintf(tw, "\t\trecorded\tagain\n")
	row("verdict", string(a.Verdict), string(b.Verdict))
	row("trust", string(a.Trust), string(b.Trust))
	row("hidden tests", countsText(a.Counts), countsText(b.Counts))
	row("sentinels", a.Sentinels, b.Sentinels)
	again := map[string]Outcome{}
	for _, t := range b.Tests {
		again[t.ID] = t.Outcome
	}
	seen := map[string]bool{}
	for _, t := range a.Tests {
		seen[t.ID] = true
		row(t.ID, string(t.Outcome), cmp.Or(string(again[t.ID]), "absent"))
	}
	for _, t := range b.Tests {
		if !seen[t.ID] {
			row(t.ID, "absent", string(t.Outcome))
		}
	}
	row("why", strings.Join(a.Reasons, "; "), strings.Join(b.Reasons, "; "))
	if a.ReferenceCheck != nil || b.ReferenceCheck != nil {
		ms := func(r *Report) string {
			if r.ReferenceCheck == nil || r.ReferenceCheck.Mutation == nil {
				return "—"
			}
			return r.ReferenceCheck.Mutation.Summary()
		}
		row("mutation", ms(a), ms(b))
	}
	row("tests digest", a.TestsDigest, b.TestsDigest)
	row("repo digest", a.RepoDigest, b.RepoDigest)
	row("image", a.Image, b.Image)
	row("took", fmt.Sprintf("%.1fs", a.DurationSeconds), fmt.Sprintf("%.1fs", b.DurationSeconds))
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case rp.Same:
		_, err := fmt.Fprintln(w, "\nreproduced: the same verdict, counts and outcomes")
		if err != nil {
			return err
		}
	default:
		if _, err := fmt.Fprintf(w, "\nnot reproduced: %d difference(s)\n", len(rp.Differences)); err != nil {
			return err
		}
	}
	for _, n := range rp.Notes {
		if _, err := fmt.Fprintln(w, "note: "+n); err != nil {
			return err
		}
	}
	return nil
}

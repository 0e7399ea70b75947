package card

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/testfirst-app/testfirst/report"
)

// The grader names the sentinel tests it plants in hidden modules
// sentinel_must_fail and sentinel_must_pass in the runner output it keeps.
// They are the grader's own, not the ticket's: the grade page shows the
// output without them, and pytest's counts of what it collected and how
// it ended are those of the hidden tests alone.
const sentinelMarker = "sentinel_must_"

var (
	sentinelSection = regexp.MustCompile(`^_{3,} .*\b` + sentinelMarker + `(?:fail|pass)\b.* _{3,}$`)
	sectionBoundary = regexp.MustCompile(`^(?:_{3,}|={3,})( |$)`)
	collected       = regexp.MustCompile(`^collected \d+ items?(.*)$`)
	progressLine    = regexp.MustCompile(`^(\S+\.py) ([.FEsxXp]+)(\s+\[\s*\d+%\])?$`)
	summaryLine     = regexp.MustCompile(`^(=+) (.*) in ([0-9.]+s.*?) (=+)$`)
)

// isSentinel reports whether a test id names one of the grader's
// sentinels.
func isSentinel(id string) bool { return strings.Contains(id, "::"+sentinelMarker) }

// hideSentinels removes the grader's sentinels from a pytest output: their
// lines, their failure sections, their marks in the progress lines, and
// rewrites "collected N items" and the final tally with the report's
// hidden tests. An output without sentinels is returned as it is.
func hideSentinels(out string, r *report.Report) string {
	if !strings.Contains(out, sentinelMarker) {
		return out
	}
	var tests []report.TestResult
	for _, t := range r.Tests {
		if !isSentinel(t.ID) {
			tests = append(tests, t)
		}
	}
	lines := strings.Split(out, "\n")
	kept := make([]string, 0, len(lines))
	skipping := false
	for _, line := range lines {
		if skipping {
			if !sectionBoundary.MatchString(line) {
				continue
			}
			skipping = false
		}
		switch {
		case sentinelSection.MatchString(line):
			skipping = true
			continue
		case strings.Contains(line, sentinelMarker):
			continue
		}
		if m := collected.FindStringSubmatch(line); m != nil {
			line = fmt.Sprintf("collected %d %s%s", len(tests), plural(len(tests), "item", "items"), m[1])
		} else if m := progressLine.FindStringSubmatch(line); m != nil {
			line = progress(m[1], tests) + m[3]
		} else if m := summaryLine.FindStringSubmatch(line); m != nil && strings.ContainsAny(m[2], "0123456789") {
			line = fmt.Sprintf("%s %s in %s %s", m[1], tally(r.Counts), m[3], m[4])
		}
		kept = append(kept, line)
	}
	return strings.Join(dropEmptySections(kept), "\n")
}

// dropEmptySections drops a "=== FAILURES ===" or "=== short test summary
// info ===" header left with nothing under it.
func dropEmptySections(lines []string) []string {
	out := lines[:0:0]
	for i, line := range lines {
		if strings.HasPrefix(line, "===") && (strings.Contains(line, " FAILURES ") || strings.Contains(line, " ERRORS ") || strings.Contains(line, " short test summary info ")) {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j == len(lines) || strings.HasPrefix(lines[j], "===") {
				continue
			}
		}
		out = append(out, line)
	}
	return out
}

// progress is a progress line of pytest for file, written from the
// outcomes the report gives the hidden tests in it.
func progress(file string, tests []report.TestResult) string {
	marks := map[report.Outcome]byte{report.OutcomePassed: '.', report.OutcomeFailed: 'F', report.OutcomeError: 'E', report.OutcomeSkipped: 's'}
	var b strings.Builder
	for _, t := range tests {
		f, _, _ := strings.Cut(t.ID, "::")
		if file != f && !strings.HasSuffix(file, "/"+f) {
			continue
		}
		m, ok := marks[t.Outcome]
		if !ok {
			m = '?'
		}
		b.WriteByte(m)
	}
	return file + " " + b.String()
}

// tally is pytest's closing count, of the hidden tests.
func tally(c report.Counts) string {
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{c.Failed, "failed"}, {c.Passed, "passed"}, {c.Skipped, "skipped"}, {c.Errors, "error"}} {
		if p.n == 0 {
			continue
		}
		w := p.word
		if w == "error" && p.n > 1 {
			w = "errors"
		}
		parts = append(parts, fmt.Sprintf("%d %s", p.n, w))
	}
	if len(parts) == 0 {
		return "no tests ran"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

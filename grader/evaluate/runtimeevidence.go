package evaluate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Reasons of the evidence a pytest run's reporting channel gives.
const (
	// ReasonChannelClosed: the plugin's evidence channel never opened, or
	// the plugin never reported at all.
	ReasonChannelClosed = "evidence_channel_closed"
	// ReasonNotStarted: the run was killed at its deadline before the
	// plugin sent its start record. No code of the tree runs before that
	// record (the tree joins sys.path only once every plugin is loaded),
	// so this is a run starved of time, not one bent: weak.
	ReasonNotStarted = "runner_not_started"
	// ReasonChannelGarbled: the evidence pipe carried something that is not
	// the plugin's signed, numbered records.
	ReasonChannelGarbled = "evidence_channel_garbled"
	// ReasonReportForgery: something wrote to fds 3, 4 or 5 once the
	// plugin had moved the real pipes away and left the wrapper's tripwire
	// there.
	ReasonReportForgery = "report_forgery_attempt"
	// ReasonChannelOverflow: the evidence pipe carried more than the
	// wrapper keeps (a fork bomb: every child reports).
	ReasonChannelOverflow = "evidence_overflow"
	// ReasonEndMissing: the runner exited 0 or 1 by itself without the
	// plugin's end record: the session was cut short, the report forged or
	// the exit status made by another program.
	ReasonEndMissing = "end_record_missing"
	// ReasonEndDuplicated: more than one end record.
	ReasonEndDuplicated = "end_record_duplicated"
	// ReasonForkedSession: a forked child finished the session.
	ReasonForkedSession = "session_in_forked_child"
	// ReasonExitMismatch: the runner's exit status is not the one pytest
	// reached.
	ReasonExitMismatch = "exit_status_mismatch"
	// ReasonReportMismatch: the report pipe carried other bytes than the
	// plugin wrote, or another number of test cases.
	ReasonReportMismatch = "report_mismatch"
	// ReasonSummaryMismatch: pytest's own summary line in the output gives
	// other counts than the plugin's.
	ReasonSummaryMismatch = "summary_mismatch"
	// ReasonSummaryMissing: the output, not cut, holds no summary line.
	ReasonSummaryMissing = "summary_missing"
	// ReasonDirsUnsealed: just before the tests started, the hidden tests'
	// directory (or an entry in it), the temporary directory or the tree's
	// directory did not have the owner and mode the wrapper gives them, so
	// the test uid may have been able to replace hidden files. It is the
	// sandbox's failure, not the tree's: weak, and the grade is not
	// isolated.
	ReasonDirsUnsealed = "dirs_unsealed"
)

// runtimeEvidence adds to set what the plugin's channel says about a pytest
// run: its events, and the cross-checks of its end record with the exit
// status, the report and pytest's summary line.
func runtimeEvidence(res *wrapper.Result, set *EvidenceSet) {
	if len(res.Runner) == 0 {
		return // the tests never ran
	}
	dirsEvidence(res, set)
	ev := res.Evidence
	if ev == nil || !ev.Started {
		if res.TimedOut {
			set.add(ReasonNotStarted, report.StrengthWeak, "the run was killed at its deadline before the runner's plugin started")
		} else {
			set.add(ReasonChannelClosed, report.StrengthStrong, "the runner's plugin sent no start record")
		}
		if ev == nil {
			return
		}
	}
	for _, g := range ev.Garbled {
		set.add(ReasonChannelGarbled, report.StrengthStrong, g)
	}
	if ev.TripwireBytes > 0 {
		set.add(ReasonReportForgery, report.StrengthStrong, fmt.Sprintf("%d bytes written to the runner's report descriptors after the plugin moved them", ev.TripwireBytes))
	}
	if ev.Overflow {
		set.add(ReasonChannelOverflow, report.StrengthWeak, "the evidence pipe carried more than the wrapper keeps")
	}
	for _, e := range ev.Events {
		set.Merge(report.Evidence{Reason: e.Reason, Strength: report.Strength(e.Strength), Count: e.Count, Examples: e.Examples})
	}
	if ev.ForkedEnds > 0 {
		set.addN(ReasonForkedSession, report.StrengthStrong, ev.ForkedEnds, "a forked child of the runner wrote an end record")
	}
	if own := ev.Ends - ev.ForkedEnds; own > 1 {
		set.add(ReasonEndDuplicated, report.StrengthStrong, fmt.Sprintf("%d end records from the runner", own))
	}
	exited := !res.TimedOut && res.Signal == ""
	end := ev.End
	if end == nil {
		if exited && (res.ExitCode == 0 || res.ExitCode == 1) {
			why := fmt.Sprintf("the runner exited %d without the plugin's end record", res.ExitCode)
			for _, e := range ev.Events {
				if e.Reason == "exec" {
					why += ": the exit status came from an exec'd program"
				}
			}
			set.add(ReasonEndMissing, report.StrengthStrong, why)
		}
		return
	}
	if exited && end.ExitStatus != res.ExitCode {
		set.add(ReasonExitMismatch, report.StrengthStrong, fmt.Sprintf("pytest ended with %d, the runner exited %d", end.ExitStatus, res.ExitCode))
	}
	if end.ReportSHA256 != ev.ReportSHA256 || end.ReportBytes != ev.ReportBytes {
		set.add(ReasonReportMismatch, report.StrengthStrong, fmt.Sprintf("the plugin wrote %d bytes of report, the report pipe carried %d other ones", end.ReportBytes, ev.ReportBytes))
	} else if cases, err := ParseJUnit(res.JUnit); err == nil && len(cases) != end.Cases && !res.JUnitTruncated {
		set.add(ReasonReportMismatch, report.StrengthStrong, fmt.Sprintf("the plugin wrote %d test cases, the report holds %d", end.Cases, len(cases)))
	}
	if res.OutputTruncated {
		return
	}
	summary, ok := pytestSummary(res.Output)
	switch {
	case !ok:
		set.add(ReasonSummaryMissing, report.StrengthWeak, "the output holds no pytest summary line")
	default:
		for _, k := range summaryCategories {
			if summary[k] != end.Tallies[k] {
				set.add(ReasonSummaryMismatch, report.StrengthStrong, fmt.Sprintf("the summary line says %d %s, the plugin counted %d", summary[k], k, end.Tallies[k]))
			}
		}
	}
}

// dirsEvidence adds ReasonDirsUnsealed to set when the wrapper did not see
// its directories sealed just before the runner started.
func dirsEvidence(res *wrapper.Result, set *EvidenceSet) {
	iso := res.Isolation
	if iso.DirsSealed {
		return
	}
	if len(iso.Dirs) == 0 {
		set.add(ReasonDirsUnsealed, report.StrengthWeak, "the wrapper reported no state of its directories")
		return
	}
	for _, d := range iso.Dirs {
		if !d.Sealed {
			set.add(ReasonDirsUnsealed, report.StrengthWeak, fmt.Sprintf("%s: %s (want %s)", d.Path, strings.Join(d.Problems, "; "), d.Want))
		}
	}
}

// summaryCategories are the counts of pytest's summary line that the
// plugin keeps too.
var summaryCategories = []string{"passed", "failed", "error", "skipped", "xfailed", "xpassed"}

// summaryLine is pytest's last line: "=== 1 failed, 3 passed in 0.12s ===",
// "=== no tests ran in 0.01s ===", with "(0:01:02)" after long runs.
var summaryLine = regexp.MustCompile(`(?m)^=+ (.+?) in [0-9.]+s(?: \([0-9:]+\))? =+\r?$`)

// pytestSummary reads the counts of the last summary line of out.
func pytestSummary(out []byte) (map[string]int, bool) {
	all := summaryLine.FindAllSubmatch(out, -1)
	if len(all) == 0 {
		return nil, false
	}
	counts := map[string]int{}
	text := string(all[len(all)-1][1])
	if text == "no tests ran" {
		return counts, true
	}
	for _, part := range strings.Split(text, ", ") {
		n, word, ok := strings.Cut(part, " ")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, false
		}
		if word == "errors" {
			word = "error"
		}
		counts[word] += v
	}
	return counts, true
}

// Merge adds one piece of evidence, with its count and examples, to s.
func (s *EvidenceSet) Merge(e report.Evidence) {
	n := 0
	for _, ex := range e.Examples {
		if n == e.Count {
			break
		}
		s.add(e.Reason, e.Strength, ex)
		n++
	}
	s.addN(e.Reason, e.Strength, e.Count-n, "")
}

// DescribeStrong says each piece of strong evidence of es in words.
func DescribeStrong(es []report.Evidence) []string {
	var out []string
	for _, e := range report.StrongEvidence(es) {
		out = append(out, e.Describe())
	}
	return out
}

// MergeStrong adds the strong evidence of es to s, each example marked
// with prefix. Weak evidence of a second run of the same tree would only
// count the same signals twice.
func MergeStrong(s *EvidenceSet, es []report.Evidence, prefix string) {
	for _, e := range report.StrongEvidence(es) {
		ex := make([]string, len(e.Examples))
		for i, x := range e.Examples {
			ex[i] = prefix + x
		}
		e.Examples = ex
		s.Merge(e)
	}
}

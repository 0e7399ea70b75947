package pipeline

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sampleReport() *report.Report {
	return &report.Report{
		Verdict: report.VerdictFail,
		Trust:   report.TrustIsolated,
		Reasons: []string{"2 of 14 hidden tests did not pass"},
		Counts:  report.Counts{Passed: 12, Failed: 1, Errors: 1, Total: 14},
		Tests: []report.TestResult{
			{ID: "tests/test_spin.py::test_fast", Outcome: report.OutcomePassed},
			{ID: "tests/test_spin.py::test_slow", Outcome: report.OutcomeFailed},
			{ID: "tests/test_spin.py::test_p[@octocat `x` <b>]", Outcome: report.OutcomeError},
		},
		Failed:        []string{"tests/test_spin.py::test_slow", "tests/test_spin.py::test_p[@octocat `x` <b>]"},
		TamperSignals: []report.TamperSignal{{Path: "conftest.py", Reason: "conftest.py can hook the test run"}, {Path: "[click](https://evil.example)/x.pth", Reason: ".pth files run at start-up"}},
		TouchedTests:  []string{"tests/test_existing.py"},
		Image:         "sha256:aaaa", RepoDigest: "sha256:bbbb", TestsDigest: "sha256:cccc",
		Output: "SECRET RUNNER OUTPUT def test_slow(): assert spin() == 2",
	}
}

func TestCompletedCheckRunGolden(t *testing.T) {
	g := Graded{Report: sampleReport(), Version: 3, Digest: "sha256:cccc", DetailsURL: "https://tf.example.com/grades/9",
		Criteria: map[string][]string{"spins fast": {"tests/test_spin.py::test_fast"}, "spins slow": {"tests/test_spin.py::test_slow"}},
		Owner:    "octo-org", Repo: "widgets", Issue: 12}
	cr := CompletedCheckRun("abc123", g)
	if cr.Conclusion != checkrun.ConclusionFailure || cr.Status != checkrun.StatusCompleted ||
		cr.Title != "fail · 1 repository test changed · 2 tamper signals · 12/14 hidden tests passed · trust: isolated" {
		t.Errorf("check run %+v", cr)
	}
	// It explains itself: what the trust means, which issue, reasons as
	// prose, and Reproduce folded away for reviewers.
	for _, want := range []string{"graded against hidden tests v3 of [#12](/octo-org/widgets/issues/12)",
		"Trust isolated: the code under test ran as another user", "- 2 of 14 hidden tests did not pass\n",
		"<details><summary>Reproduce (for reviewers)</summary>"} {
		if !strings.Contains(cr.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, cr.Summary)
		}
	}
	if strings.Contains(cr.Summary, "SECRET RUNNER OUTPUT") {
		t.Error("the summary shows runner output")
	}
	golden := filepath.Join("testdata", "summary.md")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(cr.Summary), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if cr.Summary != string(want) {
		t.Errorf("summary differs from %s (go test -update to accept):\n%s", golden, cr.Summary)
	}
}

// TestSummaryEscapes: ids and paths come from the tree under test; none may
// mention someone, link, or inject HTML or markdown.
func TestSummaryEscapes(t *testing.T) {
	s := Summary(Graded{Report: sampleReport(), Version: 1, Digest: "sha256:cccc"})
	for _, line := range strings.Split(s, "\n") {
		for _, bad := range []string{"@octocat", "[click]", "<b>"} {
			if i := strings.Index(line, bad); i >= 0 && !insideCodeSpan(line, i) {
				t.Errorf("%q outside a code span: %s", bad, line)
			}
		}
	}
	if got := code("a `b` c"); got != "`` a `b` c ``" {
		t.Errorf("code = %q", got)
	}
	if got := code("x\ny"); got != "`x y`" {
		t.Errorf("code = %q", got)
	}
}

func TestSummaryFitsGitHub(t *testing.T) {
	r := sampleReport()
	r.Failed = nil
	for i := range 5000 {
		r.Failed = append(r.Failed, "tests/test_a_very_long_module_name_for_size.py::test_case_number_"+strings.Repeat("é", 10)+string(rune('a'+i%26)))
	}
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"})
	if len(s) > checkrun.MaxSummary || !utf8.ValidString(s) {
		t.Fatalf("summary is %d bytes (valid UTF-8: %v)", len(s), utf8.ValidString(s))
	}
	if !strings.Contains(s, "more\n") || !strings.Contains(s, "Reproduce (for reviewers)") {
		t.Error("a long summary must say how many ids it left out and keep the reproduce section")
	}
}

func TestConclusions(t *testing.T) {
	for v, want := range map[report.Verdict]string{
		report.VerdictPass: "success", report.VerdictFail: "failure", report.VerdictError: "failure",
		report.VerdictTampered: "failure", report.VerdictContaminated: "failure", report.VerdictInvalidTask: "action_required",
	} {
		r := sampleReport()
		r.Verdict = v
		cr := CompletedCheckRun("abc", Graded{Report: r})
		if cr.Conclusion != want {
			t.Errorf("%s -> %s, want %s", v, cr.Conclusion, want)
		}
		if v == report.VerdictTampered && !strings.HasPrefix(cr.Title, "tampered · ") {
			t.Errorf("title %q does not say tampered", cr.Title)
		}
	}
}

// insideCodeSpan reports whether byte i of line lies inside a CommonMark
// code span: a run of n backticks up to the next run of exactly n.
func insideCodeSpan(line string, i int) bool {
	run := func(at int) int {
		n := 0
		for at+n < len(line) && line[at+n] == '`' {
			n++
		}
		return n
	}
	at := 0
	for at < len(line) {
		n := run(at)
		if n == 0 {
			at++
			continue
		}
		end := at + n
		for end < len(line) && run(end) != n {
			end += max(run(end), 1)
		}
		if end >= len(line) {
			return false // an unclosed run is literal backticks
		}
		if i > at && i < end {
			return true
		}
		at = end + n
	}
	return false
}

// decoyReport is an attack's report: 49,000 decoy files that each raise a
// signal, sorted before the one real signal, beside runtime evidence.
func decoyReport() *report.Report {
	r := sampleReport()
	r.Verdict, r.Reasons = report.VerdictPass, []string{"all 14 hidden tests passed", "runtime signals: 3"}
	r.Counts, r.Failed = report.Counts{Passed: 14, Total: 14}, nil
	r.TamperSignals = nil
	for i := range 49_000 {
		r.TamperSignals = append(r.TamperSignals, report.TamperSignal{Path: fmt.Sprintf("decoys/d%05d/conftest.py", i), Reason: "conftest.py can hook the test run"})
	}
	r.TamperSignals = append(r.TamperSignals, report.TamperSignal{Path: "wordstats/\u202estats.py", Reason: "source mentions sys._getframe (can reach the caller's frames)"})
	r.Evidence = []report.Evidence{
		{Reason: "frame_access", Strength: report.StrengthWeak, Count: 2, Examples: []string{"sys._getframe from /repo/wordstats/stats.py:3"}},
		{Reason: "settrace", Strength: report.StrengthWeak, Count: 1, Examples: []string{"sys.settrace"}},
	}
	return r
}

// TestSummaryKeepsTheSignalThatMatters: however many decoys raise
// signals, the summary names every kind with its count and the total, and
// still fits GitHub's limit.
func TestSummaryKeepsTheSignalThatMatters(t *testing.T) {
	s := Summary(Graded{Report: decoyReport(), Version: 1, Digest: "sha256:cccc"})
	if len(s) > checkrun.MaxSummary || !utf8.ValidString(s) {
		t.Fatalf("summary is %d bytes (valid UTF-8: %v)", len(s), utf8.ValidString(s))
	}
	for _, want := range []string{
		"sys._getframe", "49001 tamper signals", "| 49000 | `conftest.py can hook the test run`",
		"| 1 | `source mentions sys._getframe (can reach the caller's frames)` | `wordstats/\\u202estats.py` |",
		"3 runtime signals", "`frame_access`", "Reproduce (for reviewers)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary does not contain %q:\n%s", want, s[:min(len(s), 3000)])
		}
	}
	if strings.ContainsRune(s, '\u202e') {
		t.Error("a bidirectional override reached the summary unescaped")
	}
}

// TestTitleRuntimeSignals: weak evidence keeps the verdict, and the title
// says how much of it there was, after the repository tests the pull
// request changed and the tamper signals.
func TestTitleRuntimeSignals(t *testing.T) {
	r := decoyReport()
	if got, want := Title(r), "pass · 1 repository test changed · 49001 tamper signals · runtime signals: 3 · 14/14 hidden tests passed · trust: isolated"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	r.TouchedTests, r.TamperSignals = nil, nil
	if got, want := Title(r), "pass · runtime signals: 3 · 14/14 hidden tests passed · trust: isolated"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if cr := CompletedCheckRun("abc", Graded{Report: r}); cr.Conclusion != checkrun.ConclusionSuccess {
		t.Errorf("weak evidence changed the conclusion to %s", cr.Conclusion)
	}
	r.Verdict = report.VerdictTampered
	if got, want := Title(r), "tampered · runtime signals: 3 · 14/14 hidden tests passed · trust: isolated"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	r.Evidence = nil
	r.Verdict = report.VerdictPass
	if got, want := Title(r), "14/14 hidden tests passed · trust: isolated"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	r.TouchedTests = []string{"tests/test_a.py", "tests/test_b.py"}
	if got, want := Title(r), "pass · 2 repository tests changed · 14/14 hidden tests passed · trust: isolated"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// TestSummaryEscapesControlCharacters: paths and ids from the tree cannot
// reorder or hide the text around them.
func TestSummaryEscapesControlCharacters(t *testing.T) {
	r := sampleReport()
	r.TamperSignals = []report.TamperSignal{{Path: "a\u202egnp.py", Reason: "conftest.py can hook the test run"}, {Path: "b\x1b[2Jx.py", Reason: "conftest.py can hook the test run"}, {Path: "c.py | 1 | `forged reason` | d.py", Reason: "conftest.py can hook the test run"}}
	r.TouchedTests = []string{"tests/\u2066test_x.py"}
	r.Failed = []string{"tests/test_spin.py::test_slow\u200b"}
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"})
	for _, bad := range []rune{'\u202e', '\x1b', '\u2066', '\u200b'} {
		if strings.ContainsRune(s, bad) {
			t.Errorf("summary holds %U unescaped", bad)
		}
	}
	for _, want := range []string{`a\u202egnp.py`, `b\x1b[2Jx.py`, `tests/\u2066test_x.py`, `test_slow\u200b`, "`` c.py \\| 1 \\| `forged reason` \\| d.py ``"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary does not show %s", want)
		}
	}
}

// TestSummaryDetectorsFit: the longest paths and the most kinds of
// evidence and signal still leave the totals, every kind and the reproduce
// section in the summary.
func TestSummaryDetectorsFit(t *testing.T) {
	r := decoyReport()
	long := strings.Repeat("\U0001F600", 2000)
	r.Evidence = nil
	for i := range 60 {
		r.Evidence = append(r.Evidence, report.Evidence{Reason: fmt.Sprintf("reason_%02d", i), Strength: report.StrengthWeak, Count: 1,
			Examples: []string{long + "1", long + "2", long + "3", long + "4", long + "5"}})
	}
	for i := range 200 {
		r.TamperSignals = append(r.TamperSignals, report.TamperSignal{Path: fmt.Sprintf("%s/%d.py", long, i), Reason: "source mentions ctypes (can call into the C library)"})
		r.TouchedTests = append(r.TouchedTests, fmt.Sprintf("tests/%s%d.py", long, i))
		r.Contamination = append(r.Contamination, report.CanarySighting{HiddenFile: fmt.Sprintf("tests/%s%d.py", long, i), Where: "repo:" + long})
	}
	r.Contaminated = true
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"})
	if len(s) > maxSummaryBytes || !utf8.ValidString(s) {
		t.Fatalf("summary is %d bytes (valid UTF-8: %v)", len(s), utf8.ValidString(s))
	}
	for _, want := range []string{"49201 tamper signals", "`reason_39`", "| … | | 20 more kinds | |", "`source mentions sys._getframe", "`source mentions ctypes", "more touched tests (201 in total)", "more canary sightings (200 in total)", "Reproduce (for reviewers)"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary does not contain %q", want)
		}
	}
}

// TestSummaryMarksFlakyTests: a test that failed and passed when run again
// alone is listed among those that did not pass, marked flaky.
func TestSummaryMarksFlakyTests(t *testing.T) {
	r := &report.Report{Verdict: report.VerdictFail, Trust: report.TrustIsolated, Counts: report.Counts{Passed: 1, Flaky: 1, Total: 2},
		Tests:  []report.TestResult{{ID: "t.py::test_a", Outcome: report.OutcomePassed}, {ID: "t.py::test_b", Outcome: report.OutcomeFlaky}},
		Failed: []string{"t.py::test_b"}}
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:x"})
	if !strings.Contains(s, "- `t.py::test_b` — flaky: failed, then passed when run again alone") {
		t.Errorf("summary does not mark the flaky test:\n%s", s)
	}
}

// TestSummaryShowsTwins: the check run says how many tests ran beside a
// twin, and names the ones that passed beside theirs.
func TestSummaryShowsTwins(t *testing.T) {
	r := sampleReport()
	r.Verdict = report.VerdictTampered
	r.Twins = &report.Twins{Twinned: 9, Of: 10, Untwinnable: 1, Contradictions: []string{"tests/test_a.py::test_x", "tests/test_a.py::test_y"}}
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"})
	for _, want := range []string{
		"**Twins**: 9 of 10 hidden tests ran beside a twin that a correct implementation fails (1 without one); 2 passed beside their twin",
		"- passed beside its twin: `tests/test_a.py::test_x`", "- passed beside its twin: `tests/test_a.py::test_y`",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary does not contain %q:\n%s", want, s)
		}
	}
	r.Twins = &report.Twins{Of: 10, NotRun: "the twin sandbox ended without a report"}
	if s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"}); !strings.Contains(s, "**Twins**: not run for this grade") || strings.Contains(s, "without a report") {
		t.Errorf("a twin run that did not run is not said, or says too much:\n%s", s)
	}
}

// TestSummaryShowsTheEnvironment: the Reproduce section says what the
// grade ran in, and a mirror grade says so; pip's output never shows.
func TestSummaryShowsTheEnvironment(t *testing.T) {
	r := sampleReport()
	r.Environment = &report.Environment{Image: "testfirst-env:0123456789abcdef", Python: "3.11", Packages: []string{"greetlib==1.0"},
		BuiltFrom: []string{"requirements.txt"}, Cached: true}
	r.Network = report.NetworkMirror
	r.Output = "ERROR: pip secret output"
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"})
	want := "- environment: `python 3.11 · image testfirst-env:0123456789abcdef (cached) · 1 package(s): greetlib==1.0 · built from requirements.txt of the base · network: mirror`\n"
	if !strings.Contains(s, "<summary>Reproduce (for reviewers)</summary>") || !strings.Contains(s, want) {
		t.Errorf("summary lacks %q:\n%s", want, s)
	}
	if strings.Contains(s, "pip secret output") {
		t.Error("the runner's output reached the check run")
	}
}

// TestSummarySaysSkips: tests that skip here and on the base are said in
// the title and the summary, apart from the ones that did not pass, with
// the rule that a test which ran on the base may not skip.
func TestSummarySaysSkips(t *testing.T) {
	r := sampleReport()
	r.Verdict, r.Reasons = report.VerdictPass, []string{"all 2 hidden tests passed", "1 hidden test(s) skipped here and skipped on the base as well: reported skipped, not counted against the grade"}
	r.Counts = report.Counts{Passed: 2, Skipped: 1, Total: 3}
	r.Tests = []report.TestResult{
		{ID: "tests/test_spin.py::test_fast", Outcome: report.OutcomePassed},
		{ID: "tests/test_spin.py::test_slow", Outcome: report.OutcomePassed},
		{ID: "tests/test_spin.py::test_numpy", Outcome: report.OutcomeSkipped},
	}
	r.Failed, r.SkippedOnBase = nil, []string{"tests/test_spin.py::test_numpy"}
	r.TouchedTests, r.TamperSignals = nil, nil
	if got, want := Title(r), "2/3 hidden tests passed · 1 skipped as on the base · trust: isolated"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	s := Summary(Graded{Report: r, Version: 1})
	for _, want := range []string{"### Hidden tests that skip here and on the base", "- `tests/test_spin.py::test_numpy`", "A test that ran on the base and skips here does not pass"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary does not say %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "did not pass\n\n- `tests/test_spin.py::test_numpy`") {
		t.Errorf("an excused skip is listed among the tests that did not pass:\n%s", s)
	}
}

// TestCheckRunSaysWhatCriteriaAsk: a criterion is named with the issue's
// text, not only "AC1", and that text, written by whoever opened the issue,
// mentions no one and links nowhere.
func TestCheckRunSaysWhatCriteriaAsk(t *testing.T) {
	g := Graded{Report: sampleReport(), Version: 1, Digest: "sha256:cccc", IssueBody: "Spin\n\n- [ ] spins fast\n- [ ] spins slow for @octocat, see [this](https://evil.example)\n",
		Criteria: map[string][]string{"AC1": {"tests/test_spin.py::test_fast"}, "AC2": {"tests/test_spin.py::test_slow"}, "extra": {"tests/test_spin.py::test_fast"}}}
	s := CompletedCheckRun("abc", g).Summary
	for _, want := range []string{"| `AC1` spins fast | 1/1 |", "| `AC2` spins slow for \\@octocat, see \\[this\\](https://evil.example) | 0/1 |", "| `extra` | 1/1 |"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, " @octocat") || strings.Contains(s, "[this](https://evil.example)") {
		t.Errorf("the criterion's text mentions or links:\n%s", s)
	}
}

// TestCheckRunSaysHowTheTestsWereApproved: reviewers, who cannot open the
// card, read on the check run who signed the approved tests after how long,
// and how strong they measured; a login cannot inject markdown.
func TestCheckRunSaysHowTheTestsWereApproved(t *testing.T) {
	g := Graded{Report: sampleReport(), Version: 2, Digest: "sha256:cccc", Approval: &ApprovalFacts{
		Signers: []SignerFact{{Login: "alice", ReviewSeconds: 252, Fast: false}, {Login: "w[x](y)", ReviewSeconds: 20, Fast: true}},
		Tests:   14, Guards: 3, Mutation: &report.Mutation{Mutants: 9, Killed: 7, Survivors: []report.Survivor{{File: "SECRET.py", Before: "secret before"}, {File: "x.py"}}},
		Twinned: 12, TwinsOf: 14,
	}}
	s := CompletedCheckRun("abc", g).Summary
	for _, want := range []string{"### The approved tests", "- signed by `alice` after 4m12s on the approval card\n",
		"- signed by `w[x](y)` after 20s on the approval card (a fast approval", "- 14 hidden tests, 3 of them guard tests",
		"these tests miss 2 of 9 changes to the reference", "- 12 of 14 tests have twins"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "SECRET") || strings.Contains(s, "secret before") {
		t.Errorf("the summary shows a survivor of the reference patch:\n%s", s)
	}
}

// TestSummarySaysWhatTheTreeDecided: a split grade's summary says how many
// passing tests were decided outside the code under test, and the class
// names it reports (the tree's own) reach the markdown as prose.
func TestSummarySaysWhatTheTreeDecided(t *testing.T) {
	r := sampleReport()
	r.Trust = report.TrustSplit
	r.Sealing = &report.Sealing{Passing: 2, Sealed: 1, Decided: []report.DecidedTest{{ID: "tests/test_x.py::test_a", By: []string{"__eq__ of [click](http://evil.example) @octocat"}}}}
	s := Summary(Graded{Report: r, Version: 1, Digest: "sha256:cccc"})
	if !strings.Contains(s, "1 of 2 passing tests were decided outside the code under test") {
		t.Errorf("summary does not say how much was sealed:\n%s", s)
	}
	if !strings.Contains(s, "Trust split:") {
		t.Errorf("summary does not say what trust split means:\n%s", s)
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "1 of 2") && (!strings.Contains(line, `\[click\]`) || !strings.Contains(line, `\@octocat`)) {
			t.Errorf("the tree's class name reaches the summary unescaped: %s", line)
		}
	}
}

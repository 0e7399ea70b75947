package evaluate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader/evaluate/evaluatetest"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// The hidden tests of the Evaluation fixtures, as the wrapper lists them.
var evalExpected = []wrapper.ExpectedTest{
	{File: "tests/test_x.py", Name: "test_a"},
	{File: "tests/test_x.py", Name: "test_b"},
	{File: "tests/test_x.py", Name: "test_p"},
	{File: "tests/test_x.py", Class: "TestC", Name: "test_m"},
	{File: "tests/test_y.py", Name: "test_c"},
}

// honestCases is an honest run's report: test_b fails, the rest of the
// hidden tests pass, the must-pass sentinel passes and the must-fail one
// fails.
func honestCases() []string {
	return []string{
		evaluatetest.PassedCase("tests.test_x", "test_a"),
		evaluatetest.FailedCase("tests.test_x", "test_b"),
		evaluatetest.PassedCase("tests.test_x", "test_p[1-2]"),
		evaluatetest.PassedCase("tests.test_x", "test_p[3-4]"),
		evaluatetest.PassedCase("tests.test_x.TestC", "test_m"),
		evaluatetest.PassedCase("tests.test_y", "test_c"),
		evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass),
		evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail),
	}
}

// allPassCases is a report where every hidden test passes and the sentinels
// come out right.
func allPassCases() []string {
	cases := honestCases()
	cases[1] = evaluatetest.PassedCase("tests.test_x", "test_b")
	return cases
}

// without returns cases without the ones that mention name.
func without(cases []string, name string) []string {
	var out []string
	for _, c := range cases {
		if !strings.Contains(c, `name="`+name+`"`) {
			out = append(out, c)
		}
	}
	return out
}

// pytestRun is a wrapper result of a pytest run that reported cases and
// exited with code.
func pytestRun(code int, cases ...string) *wrapper.Result {
	return &wrapper.Result{
		Expected:  evalExpected,
		Sentinels: evaluatetest.Sentinels,
		Runner:    wrapper.PytestCommand(),
		ExitCode:  code,
		JUnit:     evaluatetest.JUnitReport(cases...),
		Seconds:   1.5,
	}
}

// with applies edits to r and returns it.
func with(r *wrapper.Result, edits ...func(*wrapper.Result)) *wrapper.Result {
	for _, e := range edits {
		e(r)
	}
	return r
}

// honestTests are the outcomes of honestCases, sorted by id.
var honestTests = []report.TestResult{
	{ID: "tests/test_x.py::TestC::test_m", Outcome: report.OutcomePassed},
	{ID: "tests/test_x.py::test_a", Outcome: report.OutcomePassed},
	{ID: "tests/test_x.py::test_b", Outcome: report.OutcomeFailed},
	{ID: "tests/test_x.py::test_p[1-2]", Outcome: report.OutcomePassed},
	{ID: "tests/test_x.py::test_p[3-4]", Outcome: report.OutcomePassed},
	{ID: "tests/test_y.py::test_c", Outcome: report.OutcomePassed},
}

// replaceOutcome returns a copy of tests with the outcome of id set.
func replaceOutcome(tests []report.TestResult, id string, o report.Outcome) []report.TestResult {
	out := make([]report.TestResult, len(tests))
	copy(out, tests)
	for i := range out {
		if out[i].ID == id {
			out[i].Outcome = o
		}
	}
	return out
}

// allOutcome is the five listed hidden tests (test_p unparametrized) with
// tests/test_x.py's outcome set to x and tests/test_y.py's to y.
func allOutcome(x, y report.Outcome) []report.TestResult {
	return []report.TestResult{
		{ID: "tests/test_x.py::TestC::test_m", Outcome: x},
		{ID: "tests/test_x.py::test_a", Outcome: x},
		{ID: "tests/test_x.py::test_b", Outcome: x},
		{ID: "tests/test_x.py::test_p", Outcome: x},
		{ID: "tests/test_y.py::test_c", Outcome: y},
	}
}

// evalWant is what an Evaluation must hold. Problems and tampered are
// substrings of the evaluation's, one each, in order; tests is compared
// whole unless skipTests.
type evalWant struct {
	tests     []report.TestResult
	skipTests bool
	allPassed bool
	problems  []string
	tampered  []string
	notes     []string
	sentinels string
}

func checkEvaluation(t *testing.T, got *Evaluation, want evalWant) {
	t.Helper()
	if !want.skipTests {
		if diff := cmp.Diff(want.tests, got.Tests); diff != "" {
			t.Errorf("tests (-want +got):\n%s", diff)
		}
	}
	if got.AllPassed(nil) != want.allPassed {
		t.Errorf("allPassed() = %v, want %v", got.AllPassed(nil), want.allPassed)
	}
	evaluatetest.CheckMessages(t, "problems", got.Problems, want.problems)
	evaluatetest.CheckMessages(t, "tampered", got.Tampered, want.tampered)
	evaluatetest.CheckMessages(t, "notes", got.Notes, want.notes)
	if got.Sentinels != want.sentinels {
		t.Errorf("sentinels = %q, want %q", got.Sentinels, want.sentinels)
	}
}

func TestEvaluatePytest(t *testing.T) {
	tests := []struct {
		name string
		res  *wrapper.Result
		want evalWant
	}{
		{
			name: "honest run with one hidden failure",
			res:  pytestRun(1, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK},
		},
		{
			name: "every hidden test passes; the failing sentinel makes the exit 1",
			res:  pytestRun(1, allPassCases()...),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
			},
		},
		{
			name: "exit 0 although the report shows failures",
			res:  pytestRun(0, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, problems: []string{"exited 0 although its report shows failures"}},
		},
		{
			name: "exit 1 with no failure in the report",
			res: with(pytestRun(1, without(allPassCases(), evaluatetest.SentinelFail)...), func(r *wrapper.Result) {
				r.Sentinels = evaluatetest.Sentinels[:1]
			}),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"exited 1 although its report shows no failure"},
			},
		},
		{
			name: "exit 2",
			res:  pytestRun(2, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, problems: []string{"exited 2 (interrupted)"}},
		},
		{
			name: "exit 3",
			res:  pytestRun(3, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, problems: []string{"exited 3 (internal error)"}},
		},
		{
			name: "exit 4",
			res:  pytestRun(4, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, problems: []string{"exited 4 (usage error)"}},
		},
		{
			name: "exit 5",
			res:  pytestRun(5, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, problems: []string{"exited 5 (no tests collected)"}},
		},
		{
			name: "unknown exit status",
			res:  pytestRun(70, honestCases()...),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, problems: []string{"exited 70 (unknown exit status)"}},
		},
		{
			name: "killed by a signal",
			res: with(pytestRun(-1), func(r *wrapper.Result) {
				r.Signal, r.JUnit = "SIGKILL", nil
			}),
			want: evalWant{
				tests:     allOutcome(report.OutcomeNotRun, report.OutcomeNotRun),
				sentinels: report.SentinelsAbsent,
				problems:  []string{"the runner was killed by SIGKILL", "the runner wrote no JUnit report"},
			},
		},
		{
			name: "killed by a signal after a full report",
			res: with(pytestRun(-1, allPassCases()...), func(r *wrapper.Result) {
				r.Signal = "SIGSEGV"
			}),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"the runner was killed by SIGSEGV"},
			},
		},
		{
			name: "timed out",
			res: with(pytestRun(-1), func(r *wrapper.Result) {
				r.TimedOut, r.Signal, r.Seconds, r.JUnit = true, "SIGKILL", 600, nil
			}),
			want: evalWant{
				tests:     allOutcome(report.OutcomeFailed, report.OutcomeFailed),
				sentinels: report.SentinelsAbsent,
				notes:     []string{"timed out: the test run was killed at the end of its budget after 600s"},
			},
		},
		{
			// A report the run wrote before it hung is not believed: a
			// killed run passes nothing.
			name: "timed out after writing a report that passes",
			res: with(pytestRun(-1, allPassCases()...), func(r *wrapper.Result) {
				r.TimedOut, r.Signal, r.Seconds = true, "SIGKILL", 600
			}),
			want: evalWant{
				tests: []report.TestResult{
					{ID: "tests/test_x.py::TestC::test_m", Outcome: report.OutcomeFailed},
					{ID: "tests/test_x.py::test_a", Outcome: report.OutcomeFailed},
					{ID: "tests/test_x.py::test_b", Outcome: report.OutcomeFailed},
					{ID: "tests/test_x.py::test_p[1-2]", Outcome: report.OutcomeFailed},
					{ID: "tests/test_x.py::test_p[3-4]", Outcome: report.OutcomeFailed},
					{ID: "tests/test_y.py::test_c", Outcome: report.OutcomeFailed},
				},
				sentinels: report.SentinelsOK,
				notes:     []string{"timed out: the test run was killed at the end of its budget after 600s"},
			},
		},
		{
			name: "JUnit report missing",
			res:  with(pytestRun(1), func(r *wrapper.Result) { r.JUnit = nil }),
			want: evalWant{
				tests:     allOutcome(report.OutcomeNotRun, report.OutcomeNotRun),
				sentinels: report.SentinelsAbsent,
				problems:  []string{"the runner wrote no JUnit report"},
			},
		},
		{
			name: "JUnit report cut short",
			res: with(pytestRun(1, allPassCases()...), func(r *wrapper.Result) {
				r.JUnit = r.JUnit[:len(r.JUnit)-30]
			}),
			want: evalWant{
				tests:     allOutcome(report.OutcomeNotRun, report.OutcomeNotRun),
				sentinels: report.SentinelsAbsent,
				problems:  []string{"truncated"},
			},
		},
		{
			name: "JUnit report with two roots",
			res: with(pytestRun(1, allPassCases()...), func(r *wrapper.Result) {
				r.JUnit = append(r.JUnit, evaluatetest.JUnitReport(allPassCases()...)...)
			}),
			want: evalWant{
				tests:     allOutcome(report.OutcomeNotRun, report.OutcomeNotRun),
				sentinels: report.SentinelsAbsent,
				problems:  []string{"more than one root element"},
			},
		},
		{
			name: "JUnit report larger than the limit",
			res:  with(pytestRun(1, allPassCases()...), func(r *wrapper.Result) { r.JUnitTruncated = true }),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"the JUnit report was larger than the limit and was cut"},
			},
		},
		{
			name: "a hidden test missing from the report",
			res:  pytestRun(1, without(allPassCases(), "test_a")...),
			want: evalWant{
				tests:     replaceOutcome(replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed), "tests/test_x.py::test_a", report.OutcomeNotRun),
				sentinels: report.SentinelsOK,
				problems:  []string{"1 hidden test(s) missing from the runner's report, e.g. tests/test_x.py::test_a"},
			},
		},
		{
			name: "a testcase that is not a hidden test",
			res:  pytestRun(1, append(allPassCases(), evaluatetest.PassedCase("tests.test_x", "test_extra"))...),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"reported 1 test(s) that are not hidden tests"},
			},
		},
		{
			name: "a passed module-level testcase is not a hidden test",
			res:  pytestRun(1, append(allPassCases(), evaluatetest.PassedCase("", "tests.test_x"))...),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"not hidden tests"},
			},
		},
		{
			name: "collection error of a module",
			res: pytestRun(1,
				evaluatetest.ErrorCase("", "tests.test_x"),
				evaluatetest.PassedCase("tests.test_y", "test_c"),
				evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass),
				evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail),
			),
			want: evalWant{tests: allOutcome(report.OutcomeError, report.OutcomePassed), sentinels: report.SentinelsOK},
		},
		{
			name: "module-level skip",
			res: pytestRun(1,
				evaluatetest.SkippedCase("", "tests.test_x"),
				evaluatetest.PassedCase("tests.test_y", "test_c"),
				evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass),
				evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail),
			),
			want: evalWant{tests: allOutcome(report.OutcomeSkipped, report.OutcomePassed), sentinels: report.SentinelsOK},
		},
		{
			name: "must-fail sentinel came out passed",
			res: pytestRun(0, append(without(allPassCases(), evaluatetest.SentinelFail),
				evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail))...),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsWrong,
				tampered:  []string{"a sentinel test that must fail came out passed"},
			},
		},
		{
			name: "must-pass sentinel failed",
			res: pytestRun(1, append(without(allPassCases(), evaluatetest.SentinelPass),
				evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass))...),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsWrong,
				tampered:  []string{"a sentinel test that must pass came out failed"},
			},
		},
		{
			name: "sentinel missing from the report",
			res:  pytestRun(1, without(allPassCases(), evaluatetest.SentinelPass)...),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsWrong,
				tampered:  []string{"a sentinel test is missing from a well-formed runner report"},
			},
		},
		{
			name: "wrapper error before the run",
			res:  &wrapper.Result{Error: "read input archive: unexpected EOF"},
			want: evalWant{sentinels: report.SentinelsAbsent, problems: []string{"read input archive: unexpected EOF"}},
		},
		{
			name: "wrapper error after the run",
			res: with(pytestRun(1, allPassCases()...), func(r *wrapper.Result) {
				r.Error = "kill leftover processes: permission denied"
			}),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"wrapper: kill leftover processes: permission denied"},
			},
		},
		{
			name: "hidden tests do not parse",
			res: with(pytestRun(1, allPassCases()...), func(r *wrapper.Result) {
				r.ListError = `hidden tests do not parse: ["tests/test_z.py: invalid syntax"]`
			}),
			want: evalWant{
				tests:     replaceOutcome(honestTests, "tests/test_x.py::test_b", report.OutcomePassed),
				allPassed: true,
				sentinels: report.SentinelsOK,
				problems:  []string{"hidden tests do not parse"},
			},
		},
		{
			name: "no hidden tests",
			res: with(pytestRun(1, evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass), evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail)),
				func(r *wrapper.Result) { r.Expected = nil }),
			want: evalWant{sentinels: report.SentinelsOK, problems: []string{"no hidden tests found"}},
		},
		{
			name: "processes outlived the runner",
			res:  with(pytestRun(1, honestCases()...), func(r *wrapper.Result) { r.Leftovers = 3 }),
			want: evalWant{tests: honestTests, sentinels: report.SentinelsOK, notes: []string{"3 process(es) of the code under test outlived the runner"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEvaluation(t, evaluatePytest(tt.res), tt.want)
		})
	}
}

// TestEvaluatePytestNoSentinels: a pytest result that carries no sentinels
// at all is missing evidence the wrapper always sends in pytest mode.
func TestEvaluatePytestNoSentinels(t *testing.T) {
	res := with(pytestRun(0, without(without(allPassCases(), evaluatetest.SentinelPass), evaluatetest.SentinelFail)...), func(r *wrapper.Result) {
		r.Sentinels = nil
	})
	ev := evaluatePytest(res)
	if len(ev.Problems) == 0 {
		t.Errorf("a pytest run without sentinels gave no problem; sentinels = %q", ev.Sentinels)
	}
}

// TestEvaluatePytestSkippedSentinel: a must-fail sentinel that came out
// skipped did not come out as expected.
func TestEvaluatePytestSkippedSentinel(t *testing.T) {
	res := pytestRun(1, append(without(honestCases(), evaluatetest.SentinelFail), evaluatetest.SkippedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail))...)
	ev := evaluatePytest(res)
	if ev.Sentinels == report.SentinelsOK {
		t.Errorf("sentinels = %q for a must-fail sentinel that was skipped", ev.Sentinels)
	}
}

func TestEvaluateCommand(t *testing.T) {
	tests := []struct {
		name string
		res  *wrapper.Result
		want evalWant
	}{
		{
			name: "exit 0 without a report",
			res:  &wrapper.Result{Runner: []string{"/usr/bin/make", "test"}},
			want: evalWant{tests: []report.TestResult{{ID: "make", Outcome: report.OutcomePassed}}, allPassed: true, sentinels: report.SentinelsNone},
		},
		{
			name: "exit 3 without a report",
			res:  &wrapper.Result{Runner: []string{"/usr/bin/make", "test"}, ExitCode: 3},
			want: evalWant{tests: []report.TestResult{{ID: "make", Outcome: report.OutcomeFailed}}, sentinels: report.SentinelsNone},
		},
		{
			name: "killed by a signal without a report",
			res:  &wrapper.Result{Runner: []string{"/usr/bin/make"}, ExitCode: -1, Signal: "SIGKILL"},
			want: evalWant{tests: []report.TestResult{{ID: "make", Outcome: report.OutcomeFailed}}, sentinels: report.SentinelsNone},
		},
		{
			name: "timed out without a report",
			res:  &wrapper.Result{Runner: []string{"/usr/bin/make"}, ExitCode: -1, Signal: "SIGKILL", TimedOut: true, Seconds: 30},
			want: evalWant{tests: []report.TestResult{{ID: "make", Outcome: report.OutcomeFailed}}, sentinels: report.SentinelsNone, problems: []string{"killed at its deadline after 30s"}},
		},
		{
			name: "no runner",
			res:  &wrapper.Result{Error: "test command: exec: \"mk\": executable file not found in $PATH"},
			want: evalWant{
				tests:     []report.TestResult{{ID: "command", Outcome: report.OutcomePassed}},
				allPassed: true,
				sentinels: report.SentinelsNone,
				problems:  []string{"wrapper: test command"},
			},
		},
		{
			name: "a JUnit report",
			res: &wrapper.Result{
				Runner:   []string{"/usr/bin/make"},
				ExitCode: 2,
				JUnit:    evaluatetest.JUnitReport(evaluatetest.PassedCase("pkg.mod", "test_a"), evaluatetest.FailedCase("pkg.mod", "test_b"), evaluatetest.SkippedCase("", "test_c")),
			},
			want: evalWant{
				tests: []report.TestResult{
					{ID: "pkg.mod::test_a", Outcome: report.OutcomePassed},
					{ID: "pkg.mod::test_b", Outcome: report.OutcomeFailed},
					{ID: "test_c", Outcome: report.OutcomeSkipped},
				},
				sentinels: report.SentinelsNone,
			},
		},
		{
			name: "a JUnit report with no failure and a failing exit",
			res: &wrapper.Result{
				Runner:   []string{"/usr/bin/make"},
				ExitCode: 2,
				JUnit:    evaluatetest.JUnitReport(evaluatetest.PassedCase("pkg.mod", "test_a")),
			},
			want: evalWant{
				tests:     []report.TestResult{{ID: "pkg.mod::test_a", Outcome: report.OutcomePassed}},
				allPassed: true,
				sentinels: report.SentinelsNone,
				problems:  []string{"the command exited 2 although its report shows no failure"},
			},
		},
		{
			name: "a malformed JUnit report",
			res:  &wrapper.Result{Runner: []string{"/usr/bin/make"}, JUnit: []byte(`<testsuite><testcase name="a">`)},
			want: evalWant{sentinels: report.SentinelsNone, problems: []string{"truncated"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEvaluation(t, Command(tt.res), tt.want)
		})
	}
}

// TestEvaluateCommandJUnitTruncated: a command's JUnit report that was cut
// at the limit must not be graded as if it were whole.
func TestEvaluateCommandJUnitTruncated(t *testing.T) {
	res := &wrapper.Result{
		Runner:         []string{"/usr/bin/make"},
		JUnit:          evaluatetest.JUnitReport(evaluatetest.PassedCase("pkg.mod", "test_a")),
		JUnitTruncated: true,
	}
	ev := Command(res)
	if len(ev.Problems) == 0 {
		t.Errorf("a truncated JUnit report gave no problem; tests = %v", ev.Tests)
	}
}

// TestEvaluateIDsCannotSmuggleText: ids reach the implementer, so a bent
// runner must not be able to carry hidden-test text through them, nor
// through reasons.
func TestEvaluateIDsCannotSmuggleText(t *testing.T) {
	const secret = "def test_a(): assert widget(3) == 17"
	cases := append(honestCases(),
		evaluatetest.FailedCase("tests.test_x", "test_p["+secret+"]"),
		evaluatetest.FailedCase("tests.test_x", "test_p[7-8]"),
		evaluatetest.FailedCase("tests.test_x", "test_p[1-2]"), // reported twice
		evaluatetest.FailedCase("tests.test_q", "SECRET_BODY_CHUNK"),
	)
	ev := evaluatePytest(pytestRun(1, cases...))
	var all []string
	for _, tr := range ev.Tests {
		all = append(all, tr.ID)
	}
	all = append(all, ev.Problems...)
	all = append(all, ev.Tampered...)
	text := strings.Join(all, "\n")
	for _, leak := range []string{"widget", "SECRET_BODY_CHUNK"} {
		if strings.Contains(text, leak) {
			t.Errorf("%q reached the ids or reasons:\n%s", leak, text)
		}
	}
	for _, want := range []string{"tests/test_x.py::test_p[case-3]", "tests/test_x.py::test_p[7-8]"} {
		if !strings.Contains(text, want) {
			t.Errorf("ids lack %q:\n%s", want, text)
		}
	}
	for _, want := range []string{"reported tests/test_x.py::test_p[1-2] twice", "1 test(s) that are not hidden tests"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}

	var many []string
	for i := range maxCasesPerTest + 5 {
		many = append(many, evaluatetest.PassedCase("tests.test_x", fmt.Sprintf("test_p[%d]", i)))
	}
	ev = evaluatePytest(pytestRun(1, append(honestCases(), many...)...))
	if !strings.Contains(strings.Join(ev.Problems, "\n"), "more than 256 cases") {
		t.Errorf("no problem for %d cases of one test: %q", len(many), ev.Problems)
	}
}

// hostedSentinels sit inside hidden module tests/test_x.py, as the wrapper
// writes them.
var hostedSentinels = []wrapper.Sentinel{
	{ClassName: "tests.test_x", Name: "test_a_b", MustPass: true},
	{ClassName: "tests.test_x", Name: "test_b_a", MustPass: false},
}

// TestEvaluateHostedSentinels: sentinels inside a hidden module that failed
// to import share its fate, so their absence is explained by the module's
// collection error; a collection error beside reports of the module's own
// tests explains nothing.
func TestEvaluateHostedSentinels(t *testing.T) {
	hosted := func(code int, cases ...string) *wrapper.Result {
		return with(pytestRun(code, cases...), func(r *wrapper.Result) { r.Sentinels = hostedSentinels })
	}
	tests := []struct {
		name string
		res  *wrapper.Result
		want evalWant
	}{
		{
			name: "honest run",
			res: hosted(1, evaluatetest.PassedCase("tests.test_x", "test_a"), evaluatetest.PassedCase("tests.test_x", "test_b"), evaluatetest.PassedCase("tests.test_x", "test_p"),
				evaluatetest.PassedCase("tests.test_x.TestC", "test_m"), evaluatetest.PassedCase("tests.test_y", "test_c"),
				evaluatetest.PassedCase("tests.test_x", "test_a_b"), evaluatetest.FailedCase("tests.test_x", "test_b_a")),
			want: evalWant{tests: allOutcome(report.OutcomePassed, report.OutcomePassed), allPassed: true, sentinels: report.SentinelsOK},
		},
		{
			name: "the host module does not import",
			res:  hosted(1, evaluatetest.ErrorCase("", "tests.test_x"), evaluatetest.PassedCase("tests.test_y", "test_c")),
			want: evalWant{tests: allOutcome(report.OutcomeError, report.OutcomePassed), sentinels: report.SentinelsAbsent},
		},
		{
			name: "every hidden module skipped as a whole",
			res:  hosted(5, evaluatetest.SkippedCase("", "tests.test_x"), evaluatetest.SkippedCase("", "tests.test_y")),
			want: evalWant{tests: allOutcome(report.OutcomeSkipped, report.OutcomeSkipped), sentinels: report.SentinelsAbsent},
		},
		{
			name: "exit 5 with a test that ran",
			res:  hosted(5, evaluatetest.SkippedCase("", "tests.test_x"), evaluatetest.PassedCase("tests.test_y", "test_c")),
			want: evalWant{tests: allOutcome(report.OutcomeSkipped, report.OutcomePassed), sentinels: report.SentinelsAbsent, problems: []string{"exited 5 (no tests collected)"}},
		},
		{
			name: "a forged collection error beside passing tests of the module",
			res: hosted(1, evaluatetest.PassedCase("tests.test_x", "test_a"), evaluatetest.PassedCase("tests.test_x", "test_b"), evaluatetest.PassedCase("tests.test_x", "test_p"),
				evaluatetest.PassedCase("tests.test_x.TestC", "test_m"), evaluatetest.PassedCase("tests.test_y", "test_c"), evaluatetest.ErrorCase("", "tests.test_x")),
			want: evalWant{tests: allOutcome(report.OutcomePassed, report.OutcomePassed), allPassed: true, sentinels: report.SentinelsWrong,
				tampered: []string{"a sentinel test is missing", "a sentinel test is missing"}},
		},
		{
			name: "the must-fail sentinel greened with its neighbours",
			res: hosted(0, evaluatetest.PassedCase("tests.test_x", "test_a"), evaluatetest.PassedCase("tests.test_x", "test_b"), evaluatetest.PassedCase("tests.test_x", "test_p"),
				evaluatetest.PassedCase("tests.test_x.TestC", "test_m"), evaluatetest.PassedCase("tests.test_y", "test_c"),
				evaluatetest.PassedCase("tests.test_x", "test_a_b"), evaluatetest.PassedCase("tests.test_x", "test_b_a")),
			want: evalWant{tests: allOutcome(report.OutcomePassed, report.OutcomePassed), allPassed: true, sentinels: report.SentinelsWrong,
				tampered: []string{"a sentinel test that must fail came out passed"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEvaluation(t, evaluatePytest(tt.res), tt.want)
		})
	}
}

package report

import (
	"fmt"
	"strings"
)

// Verdict is the outcome of a grade.
type Verdict string

// Verdicts, from the most to the least severe. Only VerdictPass is a pass.
const (
	VerdictInvalidTask  Verdict = "invalid_task"
	VerdictTampered     Verdict = "tampered"
	VerdictContaminated Verdict = "contaminated"
	VerdictError        Verdict = "error"
	VerdictFail         Verdict = "fail"
	VerdictPass         Verdict = "pass"
)

// Trust says how far a grade can be believed.
type Trust string

// Trust levels, from the highest; see docs/security.md.
const (
	// TrustSealed: split grading (the hidden tests, pytest and every
	// assertion in a process of their own, the code under test in
	// another, as another uid, that cannot read them), and every passing
	// test was decided outside the code under test.
	TrustSealed Trust = "sealed"
	// TrustSplit: split grading, but some passing tests were decided by
	// a comparison of the code under test's own (an object of its class
	// compared with a value); Sealing names them.
	TrustSplit Trust = "split"
	// TrustIsolated: pytest runner in the same process as the code under
	// test, uid split proven, hidden tests root-owned, grade written by
	// the wrapper. The code under test could read the tests' frames.
	TrustIsolated Trust = "isolated"
	// TrustBestEffort: the uid split was not available; the code under test
	// could have rewritten the tests or forged the grade.
	TrustBestEffort Trust = "best_effort"
	// TrustLow: a non-pytest command; there is no safe runner.
	TrustLow Trust = "low"
)

// Outcome is what happened to one test.
type Outcome string

// Test outcomes. Anything but OutcomePassed counts against the grade.
const (
	OutcomePassed  Outcome = "passed"
	OutcomeFailed  Outcome = "failed"
	OutcomeError   Outcome = "error"
	OutcomeSkipped Outcome = "skipped"
	OutcomeNotRun  Outcome = "not_run"
)

// TestResult is the outcome of one hidden test, by its id.
type TestResult struct {
	ID      string  `json:"id"`
	Outcome Outcome `json:"outcome"`
}

// Counts tallies hidden test outcomes. Not-run tests count as errors.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
	// Flaky counts tests that failed, then passed when run again alone.
	Flaky int `json:"flaky,omitempty"`
	Total int `json:"total"`
}

// TamperSignal is a file or pattern in the tree under test that could hook or
// bend the test run.
type TamperSignal struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// CanarySighting says that the canary of one hidden file was seen somewhere
// it must not be. The token itself is never reported.
type CanarySighting struct {
	// HiddenFile is the hidden test file whose canary was seen.
	HiddenFile string `json:"hidden_file"`
	// Where is "repo:<path>" for a file in the tree under test, or "output"
	// or "junit" for what the run printed.
	Where string `json:"where"`
}

// BaseCheck is the result of running the hidden tests on the base tree.
type BaseCheck struct {
	// GuardTests are the hidden tests that already pass on the base.
	GuardTests []string `json:"guard_tests"`
	// Skipped are the hidden tests that skip on the base (a missing
	// optional package, a skipif that holds here). Where they skip with
	// the reference patch too, a pull request's grade reports them skipped
	// without failing.
	Skipped []string `json:"skipped"`
	// Broken says, one line each, which hidden modules fail to import and
	// which fixtures are missing on the base and on the tree under test:
	// the task's fault. Names only, never test text.
	Broken []string `json:"broken"`
	// AllPass is true when every hidden test passes (or skips) on the
	// base: the task is invalid.
	AllPass bool `json:"all_pass"`
	// Counts are the base run's counts.
	Counts Counts `json:"counts"`
	// Reused says the base run is one an earlier grade of the same base,
	// tests, image, runtime and limits ran: the grader keeps its recent
	// base runs rather than run the same base again at every push.
	Reused bool `json:"reused,omitempty"`
	// Error says why the base run could not be evaluated, if it could not.
	Error string `json:"error,omitempty"`
	// Note says what happened to a base run that hung past its budget or
	// crashed: every hidden test then counts as failing on the base.
	Note string `json:"note,omitempty"`
	// Flaky lists the hidden tests whose outcome differed between two runs
	// of the same tree (the base, or the reference), the second with the
	// tests in reverse order; only with Request.TestStrength. A flaky test
	// must never be twinned.
	Flaky []string `json:"flaky"`
	// Context lists the base's own test support files (conftest.py
	// files, packages, helper modules, data files of the test directories
	// that hold hidden tests) laid beside the hidden tests for every run
	// of the grade; ContextLeftOut those left out to keep within the size
	// bound.
	Context        []string `json:"context,omitempty"`
	ContextLeftOut []string `json:"context_left_out,omitempty"`
}

// ReferenceCheck is the result of running the hidden tests on the base tree
// with the reference patch applied.
type ReferenceCheck struct {
	// AllPass is true when every hidden test passes with the reference patch.
	AllPass bool `json:"all_pass"`
	// Failed lists the hidden tests that did not pass with the patch.
	Failed []string `json:"failed"`
	// Skipped lists the hidden tests that skipped with the patch.
	Skipped []string `json:"skipped"`
	Counts  Counts   `json:"counts"`
	Error   string   `json:"error,omitempty"`
	// Mutation says how many changes to the reference the hidden tests
	// notice; only with Request.TestStrength.
	Mutation *Mutation `json:"mutation,omitempty"`
}

// Isolation is the wrapper's evidence about the process that ran the tests.
type Isolation struct {
	// UIDSplit is true when the test process was proven to run as another
	// uid than the wrapper, with no capabilities and no_new_privs.
	UIDSplit bool `json:"uid_split"`
	// UID and GID are the test process's ids as read from /proc.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// CapEff, CapPrm and CapAmb are the test process's capability sets, hex.
	CapEff string `json:"cap_eff"`
	CapPrm string `json:"cap_prm"`
	CapAmb string `json:"cap_amb"`
	// NoNewPrivs is the test process's no_new_privs flag.
	NoNewPrivs bool `json:"no_new_privs"`
	// Inferred says which of these the runtime's /proc did not show and
	// how the wrapper proved them instead (gVisor's lacks NoNewPrivs and
	// CapAmb); empty when /proc showed them all.
	Inferred string `json:"inferred,omitempty"`
	// DirsSealed is true when the hidden tests' directory (and everything
	// in it), the temporary directory and the tree's directory had the
	// owner and mode they must have just before the tests started; Dirs
	// says what each was. A grade is isolated only with both UIDSplit and
	// DirsSealed.
	DirsSealed bool       `json:"dirs_sealed"`
	Dirs       []DirState `json:"dirs"`
}

// DirState is one of the sandbox's directories as the wrapper saw it just
// before the tests started.
type DirState struct {
	Path string `json:"path"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	// Mode is octal with the setuid, setgid and sticky bits ("1777").
	Mode string `json:"mode"`
	// Want is the owner and mode it must have.
	Want   string `json:"want"`
	Sealed bool   `json:"sealed"`
	// Problems say what was not as it must be.
	Problems []string `json:"problems,omitempty"`
}

// Report is the result of one grade. Its JSON field names are a stable
// contract; fields may be added.
type Report struct {
	Verdict Verdict `json:"verdict"`
	Trust   Trust   `json:"trust"`
	// Reasons say, in words, why the verdict is what it is.
	Reasons []string     `json:"reasons"`
	Counts  Counts       `json:"counts"`
	Tests   []TestResult `json:"tests"`
	// Failed holds the ids of hidden tests that did not pass and count
	// against the grade: ids only.
	Failed []string `json:"failed"`
	// SkippedOnBase holds the ids of hidden tests that skipped here and on
	// the base (and with the reference patch, when there is one): reported
	// skipped, they do not count against the grade. A test that ran on the
	// base and skips here does.
	SkippedOnBase []string `json:"skipped_on_base"`
	// TamperSignals are the tamper signals of what the tree under test adds
	// or changes against the base (every one without a base).
	TamperSignals []TamperSignal `json:"tamper_signals"`
	// TamperContext are the tamper signals of files that are on the base
	// unchanged (a real tox.ini, library source that uses ctypes): kept for
	// the requester, never counted as signals nor shown in the check run.
	TamperContext []TamperSignal `json:"tamper_context"`
	TouchedTests  []string       `json:"touched_tests"`
	Contaminated  bool           `json:"contaminated"`
	// Contamination says which canary was seen where.
	Contamination  []CanarySighting `json:"contamination"`
	BaseCheck      *BaseCheck       `json:"base_check,omitempty"`
	ReferenceCheck *ReferenceCheck  `json:"reference_check,omitempty"`
	// Evidence is what the runs showed about the runner itself, one entry
	// per reason, strongest first. Strong evidence makes the verdict
	// tampered; weak evidence is counted as runtime signals.
	Evidence []Evidence `json:"evidence"`
	// Twins is what the twin runs showed; nil for a non-pytest command.
	Twins *Twins `json:"twins,omitempty"`
	// Sealing says, for a split grade, which passing tests were decided
	// outside the code under test; nil when the tests ran in its process.
	Sealing *Sealing `json:"sealing,omitempty"`
	// Sentinels is "ok" when every sentinel came out as expected,
	// "wrong" when one did not, "absent" when the runner gave no evidence
	// about them, and "none" when the runner does not use them.
	Sentinels string    `json:"sentinels"`
	Isolation Isolation `json:"isolation"`
	Image     string    `json:"image"`
	// Runtime is the OCI runtime the sandboxes ran under: runc, runsc
	// (gVisor), or "default" (the engine's, unnamed).
	Runtime     string `json:"runtime"`
	TestsDigest string `json:"tests_digest"`
	RepoDigest  string `json:"repo_digest"`
	// Runner is the command that ran the tests inside the sandbox.
	Runner          []string `json:"runner"`
	ExitCode        int      `json:"exit_code"`
	DurationSeconds float64  `json:"duration_seconds"`
	// Output is the full runner output (bounded), for the requester only.
	Output string `json:"output"`
	// OutputTruncated is true when the run printed more than was kept.
	OutputTruncated bool `json:"output_truncated"`
	// CaseNames maps the ids of parametrized cases reported under a number
	// ("test_x.py::test_y[case-2]") to their real ids, for the requester
	// only, like Output; the numbers stay the same across grades of the
	// same hidden tests (see CaseNames).
	CaseNames map[string]string `json:"case_names,omitempty"`
	// Settings are the bounds the grade ran with, so it can be
	// reproduced with the same ones.
	Settings *Settings `json:"settings,omitempty"`
	// Environment is the dependency environment the grade ran in; nil
	// when it ran in the bare grader image.
	Environment *Environment `json:"environment,omitempty"`
	// Network is NetworkMirror when the grade could read the package
	// index, NetworkNone otherwise.
	Network string `json:"network,omitempty"`
}

// OutcomeFlaky is a hidden test that did not pass in a grade's run and
// passed when it was run again alone. It counts against the grade like a
// failure: an implementation that passes only sometimes must not read as
// one that passes.
const OutcomeFlaky Outcome = "flaky"

func CountsOf(tests []TestResult) Counts {
	c := Counts{Total: len(tests)}
	for _, t := range tests {
		switch t.Outcome {
		case OutcomePassed:
			c.Passed++
		case OutcomeFailed:
			c.Failed++
		case OutcomeSkipped:
			c.Skipped++
		case OutcomeFlaky:
			c.Flaky++
		default:
			c.Errors++
		}
	}
	return c
}

// normalize makes every list field an empty list rather than null, so the
// JSON contract never changes shape.
func (r *Report) Normalize() {
	nonNil := func(s *[]string) {
		if *s == nil {
			*s = []string{}
		}
	}
	nonNil(&r.Reasons)
	nonNil(&r.Failed)
	nonNil(&r.TouchedTests)
	nonNil(&r.SkippedOnBase)
	nonNil(&r.Runner)
	if r.Environment != nil {
		nonNil(&r.Environment.Packages)
		nonNil(&r.Environment.BuiltFrom)
	}
	if r.Tests == nil {
		r.Tests = []TestResult{}
	}
	if r.Isolation.Dirs == nil {
		r.Isolation.Dirs = []DirState{}
	}
	if r.TamperSignals == nil {
		r.TamperSignals = []TamperSignal{}
	}
	if r.TamperContext == nil {
		r.TamperContext = []TamperSignal{}
	}
	if r.Contamination == nil {
		r.Contamination = []CanarySighting{}
	}
	if r.Evidence == nil {
		r.Evidence = []Evidence{}
	}
	for i := range r.Evidence {
		nonNil(&r.Evidence[i].Examples)
	}
	if r.BaseCheck != nil {
		nonNil(&r.BaseCheck.GuardTests)
		nonNil(&r.BaseCheck.Flaky)
		nonNil(&r.BaseCheck.Skipped)
		nonNil(&r.BaseCheck.Broken)
	}
	if r.ReferenceCheck != nil {
		nonNil(&r.ReferenceCheck.Failed)
		nonNil(&r.ReferenceCheck.Skipped)
	}
	r.Twins.Normalize()
}

// Sentinel states in a Report.
const (
	SentinelsOK     = "ok"
	SentinelsWrong  = "wrong"
	SentinelsAbsent = "absent"
	SentinelsNone   = "none"
)

// Sealing is how much of a split grade the code under test could not have
// decided.
type Sealing struct {
	// Passing counts the passing hidden tests; Sealed those of them none
	// of whose decisions was the code under test's.
	Passing int `json:"passing"`
	Sealed  int `json:"sealed"`
	// Decided lists the passing tests that are not sealed, each with what
	// decided it.
	Decided []DecidedTest `json:"decided,omitempty"`
	// InProcess lists the tests graded in-process (the per-test
	// fallback): the split could not run them on the base or reference
	// tree, so the tree under test ran them in pytest's process, with the
	// in-process defences; their outcome is that run's. InProcessPassing
	// counts those that passed (they are not sealed).
	InProcess        []FallbackTest `json:"in_process,omitempty"`
	InProcessPassing int            `json:"in_process_passing,omitempty"`
	// RefusedHere lists the tests the split refused something only on
	// the tree under test: not rerun in-process (that tree cannot ask for
	// the weaker grading), they keep their split outcome.
	RefusedHere []FallbackTest `json:"refused_here,omitempty"`
	// FallbackNote, when set, says why the tests of the fallback set kept
	// their split outcome (the in-process run could not be judged).
	FallbackNote string `json:"fallback_note,omitempty"`
}

// FallbackTest is a hidden test the split could not run as it needed, and
// why ("on the base, the code under test asked for `__globals__` of a
// function of the tests").
type FallbackTest struct {
	ID  string   `json:"id"`
	Why []string `json:"why"`
}

// DecidedTest is a passing test the code under test had a say in.
type DecidedTest struct {
	ID string `json:"id"`
	// By says what decided it: "__eq__ of ParseResults" (the tree's own
	// comparison, 2 times), or why the split could not tell.
	By []string `json:"by"`
}

// SealingLine says in one sentence how much of a split grade was decided
// outside the code under test, naming up to three tests that were not and
// what decided them; "" for a grade that was not split. Test ids and class
// names come from the run: callers escape the line for where it goes.
func SealingLine(s *Sealing) string {
	if s == nil {
		return ""
	}
	line := sealedLine(s)
	if len(s.InProcess) > 0 {
		line += fmt.Sprintf(" %d hidden test(s) were graded in-process, in the code under test's own process, because the split could not run them on the base or reference tree (%d of them passed): %s.",
			len(s.InProcess), s.InProcessPassing, nameFallbacks(s.InProcess))
	}
	if s.FallbackNote != "" {
		line += " " + s.FallbackNote
	}
	if len(s.RefusedHere) > 0 {
		line += fmt.Sprintf(" The split refused the code under test something in %d test(s) that neither the base nor the reference needed; they kept their split outcome: %s.",
			len(s.RefusedHere), nameFallbacks(s.RefusedHere))
	}
	return line
}

// sealedLine is SealingLine's first sentence: the passing tests decided
// outside the code under test, of those the split graded.
func sealedLine(s *Sealing) string {
	switch {
	case s.Passing == 0:
		return "No hidden test passed, so none was decided by the code under test."
	case len(s.Decided) == 0 && s.InProcessPassing > 0:
		return fmt.Sprintf("%d of %d passing tests were decided outside the code under test; %d ran in its process.", s.Sealed, s.Passing, s.InProcessPassing)
	case s.Sealed == s.Passing:
		if s.Passing == 1 {
			return "The passing test was decided outside the code under test."
		}
		return fmt.Sprintf("All %d passing tests were decided outside the code under test.", s.Passing)
	}
	var named []string
	for i, d := range s.Decided {
		if i == 3 {
			named = append(named, fmt.Sprintf("and %d more", len(s.Decided)-i))
			break
		}
		named = append(named, fmt.Sprintf("%s (%s)", d.ID, strings.Join(d.By, ", ")))
	}
	in := ""
	if s.InProcessPassing > 0 {
		in = fmt.Sprintf(", %d ran in its process", s.InProcessPassing)
	}
	return fmt.Sprintf("%d of %d passing tests were decided outside the code under test%s; %d had the code under test's own say: %s.",
		s.Sealed, s.Passing, in, len(s.Decided), strings.Join(named, "; "))
}

// nameFallbacks names the first three of tests with why each, and how many
// more there are.
func nameFallbacks(tests []FallbackTest) string {
	var named []string
	for i, f := range tests {
		if i == 3 {
			named = append(named, fmt.Sprintf("and %d more", len(tests)-i))
			break
		}
		named = append(named, fmt.Sprintf("%s (%s)", f.ID, strings.Join(f.Why, ", ")))
	}
	return strings.Join(named, "; ")
}

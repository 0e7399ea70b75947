package evaluate

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Evaluation is what one run's evidence says about the hidden tests.
type Evaluation struct {
	Tests []report.TestResult
	// Problems are reasons the run cannot be trusted to say pass or fail:
	// each one makes the verdict error.
	Problems []string
	// Tampered are reasons the runner was bent: any makes the verdict
	// Tampered.
	Tampered []string
	// Notes are facts worth a reviewer's eye that change no verdict.
	Notes     []string
	Sentinels string
	// Evidence is what the run showed about the runner itself (see
	// runtimeEvidence), strongest first.
	Evidence []report.Evidence
	// cases holds each hidden test's results by its id without
	// parametrization, in the order the runner reported them.
	cases map[string][]report.TestResult
	// importErrors holds what the runner printed of each hidden module
	// the report says failed to import, by its file; missingFixtures the
	// fixtures it printed as not found, by the hidden file that asked for
	// them. Both are the runner's words, which reach nobody: BrokenHidden
	// reads names out of them.
	importErrors    map[string]string
	missingFixtures map[string][]string
	// importFailed lists the hidden files the report says failed to
	// import.
	importFailed []string
	// rawIDs maps the id of a case reported under a placeholder name
	// (see reportedName) to the id pytest gave it, which only the
	// trusted side of a split run's report uses.
	rawIDs map[string]string
	// beforeReport counts the problems found before the runner's report
	// was read: those of a run killed at its deadline that are not about
	// the report it could not finish.
	beforeReport int
}

func (e *Evaluation) problemf(format string, args ...any) {
	e.Problems = append(e.Problems, fmt.Sprintf(format, args...))
}

// AllPassed reports whether every hidden test passed, leaving out those
// excused (see excusedSkips) when at least one test passed.
func (e *Evaluation) AllPassed(excused map[string]bool) bool {
	passed := 0
	for _, t := range e.Tests {
		switch {
		case t.Outcome == report.OutcomePassed:
			passed++
		case t.Outcome == report.OutcomeSkipped && excused[t.ID]:
		default:
			return false
		}
	}
	return passed > 0
}

// NotPassed lists the ids of hidden tests that did not pass and are not
// excused.
func (e *Evaluation) NotPassed(excused map[string]bool) []string {
	var ids []string
	for _, t := range e.Tests {
		if t.Outcome != report.OutcomePassed && !(t.Outcome == report.OutcomeSkipped && excused[t.ID]) {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// Skipped lists the ids of the hidden tests that skipped.
func (e *Evaluation) Skipped() []string {
	var ids []string
	for _, t := range e.Tests {
		if t.Outcome == report.OutcomeSkipped {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// JUnitClass is the classname pytest's JUnit report gives the tests of a
// hidden file ("tests/test_x.py" -> "tests.test_x"), and of a class in it.
func JUnitClass(file, class string) string {
	mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
	if class != "" {
		return mod + "." + class
	}
	return mod
}

// TestID is the id a hidden test is known by: pytest's node id relative to
// the hidden directory.
func TestID(file, class, name string) string {
	if class != "" {
		return file + "::" + class + "::" + name
	}
	return file + "::" + name
}

// maxCasesPerTest bounds the parametrized cases reported for one hidden
// test function.
const maxCasesPerTest = 256

// paramSuffix is what a parametrized test's id may carry after its name
// and still be reported as is: pytest's usual ids ("1-2", "empty",
// "a.b:c"). Anything else is replaced, since ids reach the implementer and
// a bent runner could smuggle test text through them.
var paramSuffix = regexp.MustCompile(`^\[[A-Za-z0-9_.,:+=\- ]{1,48}\]$`)

// reportedName is the name a reported case is known by: the hidden test's
// name, plus its parametrization when that looks like one, else a
// numbered placeholder.
func reportedName(name, reported string, n int) string {
	suffix := strings.TrimPrefix(reported, name)
	if suffix == "" || paramSuffix.MatchString(suffix) {
		return reported
	}
	return fmt.Sprintf("%s[case-%d]", name, n+1)
}

// baseName strips parametrization from a test name: "test_x[1-2]" -> "test_x".
func baseName(name string) string {
	if i := strings.IndexByte(name, '['); i > 0 {
		return name[:i]
	}
	return name
}

// Pytest evaluates a pytest run: its report against the listed hidden
// tests and sentinels (evaluatePytest, checkListedCases), with what the run
// showed of the runner itself as its Evidence.
func Pytest(res *wrapper.Result) *Evaluation {
	ev := evaluatePytest(res)
	checkListedCases(ev, res)
	var set EvidenceSet
	if res.Split != nil {
		splitEvidence(res, ev, &set)
	} else {
		runtimeEvidence(res, &set)
	}
	ev.Evidence = set.List()
	return ev
}

// evaluatePytest turns the wrapper's evidence from a pytest run into test
// outcomes. It fails closed: evidence that is missing, malformed or
// inconsistent becomes a problem, never a pass.
func evaluatePytest(res *wrapper.Result) *Evaluation {
	ev := &Evaluation{Sentinels: report.SentinelsAbsent}
	if res.Error != "" && len(res.Runner) == 0 {
		// The tests never ran: nothing else in the evidence means anything.
		ev.problemf("%s", res.Error)
		return ev
	}
	if res.Error != "" {
		ev.problemf("wrapper: %s", res.Error)
	}
	if res.ListError != "" {
		ev.problemf("%s", res.ListError)
	}
	if len(res.Expected) == 0 && res.ListError == "" {
		ev.problemf("no hidden tests found: hidden files must define test_* functions or Test* classes in test_*.py or *_test.py files")
	}
	if res.Signal != "" && !res.TimedOut {
		ev.problemf("the runner was killed by %s", res.Signal)
	}
	if res.JUnitTruncated {
		ev.problemf("the JUnit report was larger than the limit and was cut")
	}
	if res.Leftovers > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%d process(es) of the code under test outlived the runner and were killed", res.Leftovers))
	}

	ev.beforeReport = len(ev.Problems)
	cases, err := ParseJUnit(res.JUnit)
	if err != nil {
		ev.problemf("%v", err)
	}

	// Index the expected tests by the JUnit classname and base name that
	// pytest gives them, and by module for collection reports.
	type slot struct {
		exp     wrapper.ExpectedTest
		results []report.TestResult
	}
	slots := make([]*slot, len(res.Expected))
	byKey := map[string]*slot{}
	byModule := map[string][]*slot{}
	for i, e := range res.Expected {
		s := &slot{exp: e}
		slots[i] = s
		byKey[JUnitClass(e.File, e.Class)+"::"+e.Name] = s
		mod := JUnitClass(e.File, "")
		byModule[mod] = append(byModule[mod], s)
	}
	sentinels := map[string]wrapper.Sentinel{}
	for _, s := range res.Sentinels {
		sentinels[s.ClassName+"::"+s.Name] = s
	}
	sentinelSeen := map[string]report.Outcome{}
	// failedModules are the modules reported as a whole (they failed to
	// import, or were skipped); casesOf counts the reported cases of each
	// module's own tests.
	failedModules := map[string]bool{}
	casesOf := map[string]int{}
	reported := map[string]bool{}
	tooMany := map[string]bool{}
	var unknown, importFailed []string
	anyFailure := false
	// onlyModuleSkips: every case reported is a whole module skipped, so
	// no test ran, the sentinels in those modules included.
	onlyModuleSkips := len(cases) > 0
	for _, c := range cases {
		if c.Outcome == report.OutcomeFailed || c.Outcome == report.OutcomeError {
			anyFailure = true
		}
		key := c.ClassName + "::" + baseName(c.Name)
		if _, ok := byModule[c.Name]; !ok || c.ClassName != "" || c.Outcome != report.OutcomeSkipped {
			onlyModuleSkips = false
		}
		if _, ok := sentinels[c.ClassName+"::"+c.Name]; ok {
			sentinelSeen[c.ClassName+"::"+c.Name] = c.Outcome
			continue
		}
		if s, ok := byKey[key]; ok {
			if len(s.results) >= maxCasesPerTest {
				tooMany[TestID(s.exp.File, s.exp.Class, s.exp.Name)] = true
				continue
			}
			name := reportedName(s.exp.Name, c.Name, len(s.results))
			id := TestID(s.exp.File, s.exp.Class, name)
			if reported[id] {
				ev.problemf("the runner reported %s twice", id)
				continue
			}
			reported[id] = true
			if name != c.Name {
				if ev.rawIDs == nil {
					ev.rawIDs = map[string]string{}
				}
				ev.rawIDs[id] = TestID(s.exp.File, s.exp.Class, c.Name)
			}
			casesOf[JUnitClass(s.exp.File, "")]++
			s.results = append(s.results, report.TestResult{ID: id, Outcome: c.Outcome})
			continue
		}
		// A report about a whole module: it failed to import, or it was
		// skipped as a whole. Every hidden test in it shares the outcome.
		if mods, ok := byModule[c.Name]; ok && c.ClassName == "" && c.Outcome != report.OutcomePassed {
			failedModules[c.Name] = true
			onlyModuleSkips = onlyModuleSkips && c.Outcome == report.OutcomeSkipped
			if c.Outcome == report.OutcomeError && len(mods) > 0 {
				importFailed = append(importFailed, mods[0].exp.File)
			}
			for _, s := range mods {
				if len(s.results) == 0 {
					s.results = append(s.results, report.TestResult{ID: TestID(s.exp.File, s.exp.Class, s.exp.Name), Outcome: c.Outcome})
				}
			}
			continue
		}
		unknown = append(unknown, strings.TrimPrefix(c.ClassName+"::"+c.Name, "::"))
	}
	ev.importFailed = importFailed
	if len(importFailed) > 0 || anyFailure {
		ev.importErrors, ev.missingFixtures = errorSections(string(res.Output), importFailed)
	}
	if len(unknown) > 0 {
		// Their names are not echoed: a bent runner could carry anything in
		// them, and reasons reach the implementer.
		ev.problemf("the runner reported %d test(s) that are not hidden tests", len(unknown))
	}
	if len(tooMany) > 0 {
		ev.problemf("the runner reported more than %d cases of %d hidden test(s)", maxCasesPerTest, len(tooMany))
	}
	var missing []string
	ev.cases = map[string][]report.TestResult{}
	for _, s := range slots {
		if len(s.results) == 0 {
			id := TestID(s.exp.File, s.exp.Class, s.exp.Name)
			missing = append(missing, id)
			s.results = []report.TestResult{{ID: id, Outcome: report.OutcomeNotRun}}
		}
		ev.Tests = append(ev.Tests, s.results...)
		ev.cases[TestID(s.exp.File, s.exp.Class, s.exp.Name)] = s.results
	}
	if len(missing) > 0 && err == nil {
		ev.problemf("%d hidden test(s) missing from the runner's report, e.g. %s", len(missing), missing[0])
	}
	slices.SortFunc(ev.Tests, func(a, b report.TestResult) int { return strings.Compare(a.ID, b.ID) })

	// Sentinels: one must pass, one must fail. Either the other way round
	// means the runner was bent.
	sentinelsChecked := 0
	if len(res.Sentinels) == 0 {
		ev.problemf("the wrapper reported no sentinel tests")
	}
	if len(res.Sentinels) > 0 && len(cases) > 0 {
		ev.Sentinels = report.SentinelsOK
		checked := 0
		for key, s := range sentinels {
			got, ok := sentinelSeen[key]
			want := report.OutcomeFailed
			if s.MustPass {
				want = report.OutcomePassed
			}
			if !ok && failedModules[s.ClassName] && casesOf[s.ClassName] == 0 {
				// The sentinel sits in a hidden module that failed to import
				// or was skipped as a whole, and none of the module's own
				// tests was reported either: it shared their fate, and they
				// count as not passed.
				continue
			}
			checked++
			switch {
			case !ok && err == nil:
				// pytest reports every test it collected, and a
				// sentinel is collected with its module, or its module is
				// reported as a whole (above): a well-formed report
				// without one was not written by an unbent runner.
				ev.Sentinels = report.SentinelsWrong
				ev.Tampered = append(ev.Tampered, "a sentinel test is missing from a well-formed runner report: the report was not the runner's own")
			case !ok:
				ev.Sentinels = report.SentinelsAbsent
				ev.problemf("a sentinel test is missing from the runner's report")
			case got != want:
				ev.Sentinels = report.SentinelsWrong
				ev.Tampered = append(ev.Tampered, fmt.Sprintf("a sentinel test that must %s came out %s: the runner was bent", map[bool]string{true: "pass", false: "fail"}[s.MustPass], got))
			}
		}
		if checked == 0 {
			ev.Sentinels = report.SentinelsAbsent
		}
		sentinelsChecked = checked
	}

	// pytest exits 1 when a test failed and 0 only when none did; the
	// failing sentinel makes 1 the only honest answer.
	switch {
	case res.Signal != "" || res.TimedOut:
	case res.ExitCode == 0 && anyFailure:
		ev.problemf("the runner exited 0 although its report shows failures: the exit code disagrees with the JUnit report")
	case res.ExitCode == 1 && !anyFailure && err == nil:
		ev.problemf("the runner exited 1 although its report shows no failure: the exit code disagrees with the JUnit report")
	case res.ExitCode == 5 && onlyModuleSkips && sentinelsChecked == 0:
		// Every hidden module was skipped as a whole, the sentinels' hosts
		// with them: pytest ran nothing and says so.
	case res.ExitCode != 0 && res.ExitCode != 1:
		ev.problemf("the runner exited %d (%s)", res.ExitCode, pytestExit(res.ExitCode))
	}
	if res.TimedOut {
		timedOut(ev, res)
	}
	return ev
}

// timedOut makes ev the evaluation of a pytest run killed at the end of
// its budget: a test that hangs (an endless loop, often the very bug a
// pull request fixes) fails, it is no fault of the grade. The runner
// writes its report at the end, so what a killed run left of one is not
// believed: every hidden test it did not report failing counts as failing,
// none as passing, and the problems that only say the report is missing or
// cut are dropped. What the run showed of the runner itself (a sentinel
// that came out wrong, its evidence) still counts.
func timedOut(ev *Evaluation, res *wrapper.Result) {
	ev.Problems = ev.Problems[:ev.beforeReport]
	fail := func(rs []report.TestResult) {
		for i := range rs {
			if rs[i].Outcome != report.OutcomeFailed && rs[i].Outcome != report.OutcomeError {
				rs[i].Outcome = report.OutcomeFailed
			}
		}
	}
	fail(ev.Tests)
	for _, rs := range ev.cases {
		fail(rs)
	}
	ev.Notes = append(ev.Notes, fmt.Sprintf("timed out: the test run was killed at the end of its budget after %.0fs; every hidden test it did not report failing counts as failing", res.Seconds))
}

func pytestExit(code int) string {
	switch code {
	case 2:
		return "interrupted"
	case 3:
		return "internal error"
	case 4:
		return "usage error"
	case 5:
		return "no tests collected"
	}
	return "unknown exit status"
}

// Command turns the evidence of a non-pytest command into
// outcomes: the tests of its JUnit report if it wrote one, else one test
// named after the command that passed if it exited 0.
func Command(res *wrapper.Result) *Evaluation {
	ev := &Evaluation{Sentinels: report.SentinelsNone}
	if res.Error != "" {
		ev.problemf("wrapper: %s", res.Error)
	}
	if res.TimedOut {
		ev.problemf("the test run was killed at its deadline after %.0fs", res.Seconds)
	}
	if res.JUnitTruncated {
		ev.problemf("the JUnit report was larger than the limit and was cut")
	}
	if len(res.JUnit) > 0 {
		cases, err := ParseJUnit(res.JUnit)
		if err != nil {
			ev.problemf("%v", err)
		}
		for _, c := range cases {
			ev.Tests = append(ev.Tests, report.TestResult{ID: strings.TrimPrefix(c.ClassName+"::"+c.Name, "::"), Outcome: c.Outcome})
		}
		if res.ExitCode != 0 && !res.TimedOut && err == nil && !slices.ContainsFunc(ev.Tests, func(t report.TestResult) bool { return t.Outcome != report.OutcomePassed }) {
			ev.problemf("the command exited %d although its report shows no failure", res.ExitCode)
		}
		return ev
	}
	outcome := report.OutcomePassed
	if res.ExitCode != 0 || res.TimedOut || res.Signal != "" {
		outcome = report.OutcomeFailed
	}
	name := "command"
	if len(res.Runner) > 0 {
		name = path.Base(res.Runner[0])
	}
	ev.Tests = []report.TestResult{{ID: name, Outcome: outcome}}
	return ev
}

// Clone returns a copy of e whose slices are its own: an evaluation kept
// for reuse (the grader's memo of base runs) is read by every grade that
// reuses it, and a grade appends to what it is given.
func (e *Evaluation) Clone() *Evaluation {
	c := *e
	c.Tests = slices.Clone(e.Tests)
	c.Problems = slices.Clone(e.Problems)
	c.Tampered = slices.Clone(e.Tampered)
	c.Notes = slices.Clone(e.Notes)
	c.Evidence = slices.Clone(e.Evidence)
	c.importFailed = slices.Clone(e.importFailed)
	return &c
}

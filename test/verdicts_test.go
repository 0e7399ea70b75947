package test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// The trees of these tests are made for them: a module calc.py whose
// fixed() is wrong on the base and right in the pull request, and hidden
// tests around it.

const (
	calcBase = "def fixed():\n    return 1\n"
	calcPR   = "def fixed():\n    return 2\n"
)

// hiddenWith is a hidden set of test_calc.py (one test the pull request
// fixes, one guard test) and the files given.
func hiddenWith(t *testing.T, files map[string]string) *tree.Tree {
	t.Helper()
	all := map[string]string{
		"test_calc.py": "# testfirst-canary: tfc-0000000verdicts01\nimport calc\n\n\ndef test_fixed():\n    assert calc.fixed() == 2\n\n\ndef test_guard():\n    assert callable(calc.fixed)\n",
	}
	for p, s := range files {
		all[p] = s
	}
	return treeOf(t, all)
}

func outcomes(rep *report.Report) map[string]report.Outcome {
	m := map[string]report.Outcome{}
	for _, tr := range rep.Tests {
		m[tr.ID] = tr.Outcome
	}
	return m
}

// A hidden test that skips on the base as well (a missing optional
// package) is reported skipped and does not fail the grade; the base check
// lists it.
func TestSkipOnBaseIsNotTheImplementersFault(t *testing.T) {
	hidden := hiddenWith(t, map[string]string{
		"test_optional.py": "# testfirst-canary: tfc-0000000verdicts02\nimport pytest\n\n\ndef test_needs_numpy():\n    pytest.importorskip('numpy_is_not_installed_here')\n",
	})
	base := treeOf(t, map[string]string{"calc.py": calcBase})
	pr := treeOf(t, map[string]string{"calc.py": calcPR})
	rep := grade(t, grader.Request{Repo: pr, Hidden: hidden, Base: base})
	id := "test_optional.py::test_needs_numpy"
	if rep.Verdict != report.VerdictPass {
		t.Errorf("verdict %s (%q), tests %v; want pass: the test skips on the base too", rep.Verdict, rep.Reasons, rep.Tests)
	}
	if got := outcomes(rep)[id]; got != report.OutcomeSkipped {
		t.Errorf("%s reported %s, want skipped", id, got)
	}
	if rep.BaseCheck == nil || !slices.Contains(rep.BaseCheck.Skipped, id) {
		t.Errorf("base check %+v does not list %s as skipped", rep.BaseCheck, id)
	}
	if !slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, "skipped on the base") }) {
		t.Errorf("reasons %q do not say a test skipped on the base too", rep.Reasons)
	}
	// Every test skipping on the base cannot tell a fix from no change.
	allSkip := treeOf(t, map[string]string{
		"test_optional.py": "# testfirst-canary: tfc-0000000verdicts02\nimport pytest\n\n\ndef test_needs_numpy():\n    pytest.importorskip('numpy_is_not_installed_here')\n",
	})
	rep = grade(t, grader.Request{Repo: pr, Hidden: allSkip, Base: base})
	if rep.Verdict != report.VerdictInvalidTask {
		t.Errorf("every hidden test skips on the base: verdict %s (%q), want invalid_task", rep.Verdict, rep.Reasons)
	}
}

// A pull request must not skip its way to green: a test that ran on the
// base and skips on the pull request fails the grade, however the skip was
// raised (unittest.SkipTest from library code needs neither pytest nor a
// conftest).
func TestSkipOnlyOnThePullRequestFails(t *testing.T) {
	hidden := hiddenWith(t, nil)
	base := treeOf(t, map[string]string{"calc.py": calcBase})
	for name, calc := range map[string]string{
		"SkipTest from library code":          "import unittest\n\n\ndef fixed():\n    raise unittest.SkipTest('not in this environment')\n",
		"skip raised through pytest's module": "import sys\n\n\ndef fixed():\n    raise sys.modules['pytest'].skip.Exception('environment')\n",
		"runtest patched at import to skip":   "import sys\n\n_python = sys.modules['_pytest.python']\n_run = _python.Function.runtest\n\n\ndef _skipping(self):\n    if self.name == 'test_fixed':\n        raise sys.modules['pytest'].skip.Exception('environment')\n    return _run(self)\n\n\n_python.Function.runtest = _skipping\n\n\ndef fixed():\n    return 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pr := treeOf(t, map[string]string{"calc.py": calc})
			rep := grade(t, grader.Request{Repo: pr, Hidden: hidden, Base: base})
			id := "test_calc.py::test_fixed"
			if rep.Verdict == report.VerdictPass {
				t.Fatalf("a pull request passed by skipping a test that ran on the base: %q %v", rep.Reasons, rep.Tests)
			}
			if !slices.Contains(rep.Failed, id) {
				t.Errorf("failed %v does not hold %s", rep.Failed, id)
			}
		})
	}
}

// A hidden module that cannot import on the base nor on the pull request
// (a helper the hidden set lacks), or a fixture nobody defines, is the
// task's fault: invalid_task, naming the module or fixture and nothing of
// the test bodies.
func TestBrokenHiddenTestIsInvalidTask(t *testing.T) {
	secret := "body_text_not_for_the_implementer"
	hidden := hiddenWith(t, map[string]string{
		"test_helper.py":  "# testfirst-canary: tfc-0000000verdicts03\nfrom helpers import make_thing\n\n\ndef test_thing():\n    assert make_thing() == '" + secret + "'\n",
		"test_fixture.py": "# testfirst-canary: tfc-0000000verdicts04\ndef test_loads(load_file):\n    assert load_file('" + secret + "')\n",
	})
	base := treeOf(t, map[string]string{"calc.py": calcBase, "tests/helpers.py": "def make_thing():\n    return 1\n"})
	pr := treeOf(t, map[string]string{"calc.py": calcPR, "tests/helpers.py": "def make_thing():\n    return 1\n"})
	rep := grade(t, grader.Request{Repo: pr, Hidden: hidden, Base: base})
	if rep.Verdict != report.VerdictInvalidTask {
		t.Fatalf("verdict %s (%q), want invalid_task; base check %+v; tests %v\n%s", rep.Verdict, rep.Reasons, rep.BaseCheck, rep.Tests, rep.Output)
	}
	all := strings.Join(rep.Reasons, "\n")
	for _, want := range []string{"test_helper.py", "No module named 'helpers'", "fixture 'load_file' not found", "conftest.py"} {
		if !strings.Contains(all, want) {
			t.Errorf("reasons %q do not say %q", rep.Reasons, want)
		}
	}
	for _, bad := range []string{secret, "make_thing()"} {
		if strings.Contains(all, bad) {
			t.Errorf("reasons %q carry %q of a hidden test body", rep.Reasons, bad)
		}
	}
	if rep.BaseCheck == nil || len(rep.BaseCheck.Broken) != 2 {
		t.Errorf("base check %+v: want both broken hidden tests listed", rep.BaseCheck)
	}
}

// A pull request that breaks the hidden tests' imports only on its own
// tree, however it words the error, fails: it cannot make its grade the
// task's fault.
func TestPullRequestBreakingImportsFails(t *testing.T) {
	hidden := hiddenWith(t, nil)
	base := treeOf(t, map[string]string{"calc.py": calcBase})
	pr := treeOf(t, map[string]string{"calc.py": "raise ModuleNotFoundError(\"No module named 'helpers'\", name='helpers')\n"})
	rep := grade(t, grader.Request{Repo: pr, Hidden: hidden, Base: base})
	if rep.Verdict != report.VerdictFail {
		t.Errorf("verdict %s (%q), want fail: the imports break only on the pull request", rep.Verdict, rep.Reasons)
	}
}

// A base that hangs or crashes (the very bug the pull request fixes) fails
// on the base: the pull request's grade does not become an error, and the
// base run has a budget of its own.
func TestBaseThatHangsOrCrashesFailsOnBase(t *testing.T) {
	hidden := hiddenWith(t, nil)
	pr := treeOf(t, map[string]string{"calc.py": calcPR})
	for name, calc := range map[string]string{
		"hangs":   "def fixed():\n    while True:\n        pass\n",
		"crashes": "import os\nimport signal\n\n\ndef fixed():\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := treeOf(t, map[string]string{"calc.py": calc})
			rep := grade(t, grader.Request{Repo: pr, Hidden: hidden, Base: base, Timeout: 45 * time.Second})
			if rep.Verdict != report.VerdictPass {
				t.Errorf("verdict %s (%q), want pass: the base failing by %s is what the pull request fixes", rep.Verdict, rep.Reasons, name)
			}
			if rep.BaseCheck == nil || len(rep.BaseCheck.GuardTests) != 0 || rep.BaseCheck.Error != "" || rep.BaseCheck.Note == "" {
				t.Errorf("base check %+v: want no guard tests, no error, a note of what happened", rep.BaseCheck)
			}
			if !slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.HasPrefix(r, "base check: ") }) {
				t.Errorf("reasons %q do not say what happened to the base", rep.Reasons)
			}
		})
	}
}

// On a suite that prints more than is kept, the output keeps its end (the
// summary of what failed), says what was cut, and the canary scan still
// covers the whole of it.
func TestOutputKeepsItsTail(t *testing.T) {
	hidden := hiddenWith(t, map[string]string{
		"test_loud.py": "# testfirst-canary: tfc-0000000verdicts05\nimport sys\n\n\ndef test_loud():\n    for i in range(40000):\n        sys.stdout.write('noise line %06d .........................................\\n' % i)\n    assert False, 'loud_test_failed_at_the_end'\n",
	})
	pr := treeOf(t, map[string]string{"calc.py": calcPR})
	rep := grade(t, grader.Request{Repo: pr, Hidden: hidden})
	if !rep.OutputTruncated {
		t.Fatalf("output of %d bytes not truncated", len(rep.Output))
	}
	if !strings.Contains(rep.Output, "noise line 000000") {
		t.Errorf("the output lost its head")
	}
	if !strings.Contains(rep.Output, "short test summary info") || !strings.Contains(rep.Output, "loud_test_failed_at_the_end") {
		t.Errorf("the output lost its tail (the summary):\n%s", lastLines(rep.Output, 10))
	}
	if !strings.Contains(rep.Output, "bytes of output cut here") {
		t.Errorf("the output does not say where it was cut")
	}
}

// A pull request that breaks the import of one hidden module fails; the
// rerun of its failing tests must not name the module's tests alone,
// which pytest cannot collect, and take the empty report for a bent
// runner.
func TestBrokenImportOfOneModuleFailsNotTampered(t *testing.T) {
	hidden := hiddenWith(t, map[string]string{
		"test_other.py": "# testfirst-canary: tfc-0000000verdicts06\nfrom other import thing\n\n\ndef test_thing():\n    assert thing() == 1\n",
	})
	base := treeOf(t, map[string]string{"calc.py": calcBase, "other.py": "def thing():\n    return 1\n"})
	pr := treeOf(t, map[string]string{"calc.py": calcPR, "other.py": "def renamed():\n    return 1\n"})
	rep := grade(t, grader.Request{Repo: pr, Hidden: hidden, Base: base})
	if rep.Verdict != report.VerdictFail || !slices.Equal(rep.Failed, []string{"test_other.py::test_thing"}) {
		t.Errorf("verdict %s (%q), failed %v; want fail of test_other.py::test_thing", rep.Verdict, rep.Reasons, rep.Failed)
	}
}

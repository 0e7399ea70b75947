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

// The trees of these tests are a repository whose tests/ directory has
// its own support (a package, helpers, a conftest with fixtures, data
// files, and a test module of its own that fails), a base whose
// calc.fixed() is wrong, and hidden tests written for the repository as
// it is.

// ctxRepo is the base's files beside calc (calcBase or calcPR), with the
// given files added or replaced.
func ctxRepo(t *testing.T, calc string, files map[string]string) *tree.Tree {
	t.Helper()
	all := map[string]string{
		"calc.py":                calc,
		"tests/__init__.py":      "",
		"tests/helpers.py":       "def expected():\n    return 2\n\n\nclass CalcCase:\n    want = 2\n",
		"tests/conftest.py":      "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 2\n",
		"tests/data/answer.txt":  "2\n",
		"tests/test_existing.py": "def test_existing_fails_on_purpose():\n    assert False, 'a base test module ran as a hidden test'\n",
	}
	for p, s := range files {
		if s == "" && p != "tests/__init__.py" {
			delete(all, p)
			continue
		}
		all[p] = s
	}
	return treeOf(t, all)
}

func ctxHidden(t *testing.T, body string, extra map[string]string) *tree.Tree {
	t.Helper()
	all := map[string]string{"tests/test_fixed.py": "# testfirst-canary: tfc-000000testcontext1\n" + body}
	for p, s := range extra {
		all[p] = s
	}
	return treeOf(t, all)
}

// Honest hidden tests that lean on the base's test support grade a right
// pull request pass and a wrong one fail, and only the hidden tests run.
func TestBaseTestContextHonest(t *testing.T) {
	cases := map[string]struct {
		hidden *tree.Tree
		base   map[string]string
	}{
		"relative import of a helper":     {hidden: ctxHidden(t, "import calc\n\nfrom .helpers import expected\n\n\ndef test_fixed():\n    assert calc.fixed() == expected()\n", nil)},
		"fixture of the base conftest":    {hidden: ctxHidden(t, "import calc\n\n\ndef test_fixed(answer):\n    assert calc.fixed() == answer\n", nil)},
		"data file beside the tests":      {hidden: ctxHidden(t, "from pathlib import Path\n\nimport calc\n\n\ndef test_fixed():\n    want = int((Path(__file__).parent / 'data' / 'answer.txt').read_text())\n    assert calc.fixed() == want\n", nil)},
		"unittest class on a helper base": {hidden: ctxHidden(t, "import unittest\n\nimport calc\nfrom tests.helpers import CalcCase\n\n\nclass TestFixed(CalcCase, unittest.TestCase):\n    def test_fixed(self):\n        self.assertEqual(calc.fixed(), self.want)\n", nil)},
		"hidden conftest overrides the base's": {
			hidden: ctxHidden(t, "import calc\n\n\ndef test_fixed(answer):\n    assert calc.fixed() == answer\n", map[string]string{
				"tests/conftest.py": "# testfirst-canary: tfc-000000testcontext2\nimport pytest\n\n\n@pytest.fixture\ndef answer():\n    return 2\n",
			}),
			base: map[string]string{"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 1\n"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := ctxRepo(t, calcBase, c.base)
			for _, pr := range []struct {
				calc string
				want report.Verdict
			}{{calcPR, report.VerdictPass}, {calcBase, report.VerdictFail}} {
				rep := grade(t, grader.Request{Repo: ctxRepo(t, pr.calc, c.base), Hidden: c.hidden, Base: base})
				if rep.Verdict != pr.want {
					t.Errorf("pull request %q: verdict %s (%q), want %s; tests %v\n%s", pr.calc, rep.Verdict, rep.Reasons, pr.want, rep.Tests, rep.Output)
				}
				for _, tr := range rep.Tests {
					if strings.Contains(tr.ID, "test_existing") {
						t.Errorf("the base's own test module ran as a hidden test: %v", rep.Tests)
					}
				}
				if rep.BaseCheck == nil || !slices.Contains(rep.BaseCheck.Context, "tests/helpers.py") || slices.Contains(rep.BaseCheck.Context, "tests/test_existing.py") {
					t.Errorf("base check %+v: want the base files the run used listed, tests/helpers.py among them and no base test module", rep.BaseCheck)
				}
			}
		})
	}
}

// What the pull request changes in the test support never reaches the
// run: the base's copies are used, and a conftest it adds is not loaded.
func TestBaseTestContextAttacks(t *testing.T) {
	fixtureHidden := ctxHidden(t, "import calc\n\n\ndef test_fixed(answer):\n    assert calc.fixed() == answer\n", nil)
	helperHidden := ctxHidden(t, "import calc\n\nfrom .helpers import expected\n\n\ndef test_fixed():\n    assert calc.fixed() == expected()\n", nil)
	passAll := "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 1\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_call(item):\n    return True\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.obj = lambda *a, **k: None\n"
	cases := map[string]struct {
		hidden *tree.Tree
		base   map[string]string
		pr     map[string]string
	}{
		"pull request's conftest changes the fixture":   {hidden: fixtureHidden, pr: map[string]string{"tests/conftest.py": passAll}},
		"pull request's helper changes the expectation": {hidden: helperHidden, pr: map[string]string{"tests/helpers.py": "def expected():\n    return 1\n"}},
		"pull request adds a conftest the base lacks": {
			hidden: ctxHidden(t, "import calc\n\nfrom .helpers import expected\n\n\ndef test_fixed():\n    assert calc.fixed() == expected()\n", nil),
			base:   map[string]string{"tests/conftest.py": ""},
			pr:     map[string]string{"tests/conftest.py": passAll, "conftest.py": passAll},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prFiles := map[string]string{}
			for p, s := range c.base {
				prFiles[p] = s
			}
			for p, s := range c.pr {
				prFiles[p] = s
			}
			rep := grade(t, grader.Request{Repo: ctxRepo(t, calcBase, prFiles), Hidden: c.hidden, Base: ctxRepo(t, calcBase, c.base)})
			if rep.Verdict != report.VerdictFail {
				t.Errorf("a wrong pull request that changed the test support: verdict %s (%q), want fail; tests %v\n%s", rep.Verdict, rep.Reasons, rep.Tests, rep.Output)
			}
		})
	}
}

// Split grading lays the same context: the relative import, the fixture
// and the data file work there too.
func TestBaseTestContextSplit(t *testing.T) {
	hidden := ctxHidden(t, "from pathlib import Path\n\nimport calc\n\nfrom .helpers import expected\n\n\ndef test_fixed(answer):\n    want = int((Path(__file__).parent / 'data' / 'answer.txt').read_text())\n    assert calc.fixed() == expected() == answer == want\n", nil)
	base := ctxRepo(t, calcBase, nil)
	for _, pr := range []struct {
		calc string
		want report.Verdict
	}{{calcPR, report.VerdictPass}, {calcBase, report.VerdictFail}} {
		rep := grade(t, grader.Request{Repo: ctxRepo(t, pr.calc, nil), Hidden: hidden, Base: base, Split: true})
		if rep.Verdict != pr.want {
			t.Errorf("split, pull request %q: verdict %s (%q), want %s; tests %v\n%s", pr.calc, rep.Verdict, rep.Reasons, pr.want, rep.Tests, rep.Output)
		}
	}
}

// A base that hangs (the bug the pull request fixes is an endless loop)
// is killed at its own budget and counts as failing: the right pull
// request passes, the wrong one (the base itself) fails with "timed out",
// and neither grade is an error.
func TestHangingBase(t *testing.T) {
	hidden := hiddenWith(t, nil)
	hang := "def fixed():\n    while True:\n        pass\n"
	base := treeOf(t, map[string]string{"calc.py": hang})
	for _, pr := range []struct {
		calc string
		want report.Verdict
	}{{calcPR, report.VerdictPass}, {hang, report.VerdictFail}} {
		began := time.Now()
		rep := grade(t, grader.Request{Repo: treeOf(t, map[string]string{"calc.py": pr.calc}), Hidden: hidden, Base: base, Timeout: 75 * time.Second})
		took := time.Since(began)
		// The base's budget is 60 s; the right pull request's runs take a
		// few seconds, and its grade waits for the base 30 s past them.
		if pr.want == report.VerdictPass && took > 50*time.Second {
			t.Errorf("the right pull request's grade took %.1fs: it waited out the hanging base's budget", took.Seconds())
		}
		if pr.want == report.VerdictPass && (rep.BaseCheck == nil || !strings.Contains(rep.BaseCheck.Note, "timed out")) {
			t.Errorf("base check %+v does not say the base timed out", rep.BaseCheck)
		}
		if rep.Verdict != pr.want {
			t.Errorf("pull request %q: verdict %s (%q), want %s; tests %v", pr.calc, rep.Verdict, rep.Reasons, pr.want, rep.Tests)
		}
		if pr.want == report.VerdictFail && (!slices.Contains(rep.Failed, "test_calc.py::test_fixed") || !slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, "timed out") })) {
			t.Errorf("the hanging test is not failed with \"timed out\" as the reason: failed %v, reasons %q", rep.Failed, rep.Reasons)
		}
		t.Logf("pull request %q graded %s in %.1fs", pr.calc, rep.Verdict, took.Seconds())
	}
}

// Graded split, a tree that hangs in a call fails the same way, timed out.
func TestHangingBaseSplit(t *testing.T) {
	hang := treeOf(t, map[string]string{"calc.py": "def fixed():\n    while True:\n        pass\n"})
	rep := grade(t, grader.Request{Repo: hang, Hidden: hiddenWith(t, nil), Base: hang, Timeout: 40 * time.Second, Split: true})
	if rep.Verdict != report.VerdictFail || !slices.Contains(rep.Failed, "test_calc.py::test_fixed") ||
		!slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, "timed out") }) {
		t.Errorf("split, a tree that hangs: verdict %s (%q), failed %v; want fail, timed out", rep.Verdict, rep.Reasons, rep.Failed)
	}
}

package test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// suiteBase is a small library with its own suite: a package, a test
// package with a conftest fixture and a data file, a class, a
// parametrized test, a test that fails on the base and one that is
// skipped.
var suiteBase = map[string]string{
	"pyproject.toml":   "[project]\nname = \"calc\"\nversion = \"1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
	"calc/__init__.py": "from calc.ops import add, mul, slug\n",
	"calc/ops.py": `def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def slug(s):
    return "-".join(s.lower().split())


def parse(s):
    return int(s) + 1  # a bug the base's test_parse shows
`,
	"tests/__init__.py": "",
	"tests/conftest.py": `import pathlib

import pytest


@pytest.fixture
def table():
    rows = (pathlib.Path(__file__).parent / "data" / "table.txt").read_text().split()
    return [tuple(int(x) for x in r.split(",")) for r in rows]
`,
	"tests/data/table.txt": "1,2,3\n2,3,5\n",
	"tests/test_ops.py": `import pytest

from calc import add, mul
from calc.ops import parse


def test_add(table):
    for a, b, want in table:
        assert add(a, b) == want


class TestMul:
    @pytest.mark.parametrize("a,b,want", [(2, 3, 6), (1.5, 2, 3.0)])
    def test_mul(self, a, b, want):
        assert mul(a, b) == want


def test_parse():
    assert parse("41") == 41


@pytest.mark.skip(reason="not yet")
def test_later():
    assert False
`,
	"tests/test_slug.py": `from calc import slug


def test_slug():
    assert slug("Hello World") == "hello-world"
`,
}

// suiteTree builds a tree of base's files changed by edits ("" removes a
// file).
func suiteTree(t *testing.T, base map[string]string, edits map[string]string) *tree.Tree {
	t.Helper()
	files := map[string]string{}
	for p, s := range base {
		files[p] = s
	}
	for p, s := range edits {
		if s == "" {
			delete(files, p)
			continue
		}
		files[p] = s
	}
	var tf []tree.File
	for p, s := range files {
		tf = append(tf, tree.File{Path: p, Mode: 0o644, Data: []byte(s)})
	}
	tr, err := tree.New(tf)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRegressions runs the base's own suite against pull requests: one
// that fixes the bug the base's test shows and breaks nothing, one that
// keeps that fix but breaks an unrelated function (and edits the tests
// and the pytest configuration to hide it), and one whose change makes a
// test module fail to import. Only the regressions count against them:
// never a test that failed or was skipped on the base, never a flaky one.
func TestRegressions(t *testing.T) {
	g := testenv.Grading(t).Grader
	base := suiteTree(t, suiteBase, nil)
	fix := strings.Replace(suiteBase["calc/ops.py"], "int(s) + 1  # a bug the base's test_parse shows", "int(s)", 1)
	cases := []struct {
		name      string
		edits     map[string]string
		verdict   report.Verdict
		regressed []string
	}{
		{name: "honest fix", verdict: report.VerdictPass,
			edits: map[string]string{"calc/ops.py": fix, "tests/test_new.py": "from calc.ops import parse\n\n\ndef test_parse_zero():\n    assert parse('0') == 0\n"}},
		{name: "fix that breaks slug, tests and config edited to hide it", verdict: report.VerdictFail,
			regressed: []string{"tests/test_slug.py::test_slug"},
			edits: map[string]string{
				"calc/ops.py":        strings.Replace(fix, `"-".join`, `"_".join`, 1),
				"tests/test_slug.py": "def test_slug():\n    pass\n",
				"pyproject.toml":     suiteBase["pyproject.toml"] + "addopts = \"--deselect tests/test_slug.py::test_slug\"\n",
			}},
		{name: "fix whose slug fails after add in one process, not alone", verdict: report.VerdictPass,
			edits: map[string]string{
				"calc/ops.py": strings.Replace(strings.Replace(fix, "def add(a, b):\n    return a + b\n",
					"_added = []\n\n\ndef add(a, b):\n    _added.append(1)\n    return a + b\n", 1),
					"def slug(s):\n", "def slug(s):\n    assert not _added\n", 1),
			}},
		{name: "fix that removes mul, a module fails to import", verdict: report.VerdictFail,
			regressed: []string{"tests/test_ops.py::TestMul::test_mul[1.5-2-3.0]", "tests/test_ops.py::TestMul::test_mul[2-3-6]", "tests/test_ops.py::test_add"},
			edits: map[string]string{
				"calc/ops.py":      strings.Replace(fix, "def mul(a, b):\n    return a * b\n", "", 1),
				"calc/__init__.py": "from calc.ops import add, slug\n",
			}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			pr := suiteTree(t, suiteBase, c.edits)
			rep, err := g.Regress(context.Background(), grader.RegressRequest{Repo: pr, Base: base, Budget: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s %v; base %+v, pr %+v; regressed %v, flaky %v, fixed %v, failing on base %d\n%s",
				c.name, rep.Verdict, rep.Reasons, rep.Base, rep.PR, rep.Regressed, rep.Flaky, rep.Fixed, rep.FailingOnBase, rep.Output)
			if rep.Verdict != c.verdict {
				t.Errorf("verdict %s (%v), want %s", rep.Verdict, rep.Reasons, c.verdict)
			}
			if !slices.Equal(rep.Regressed, c.regressed) && !(len(rep.Regressed) == 0 && len(c.regressed) == 0) {
				t.Errorf("regressed %q, want %q", rep.Regressed, c.regressed)
			}
			// The base: 6 tests (the class's two cases), test_parse
			// failing, test_later skipped.
			if rep.Base.Total != 6 || rep.Base.Skipped != 1 || rep.Base.Failed != 1 {
				t.Errorf("base counts %+v, want 6 tests, 1 failed, 1 skipped", rep.Base)
			}
			if rep.FailingOnBase != 1 {
				t.Errorf("failing on base %d, want 1 (test_parse)", rep.FailingOnBase)
			}
			if wantFlaky := strings.Contains(c.name, "alone"); wantFlaky != slices.Equal(rep.Flaky, []string{"tests/test_slug.py::test_slug"}) {
				t.Errorf("flaky %q (want test_slug: %v)", rep.Flaky, wantFlaky)
			}
			if c.verdict == report.VerdictPass && !slices.Contains(rep.Fixed, "tests/test_ops.py::test_parse") {
				t.Errorf("fixed %q: want test_parse, which the fix makes pass", rep.Fixed)
			}
			if slices.ContainsFunc(rep.Regressed, func(id string) bool { return strings.Contains(id, "test_new") || strings.Contains(id, "test_later") }) {
				t.Errorf("regressed %q names a test the base did not pass", rep.Regressed)
			}
		})
	}
}

package test

import (
	"context"
	"net/http"
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
	return treeOf(t, files)
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
		changed   []string
	}{
		{name: "honest fix", verdict: report.VerdictPass,
			edits: map[string]string{"calc/ops.py": fix, "tests/test_new.py": "from calc.ops import parse\n\n\ndef test_parse_zero():\n    assert parse('0') == 0\n"}},
		{name: "fix that breaks slug, its pytest configuration edited to hide it", verdict: report.VerdictFail,
			regressed: []string{"tests/test_slug.py::test_slug"},
			edits: map[string]string{
				"calc/ops.py":    strings.Replace(fix, `"-".join`, `"_".join`, 1),
				"pytest.ini":     "[pytest]\naddopts = --deselect tests/test_slug.py::test_slug\n",
				"pyproject.toml": suiteBase["pyproject.toml"] + "addopts = \"--deselect tests/test_slug.py::test_slug\"\n",
			}},
		{name: "fix that changes slug and rewrites its test", verdict: report.VerdictPass, changed: []string{"tests/test_slug.py::test_slug"},
			edits: map[string]string{
				"calc/ops.py":        strings.Replace(fix, `"-".join`, `"_".join`, 1),
				"tests/test_slug.py": "from calc import slug\n\n\ndef test_slug():\n    assert slug(\"Hello World\") == \"hello_world\"\n",
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
			if !slices.Equal(rep.Changed, c.changed) {
				t.Errorf("changed %q, want %q", rep.Changed, c.changed)
			}
			if slices.ContainsFunc(rep.Regressed, func(id string) bool { return strings.Contains(id, "test_new") || strings.Contains(id, "test_later") }) {
				t.Errorf("regressed %q names a test the base did not pass", rep.Regressed)
			}
		})
	}
}

// TestRegressionsWithoutAddoptsPlugins: a repository whose addopts name a
// plugin the environment lacks (--cov without pytest-cov, as parse's and
// python-semver's do) is not "not comparable": its suite runs without its
// addopts, on both trees alike, and the report says so; likewise a
// --strict-config meeting a missing plugin's option.
func TestRegressionsWithoutAddoptsPlugins(t *testing.T) {
	g := testenv.Grading(t).Grader
	for _, c := range []struct{ name, addopts, says string }{
		{"cov", "addopts = \"--cov=calc --cov-report=term-missing\"\n", "--cov=calc --cov-report=term-missing"},
		// structlog's: --strict-config and pytest-asyncio's options, without
		// pytest-asyncio.
		{"strict_config", "addopts = [\"--strict-config\"]\nasyncio_mode = \"auto\"\n", "Unknown config option: asyncio_mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			with := map[string]string{"pyproject.toml": suiteBase["pyproject.toml"] + c.addopts}
			base := suiteTree(t, suiteBase, with)
			with["calc/ops.py"] = strings.Replace(suiteBase["calc/ops.py"], "return a * b", "return a * b + 1", 1)
			rep, err := g.Regress(context.Background(), grader.RegressRequest{Repo: suiteTree(t, suiteBase, with), Base: base, Budget: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != report.VerdictFail || len(rep.Regressed) != 2 || !strings.Contains(strings.Join(rep.Reasons, "\n"), c.says) {
				t.Errorf("%s %q; regressed %q; want fail, the two mul cases, and a reason quoting %q\n%s", rep.Verdict, rep.Reasons, rep.Regressed, c.says, rep.Output)
			}
		})
	}
}

// TestRegressionsReuseTheBaseRun: the base's run of a regression run is
// kept for the next push against the same base, and a base that differs
// runs again.
func TestRegressionsReuseTheBaseRun(t *testing.T) {
	g := testenv.Grading(t).Grader
	base := suiteTree(t, suiteBase, map[string]string{"README": "reuse test " + t.Name()})
	pr := suiteTree(t, suiteBase, map[string]string{"README": "reuse test " + t.Name(), "calc/ops.py": strings.Replace(suiteBase["calc/ops.py"], "a + b", "b + a", 1)})
	var reps []*report.Regressions
	for i := range 2 {
		rep, err := g.Regress(context.Background(), grader.RegressRequest{Repo: pr, Base: base, Budget: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if rep.BaseReused != (i == 1) || rep.Verdict != report.VerdictPass {
			t.Errorf("run %d: base reused %v, verdict %s %q; want reused only the second time, pass", i+1, rep.BaseReused, rep.Verdict, rep.Reasons)
		}
		reps = append(reps, rep)
	}
	if reps[0].Base != reps[1].Base {
		t.Errorf("the reused base run counts %+v, the first %+v", reps[1].Base, reps[0].Base)
	}
	other := suiteTree(t, suiteBase, map[string]string{"README": "another base " + t.Name()})
	if rep, err := g.Regress(context.Background(), grader.RegressRequest{Repo: pr, Base: other, Budget: 2 * time.Minute}); err != nil || rep.BaseReused {
		t.Errorf("another base: reused %v, %v", rep != nil && rep.BaseReused, err)
	}
}

// TestServeRegressions walks the regression run through the real binary,
// SQLite, the file store and Docker, on by default: a pull request that
// passes every hidden test and breaks word_count, which the base's own
// tests check, gets a green grade and a failing "testfirst / regressions"
// check run naming the broken test, and the honest one a passing one. The
// check run says ids and counts, never the output; the grade's page shows
// the output to the requester only.
func TestServeRegressions(t *testing.T) {
	p := newPipelineEnv(t)
	p.withRegressions()
	p.noReference = true
	gh := p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Bigrams\n\n- [ ] bigrams of a sentence")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")
	gh.SetPermission(pipeOwner, pipeRepo, "rita", "read")
	s := p.serve(t, "")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	deliver("issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	p.comment(t, s, 1, "testfirst opened a ticket for #1")
	k1, d1 := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "**v1** are ready for review")
	p.decide(t, s, k1, d1, "alice", "")

	openPull := func(n int, head string) {
		t.Helper()
		gh.AddPull(pipeOwner, pipeRepo, n, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
		deliver("pull_request", "pr-opened-"+itoa(int64(n)), patchFixture(t, "pull_request/opened.payload.json", map[string]any{
			"number": n, "pull_request.number": n, "pull_request.body": "Fixes #1", "pull_request.head.sha": head,
			"pull_request.state": "open", "installation.id": 1}))
	}
	tokenize, ok := p.fixed.Lookup("wordstats/tokenize.py")
	if !ok {
		t.Fatal("the sample has no wordstats/tokenize.py")
	}
	broken := strings.Replace(string(tokenize.Data), "return len(tokenize(text))", "return len(tokenize(text)) or 1", 1)
	if broken == string(tokenize.Data) {
		t.Fatal("word_count is not as this test expects")
	}
	brokenSHA := p.commit("break-count", p.fixed, map[string]string{"wordstats/tokenize.py": broken})
	openPull(2, brokenSHA)
	p.run(t, s, brokenSHA, "pass", completed("success"))
	r := p.regressionRun(t, s, brokenSHA, "failing", completed("failure"))
	if !strings.Contains(r.Summary, "`tests/test_existing.py::test_word_count`") || !strings.Contains(r.Title, "1 regression") {
		t.Errorf("the regression check run does not name the broken test: %s\n%s", r.Title, r.Summary)
	}
	if strings.Contains(r.Summary, "assert") || strings.Contains(r.Summary, "AssertionError") {
		t.Errorf("the regression check run quotes the output:\n%s", r.Summary)
	}

	fixedSHA := p.commit("fix", p.fixed, nil)
	openPull(3, fixedSHA)
	p.run(t, s, fixedSHA, "pass", completed("success"))
	ok2 := p.regressionRun(t, s, fixedSHA, "passing", completed("success"))
	if !strings.Contains(ok2.Title, "no regressions") || !strings.Contains(ok2.Summary, "the one of an earlier push against the same base") {
		t.Errorf("the honest pull request's regression check run: %s\n%s", ok2.Title, ok2.Summary)
	}

	// The grade's page: the requester sees the failing run's output, a
	// reader of the repository its ids only.
	gradeLink := r.DetailsURL
	if gradeLink == "" {
		t.Fatal("the regression check run links no page")
	}
	_, full := p.page(t, s, "alice", gradeLink)
	if !strings.Contains(full, "Regressions in the repository") || !strings.Contains(full, "test_word_count") || !strings.Contains(full, "AssertionError") {
		t.Errorf("the requester's grade page lacks the regression run or its output:\n%s", full)
	}
	_, shared := p.page(t, s, "rita", gradeLink)
	if !strings.Contains(shared, "test_word_count") || strings.Contains(shared, "AssertionError") {
		t.Errorf("a reader's grade page: want the regressed id and no output:\n%s", shared)
	}
}

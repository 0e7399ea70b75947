package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// styleCase is a testdata/styles/<name>/case.json: a base tree, a pull
// request tree and hidden tests in a style real suites use, and the ids
// the grade must report.
type styleCase struct {
	Description string `json:"description"`
	// CaseNames is the report's map of numbered cases to real ids.
	CaseNames map[string]string `json:"case_names"`
	// TrustedCollection grades with Request.TrustedCollection.
	TrustedCollection bool     `json:"trusted_collection"`
	Tests             []string `json:"tests"`
}

// TestTestStyles grades each style's pull request against its hidden
// tests through the real grader image: every hidden test pytest runs is
// listed and reported under the id pytest gives it, the correct pull
// request passes, and the base fails.
func TestTestStyles(t *testing.T) {
	dirs, err := filepath.Glob("testdata/styles/*/case.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no style cases: %v", err)
	}
	g := testenv.Grading(t)
	for _, file := range dirs {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var c styleCase
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			load := func(part string) *tree.Tree {
				tree, err := tree.Load(filepath.Join(dir, part))
				if err != nil {
					t.Fatal(err)
				}
				return tree
			}
			hidden := load("hidden")
			rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: load("pr"), Hidden: hidden, Base: load("base"), Timeout: 3 * time.Minute, TrustedCollection: c.TrustedCollection})
			if err != nil {
				t.Fatalf("grade: %v", err)
			}
			checkReportInvariants(t, rep, hidden)
			var ids []string
			for _, r := range rep.Tests {
				ids = append(ids, r.ID)
			}
			slices.Sort(ids)
			if diff := cmp.Diff(c.Tests, ids); diff != "" {
				t.Errorf("reported tests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.CaseNames, rep.CaseNames); diff != "" {
				t.Errorf("case names (-want +got):\n%s", diff)
			}
			if rep.Verdict != report.VerdictPass {
				t.Errorf("verdict %s, want pass: %q\n%s", rep.Verdict, rep.Reasons, rep.Output)
			}
			if rep.BaseCheck == nil || rep.BaseCheck.AllPass || rep.BaseCheck.Error != "" {
				t.Errorf("base check %+v: want every test run and some failing on the base", rep.BaseCheck)
			}
			if rep.Sentinels != report.SentinelsOK {
				t.Errorf("sentinels %s, want ok", rep.Sentinels)
			}
		})
	}
}

// TestHiddenConftestKeepsTheTreesOut: with a conftest.py of the hidden
// set's own loaded, the tree's conftest files stay out of the run: a base
// tree with conftest files that turn every report into a pass, at its root
// and beside a module named like a hidden directory, is still graded fail.
func TestHiddenConftestKeepsTheTreesOut(t *testing.T) {
	g := testenv.Grading(t)
	dir := filepath.Join("testdata", "styles", "conftest")
	base, err := tree.Load(filepath.Join(dir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := tree.Load(filepath.Join(dir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	forge := []byte("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n" +
		"    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n    report.longrepr = None\n")
	files := slices.Clone(base.Files)
	files = append(files,
		tree.File{Path: "conftest.py", Mode: 0o644, Data: forge},
		tree.File{Path: "more/conftest.py", Mode: 0o644, Data: forge},
	)
	pr, err := tree.New(files)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: pr, Hidden: hidden, Base: base, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatalf("grade: %v", err)
	}
	checkReportInvariants(t, rep, hidden)
	if rep.Verdict != report.VerdictFail {
		t.Errorf("verdict %s, want fail: %q", rep.Verdict, rep.Reasons)
	}
	var signals []string
	for _, s := range rep.TamperSignals {
		signals = append(signals, s.Path)
	}
	for _, p := range []string{"conftest.py", "more/conftest.py"} {
		if !slices.Contains(signals, p) {
			t.Errorf("tamper signals %q lack %s", signals, p)
		}
	}
}

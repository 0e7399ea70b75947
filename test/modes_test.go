package test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// tree builds an in-memory tree from path -> content.
func treeOf(t *testing.T, files map[string]string) *tree.Tree {
	t.Helper()
	var list []tree.File
	for p, content := range files {
		list = append(list, tree.File{Path: p, Mode: 0o644, Data: []byte(content)})
	}
	tr, err := tree.New(list)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func grade(t *testing.T, req grader.Request) *report.Report {
	t.Helper()
	g := testenv.Grading(t)
	if req.Timeout == 0 {
		req.Timeout = 2 * time.Minute
	}
	rep, err := g.Grader.Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("grade: %v", err)
	}
	checkReportInvariants(t, rep, req.Hidden)
	return rep
}

// TestRepoPackagesWinOverInstalled: the tree under test comes after the
// standard library on sys.path (it cannot shadow it) and before
// site-packages (its own copy of a package the image also has wins). The
// image's pytest pulls in more_itertools, so grading more-itertools itself
// must test the tree's copy.
func TestRepoPackagesWinOverInstalled(t *testing.T) {
	repo := treeOf(t, map[string]string{
		"more_itertools/__init__.py": "WHERE = 'repo'\n",
		"json.py":                    "raise SystemExit('the tree shadowed the standard library')\n",
	})
	hidden := treeOf(t, map[string]string{
		"test_paths.py": `# testfirst-canary: tfc-00000000paths000
import json
import sys

import more_itertools


def test_repo_copy_wins_over_site_packages():
    assert more_itertools.__file__ == "/repo/more_itertools/__init__.py"
    assert more_itertools.WHERE == "repo"


def test_stdlib_is_not_shadowed():
    assert json.__file__.startswith("/usr/lib/python3")


def test_repo_sits_between_stdlib_and_site_packages():
    i = sys.path.index("/repo")
    assert any("dist-packages" in p for p in sys.path[i + 1:])
    assert not any("dist-packages" in p for p in sys.path[:i])
`,
	})
	rep := grade(t, grader.Request{Repo: repo, Hidden: hidden})
	if rep.Verdict != report.VerdictPass {
		t.Errorf("verdict %s (%q), tests %v\n%s", rep.Verdict, rep.Reasons, rep.Tests, rep.Output)
	}
}

func sampleRequest(t *testing.T, caseName string) grader.Request {
	t.Helper()
	_, pr, base := loadCase(t, filepath.Join(sampleDir, "cases", caseName))
	hidden, err := tree.Load(filepath.Join(sampleDir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	return grader.Request{Repo: pr, Hidden: hidden, Base: base}
}

// TestNoUIDSplit: for runtimes without SETUID the tests run as the
// wrapper's uid with no capabilities at all; the grade still works and says
// best_effort.
func TestNoUIDSplit(t *testing.T) {
	req := sampleRequest(t, "correct")
	req.NoUIDSplit = true
	rep := grade(t, req)
	if rep.Verdict != report.VerdictPass || rep.Trust != report.TrustBestEffort {
		t.Errorf("verdict %s trust %s, want pass best_effort (%q)", rep.Verdict, rep.Trust, rep.Reasons)
	}
	if rep.Isolation.UIDSplit || rep.Isolation.UID != 0 {
		t.Errorf("isolation %+v, want no split and uid 0", rep.Isolation)
	}
	testenv.CheckSandboxes(t)
}

// TestCommandMode: a non-pytest command is graded by its exit status, or by
// the JUnit report it writes to $TESTFIRST_JUNIT, with trust low.
func TestCommandMode(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		verdict report.Verdict
		ids     []string
	}{
		{"exit 0", []string{"python3", "-c", "import wordstats"}, report.VerdictPass, []string{"python3"}},
		{"exit 1", []string{"sh", "-c", "exit 1"}, report.VerdictFail, []string{"sh"}},
		{"junit", []string{"sh", "-c", `printf '<testsuite><testcase classname="suite" name="ok"/><testcase classname="suite" name="bad"><failure/></testcase></testsuite>' > "$TESTFIRST_JUNIT"; exit 1`}, report.VerdictFail, []string{"suite::ok", "suite::bad"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := sampleRequest(t, "correct")
			req.Base = nil
			req.Command = tt.command
			rep := grade(t, req)
			if rep.Verdict != tt.verdict || rep.Trust != report.TrustLow {
				t.Errorf("verdict %s trust %s, want %s low (%q)", rep.Verdict, rep.Trust, tt.verdict, rep.Reasons)
			}
			var ids []string
			for _, tr := range rep.Tests {
				ids = append(ids, tr.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.ids, ",") {
				t.Errorf("tests %v, want %v", ids, tt.ids)
			}
		})
	}
}

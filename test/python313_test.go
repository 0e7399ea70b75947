package test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// python313Attacks are the attacks that bend pytest and pluggy from the
// inside, whose defences read their internals: the ones most likely to
// break when Debian's newer pytest (8) and pluggy (1.5) replace bookworm's.
// TESTFIRST_PY313_ALL=1 grades the whole corpus instead.
var python313Attacks = []string{
	"patch-testreport", "patch-callinfo", "patch-function-runtest", "stack-walk-plugin",
	"settrace-flip-assert-locals", "setprofile-flip-report", "eq-any-str-leaves", "forge-junit-fds",
	"sentinel-aware-forge", "answer-from-caller-source", "pytest-exit-zero", "swap-test-code",
	"conftest-hookwrapper-root", "pytest-ini-plugin",
}

// TestPython313 grades sample cases in the Python 3.13 environment (Debian
// trixie, pytest 8, pluggy 1.5), which `environment.python: "3.13"` picks:
// honest cases grade as they do on 3.11, with trust isolated, and no attack
// passes. The evidence plugin reads pluggy's internals; this is the test
// that says when a Debian release moves them.
func TestPython313(t *testing.T) {
	g, _, _ := envGrading(t, "http://127.0.0.1:9/simple/")
	hidden, err := tree.Load(filepath.Join(sampleDir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	grade := func(t *testing.T, dir string) (caseSpec, *report.Report) {
		c, pr, base := loadCase(t, dir)
		req := grader.Request{Repo: pr, Hidden: hidden, Base: base, Timeout: 3 * time.Minute, Python: "3.13"}
		if c.Reference != "" {
			if req.Reference, err = os.ReadFile(filepath.Join(sampleDir, c.Reference)); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := g.Grader.Grade(context.Background(), req)
		if err != nil {
			t.Fatalf("grade: %v", err)
		}
		if rep.Environment == nil || rep.Environment.Python != "3.13" {
			t.Fatalf("graded in environment %+v, want python 3.13", rep.Environment)
		}
		checkReportInvariants(t, rep, hidden)
		return c, rep
	}
	for _, name := range []string{"correct", "nothing-implemented", "partly-wrong"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rep := grade(t, filepath.Join(sampleDir, "cases", name))
			checkExpect(t, c, rep)
			if rep.Trust != report.TrustIsolated {
				t.Errorf("trust %s, want isolated", rep.Trust)
			}
			if n := report.StrongSignals(rep.Evidence); n > 0 {
				t.Errorf("honest case raised %d strong signals: %+v", n, rep.Evidence)
			}
		})
	}
	attacks := python313Attacks
	if os.Getenv("TESTFIRST_PY313_ALL") != "" {
		attacks = nil
		for _, dir := range caseDirs(t, "attacks") {
			attacks = append(attacks, filepath.Base(dir))
		}
	}
	for _, name := range attacks {
		t.Run("attack/"+name, func(t *testing.T) {
			t.Parallel()
			_, rep := grade(t, filepath.Join(sampleDir, "attacks", name))
			t.Logf("%s -> %s (%s); trust %s", name, rep.Verdict, strings.Join(rep.Reasons, "; "), rep.Trust)
			if rep.Verdict == report.VerdictPass {
				t.Errorf("attack %s graded pass on Python 3.13: %q", name, rep.Reasons)
			}
		})
	}
}

// TestPythonFromRequiresPython: a grade that asks for no Python runs the
// one the base's requires-python allows (3.13 for ">=3.12", which
// bookworm's 3.11 does not meet), and the report says why.
func TestPythonFromRequiresPython(t *testing.T) {
	g, _, _ := envGrading(t, "http://127.0.0.1:9/simple/")
	base := treeOf(t, map[string]string{
		"pyproject.toml": "[project]\nname = \"x\"\nrequires-python = \">=3.12\"\n",
		"app.py":         "def f():\n    return 1\n",
	})
	hidden := treeOf(t, map[string]string{"test_py.py": "import sys\n\nfrom app import f\n\n\ndef test_version():\n    assert sys.version_info[:2] >= (3, 12) and f() == 1\n"})
	rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: base, Hidden: hidden, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := `pyproject.toml requires-python ">=3.12"`
	if rep.Verdict != report.VerdictPass || rep.Environment == nil || rep.Environment.Python != "3.13" || rep.Environment.PythonFrom != want ||
		!strings.Contains(report.EnvironmentLine(rep.Environment, rep.Network), "python 3.13 ("+want+")") {
		t.Fatalf("verdict %s %q, environment %+v: want a pass on python 3.13, said to come from %s\n%s", rep.Verdict, rep.Reasons, rep.Environment, want, rep.Output)
	}
}

package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// honestCase is a testdata/honest/<name>/case.json: a base tree (base/),
// hidden tests (hidden/), the honest complete pull request (pr/, laid over
// the base) and, when there is one, an honest unfinished pull request
// (unfinished/, laid over the base). None of them is an attack: whatever
// they get, it is never tampered, invalid_task or error.
type honestCase struct {
	Description string `json:"description"`
	// PRVerdict is the verdict of the complete pull request: pass.
	PRVerdict report.Verdict `json:"pr_verdict"`
	// UnfinishedVerdict is the verdict of the unfinished pull request and
	// of the base tree graded as a pull request: fail.
	UnfinishedVerdict report.Verdict `json:"unfinished_verdict"`
	// UnfinishedReason and BaseReason are words the reasons of those
	// grades must hold: the real cause of the failure.
	UnfinishedReason string `json:"unfinished_reason"`
	BaseReason       string `json:"base_reason"`
	// Skip names why a case is known to be graded wrong still.
	Skip string `json:"skip"`
}

// overlay lays the files of dir over base: the pull request tree.
func overlay(t *testing.T, base *tree.Tree, dir string) *tree.Tree {
	t.Helper()
	over, err := tree.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]tree.File{}
	for _, f := range base.Files {
		files[f.Path] = f
	}
	for _, f := range over.Files {
		files[f.Path] = f
	}
	var all []tree.File
	for _, f := range files {
		all = append(all, f)
	}
	out, err := tree.New(all)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHonestShapes grades honest work of shapes real projects have
// (issue "Honest work accused of tampering"): hidden tests that fail to
// collect on the base, unittest skips, a package that fails to import,
// and more. The complete pull request passes; the base tree graded as a
// pull request (the base check of a version) and an unfinished pull
// request fail, with the real cause in the reasons, and are never
// tampered, invalid_task or error.
func TestHonestShapes(t *testing.T) {
	files, err := filepath.Glob("testdata/honest/*/case.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no honest cases: %v", err)
	}
	g := testenv.Grading(t)
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var c honestCase
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if c.Skip != "" {
				t.Skip(c.Skip)
			}
			base, err := tree.Load(filepath.Join(dir, "base"))
			if err != nil {
				t.Fatal(err)
			}
			hidden, err := tree.Load(filepath.Join(dir, "hidden"))
			if err != nil {
				t.Fatal(err)
			}
			grade := func(t *testing.T, repo *tree.Tree, want report.Verdict, reason string) {
				rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: repo, Hidden: hidden, Base: base, Timeout: 3 * time.Minute})
				if err != nil {
					t.Fatalf("grade: %v", err)
				}
				checkReportInvariants(t, rep, hidden)
				if rep.Verdict != want {
					t.Errorf("verdict %s, want %s: %q\nevidence %+v\n%s", rep.Verdict, want, rep.Reasons, rep.Evidence, rep.Output)
				}
				if reason != "" && !strings.Contains(strings.Join(rep.Reasons, "\n"), reason) {
					t.Errorf("reasons %q do not name %q", rep.Reasons, reason)
				}
				t.Logf("%s: %q", rep.Verdict, rep.Reasons)
			}
			t.Run("pr", func(t *testing.T) {
				grade(t, overlay(t, base, filepath.Join(dir, "pr")), c.PRVerdict, "")
			})
			t.Run("base", func(t *testing.T) {
				grade(t, base, c.UnfinishedVerdict, c.BaseReason)
			})
			if _, err := os.Stat(filepath.Join(dir, "unfinished")); err == nil {
				t.Run("unfinished", func(t *testing.T) {
					grade(t, overlay(t, base, filepath.Join(dir, "unfinished")), c.UnfinishedVerdict, c.UnfinishedReason)
				})
			}
		})
	}
}

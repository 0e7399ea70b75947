package test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// TestRealRegressions runs the regression run on real merged fix commits
// of public projects (the first commit of each project of the list
// TestRealRepos reads, TESTFIRST_REAL_REPOS_LIST for another): on the
// commit itself against its parent it must pass (flaky tests aside, which
// it names), and on the commit with an unrelated function of the library
// broken on purpose (breakUnrelated: the public top-level function the
// parent's tests name most that the commit's diff does not name, made to
// raise on its first line) it must fail and name regressed tests. The
// trees are the projects' whole trees at the two commits, tests included:
// the regression run takes the test files from the base itself. Like
// TestRealRepos it skips without the projects' git directories.
func TestRealRegressions(t *testing.T) {
	list := loadRealCommits(t)
	list.Commits = firstPerProject(t, list.Commits, os.Getenv("TESTFIRST_REAL_REPOS_PER_PROJECT"))
	root := cmp.Or(os.Getenv("TESTFIRST_REAL_REPOS"), defaultRealRepos)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	var have []realCommit
	for _, c := range list.Commits {
		if realRepoGitDir(root, c.Repo) != "" {
			have = append(have, c)
		}
	}
	if len(have) == 0 {
		t.Skipf("no git directory of the list's projects under %s (TESTFIRST_REAL_REPOS)", root)
	}
	g := testenv.Grading(t).Grader
	slots := make(chan struct{}, realRepoParallel)
	var mu sync.Mutex
	var lines []string
	t.Run("commits", func(t *testing.T) {
		for _, c := range have {
			t.Run(strings.ReplaceAll(c.Repo, "/", "+")+"@"+c.Commit[:10], func(t *testing.T) {
				t.Parallel()
				gitDir := realRepoGitDir(root, c.Repo)
				commit, err := gitTree(gitDir, c.Commit, nil)
				if err != nil {
					t.Fatal(err)
				}
				parent, err := gitTree(gitDir, c.Parent, nil)
				if err != nil {
					t.Fatal(err)
				}
				diff, err := gitOutput(gitDir, "diff", c.Parent, c.Commit)
				if err != nil {
					t.Fatal(err)
				}
				type run struct {
					name string
					repo *tree.Tree
					want report.Verdict
				}
				runs := []run{{"commit", commit, report.VerdictPass}}
				if broken, where, err := breakUnrelated(parent, commit, string(diff)); err != nil {
					// Still a case for the commit itself; said, not hidden.
					t.Logf("not broken on purpose: %v", err)
					mu.Lock()
					lines = append(lines, fmt.Sprintf("%-32s %-12s %-40s %v", c.Repo, c.Commit[:10], "broken: not made", err))
					mu.Unlock()
				} else {
					runs = append(runs, run{"broken " + where, broken, report.VerdictFail})
				}
				for _, as := range runs {
					slots <- struct{}{}
					rep, err := g.Regress(context.Background(), grader.RegressRequest{Repo: as.repo, Base: parent, Budget: 10 * time.Minute})
					<-slots
					if err != nil {
						t.Fatalf("%s: %v", as.name, err)
					}
					line := fmt.Sprintf("%-32s %-12s %-40s %-5s base %d/%d passed, pr %d/%d; %d regressed, %d flaky, %d failing on base; %.0fs",
						c.Repo, c.Commit[:10], as.name, rep.Verdict, rep.Base.Passed, rep.Base.Total, rep.PR.Passed, rep.PR.Total,
						max(rep.RegressedCount, len(rep.Regressed)), len(rep.Flaky), rep.FailingOnBase, rep.DurationSeconds)
					mu.Lock()
					lines = append(lines, line)
					mu.Unlock()
					t.Log(line)
					if rep.Verdict != as.want {
						t.Errorf("%s: %s, want %s: %q; regressed %q; flaky %q; output:\n%s", as.name, rep.Verdict, as.want, rep.Reasons, rep.Regressed, rep.Flaky, lastLines(rep.Output, 40))
					}
					if len(rep.Flaky) > 0 {
						t.Logf("%s: flaky %q", as.name, rep.Flaky)
					}
				}
			})
		}
	})
	sort.Strings(lines)
	t.Log("\n" + strings.Join(lines, "\n"))
}

// topLevelDef is a public top-level function's first line.
var topLevelDef = regexp.MustCompile(`^def ([A-Za-z][A-Za-z0-9_]*)\(`)

// notLibrary are the directories of a project that hold no library code
// (lark's lark/tools): breaking them breaks nothing its tests import.
var notLibrary = map[string]bool{"docs": true, "doc": true, "benchmark": true, "benchmarks": true, "bench": true, "examples": true,
	"example": true, "scripts": true, "tools": true, "tasks": true, "ci": true, ".github": true}

// breakUnrelated returns head with one function of the library broken:
// among the public top-level functions of head's non-test modules, the one
// whose name base's test files mention most and the diff does not
// mention, its first statement made a raise. It says which, as
// path:function.
func breakUnrelated(base, head *tree.Tree, diff string) (*tree.Tree, string, error) {
	var tests strings.Builder
	for _, f := range base.Files {
		if detect.IsTestFile(f.Path) && path.Ext(f.Path) == ".py" {
			tests.Write(f.Data)
			tests.WriteByte('\n')
		}
	}
	testText := tests.String()
	type candidate struct {
		file  int
		line  int
		name  string
		score int
	}
	var best candidate
	for i, f := range head.Files {
		if detect.IsTestFile(f.Path) || path.Ext(f.Path) != ".py" || f.IsSymlink() || path.Base(f.Path) == "setup.py" ||
			slices.ContainsFunc(strings.Split(path.Dir(f.Path), "/"), func(d string) bool { return notLibrary[d] }) {
			continue
		}
		for n, l := range strings.Split(string(f.Data), "\n") {
			m := topLevelDef.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			word := regexp.MustCompile(`\b` + m[1] + `\b`)
			if word.MatchString(diff) {
				continue
			}
			score := len(word.FindAllStringIndex(testText, -1))
			if score > best.score {
				best = candidate{file: i, line: n, name: m[1], score: score}
			}
		}
	}
	if best.score == 0 {
		return nil, "", fmt.Errorf("no public top-level function that the base's tests name and the diff does not")
	}
	f := head.Files[best.file]
	lines := strings.Split(string(f.Data), "\n")
	// The signature ends at the first line whose parentheses balance and
	// that ends with a colon; the body's indentation is its next line's.
	depth, end := 0, -1
	for i := best.line; i < len(lines); i++ {
		code, _, _ := strings.Cut(lines[i], "#")
		depth += strings.Count(code, "(") - strings.Count(code, ")")
		if depth == 0 && strings.HasSuffix(strings.TrimSpace(code), ":") {
			end = i
			break
		}
	}
	if end < 0 || end+1 >= len(lines) {
		return nil, "", fmt.Errorf("%s: the signature of %s does not end where expected", f.Path, best.name)
	}
	body := end + 1
	for body < len(lines) && strings.TrimSpace(lines[body]) == "" {
		body++
	}
	indent := lines[body][:len(lines[body])-len(strings.TrimLeft(lines[body], " \t"))]
	if indent == "" {
		return nil, "", fmt.Errorf("%s: %s has no indented body", f.Path, best.name)
	}
	out := append(append(append([]string{}, lines[:end+1]...), indent+`raise RuntimeError("broken on purpose")`), lines[end+1:]...)
	files := append([]tree.File(nil), head.Files...)
	files[best.file].Data = []byte(strings.Join(out, "\n"))
	t, err := tree.New(files)
	return t, f.Path + ":" + best.name, err
}

package test

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// realReposFile lists the real commits TestRealRepos grades; it is built by
// scripts/realrepos-select. TESTFIRST_REAL_REPOS_LIST names another list of
// the same form.
const realReposFile = "testdata/realrepos.json"

// defaultRealRepos is where the projects' git directories are looked for
// when TESTFIRST_REAL_REPOS is not set.
const defaultRealRepos = "/work/.mirror"

// realRepoParallel is how many grades run at once by default: each grade
// runs two sandboxes (the tree and the base), and the machine is shared.
const realRepoParallel = 2

// realCommit is one case of realrepos.json: a merged fix commit, its
// parent, and the test files it changed, which are the hidden tests.
type realCommit struct {
	Repo    string `json:"repo"`
	Subject string `json:"subject"`
	Commit  string `json:"commit"`
	Parent  string `json:"parent"`
	// Hidden are the commit's changed test files and the support files of
	// their test directories (conftest.py, helpers, __init__.py, data), by
	// path in the repository.
	Hidden []string `json:"hidden"`
	// Tests is how many test cases the hidden files hold when run on the
	// commit (0: not known); FailOnParent how many of the listed tests fail
	// on the parent.
	Tests        int `json:"tests"`
	FailOnParent int `json:"fail_on_parent"`
	// Reason, in a list of rejected commits, says why the selection did
	// not keep the commit. Such a list is graded to measure the grader on
	// the test styles it does not support yet; a commit without hidden
	// files is skipped.
	Reason string `json:"reason"`
}

// realCommits is the whole of realrepos.json.
type realCommits struct {
	About   string       `json:"about"`
	Python  string       `json:"python"`
	Commits []realCommit `json:"commits"`
}

// realGrade is what one grade of a real commit showed, for the figures.
type realGrade struct {
	repo, commit, subject, as string
	want, got                 report.Verdict
	passed, total             int
	weak                      int
	weakReasons               []string
	strong                    []string
	tamper                    int
	tamperReasons             []string
	twins                     *twinFigures
	seconds                   float64
}

// twinFigures is the report's twin coverage, read from its JSON so this
// test compiles against reports that do not have it yet.
type twinFigures struct {
	Twinned        int      `json:"twinned"`
	Of             int      `json:"of"`
	Contradictions []string `json:"contradictions"`
}

// TestRealRepos grades real merged fix commits of public pure-Python
// projects the way SWE-bench measures FAIL_TO_PASS: the commit's changed
// test files, with the conftest, helper and data files of their test
// directories, are the hidden tests, the parent is the base, the commit is
// the right pull request (it must grade pass) and the parent the wrong one
// (it must grade fail). Both trees leave the changed test files out, as a
// pull request graded by the service does not carry the hidden tests, and
// keep the repository's support files, which the hidden set carries too
// (tests that open data by a path relative to the working directory, as
// pyparsing's do, find it in the tree as in the project's own runs). No grade
// may raise strong evidence; every grade's weak evidence, tamper signals
// and, where the report has them, twin figures are logged, and a summary
// table closes the run.
//
// The trees are built at test time from the projects' git histories, which
// are never committed here: the test looks for ROOT/owner+name/repo (or
// ROOT/owner+name), a bare git directory, under ROOT = TESTFIRST_REAL_REPOS
// (default /work/.mirror), and skips when they are absent, as in CI, which
// has no network. Get them with `git clone --bare
// https://github.com/OWNER/NAME ROOT/OWNER+NAME/repo` for each repo of
// testdata/realrepos.json. TESTFIRST_REAL_REPOS_PARALLEL bounds the grades
// run at once (default 2); TESTFIRST_REAL_REPOS_LIST grades another list.
//
// By default it grades the first commit of each project with at most
// defaultMaxCases test cases, which keeps the whole suite within its time; TESTFIRST_REAL_REPOS_PER_PROJECT=N grades
// the first N, and =all every commit of the list: the benchmark of
// docs/benchmarks.md.
func TestRealRepos(t *testing.T) {
	list := loadRealCommits(t)
	list.Commits = firstPerProject(t, list.Commits, os.Getenv("TESTFIRST_REAL_REPOS_PER_PROJECT"))
	root := cmp.Or(os.Getenv("TESTFIRST_REAL_REPOS"), defaultRealRepos)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	gitDirs := map[string]string{}
	var missing []string
	for _, c := range list.Commits {
		if _, ok := gitDirs[c.Repo]; ok {
			continue
		}
		dir := realRepoGitDir(root, c.Repo)
		gitDirs[c.Repo] = dir
		if dir == "" {
			missing = append(missing, c.Repo)
		}
	}
	if len(missing) == len(gitDirs) {
		t.Skipf("no git directory of %s under %s (TESTFIRST_REAL_REPOS): clone each bare, e.g. git clone --bare https://github.com/%s %s",
			strings.Join(missing, ", "), root, missing[0], filepath.Join(root, strings.ReplaceAll(missing[0], "/", "+"), "repo"))
	}
	parallel := realRepoParallel
	if s := os.Getenv("TESTFIRST_REAL_REPOS_PARALLEL"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("TESTFIRST_REAL_REPOS_PARALLEL=%q: want a whole number of grades, 1 or more", s)
		}
		parallel = n
	}
	// TESTFIRST_REAL_REPOS_SPLIT=1 grades split (grader.Request.Split).
	split := os.Getenv("TESTFIRST_REAL_REPOS_SPLIT") == "1"
	// TESTFIRST_REAL_REPOS_WHEELS=DIR grades with a package index on
	// loopback that serves DIR's wheels (scripts/debian-wheels builds them
	// from Debian's packages); TESTFIRST_REAL_REPOS_WHEELS=unreachable
	// with an index that refuses every connection, as a service whose
	// index cannot be reached builds its environments; unset, with no
	// dependency environment at all.
	g := testenv.Grading(t)
	if dir := os.Getenv("TESTFIRST_REAL_REPOS_WHEELS"); dir == "unreachable" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		g, _, _ = envGrading(t, "http://"+addr+"/simple/")
	} else if dir != "" {
		wheels := map[string][]byte{}
		names, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			wheels[filepath.Base(name)] = data
		}
		if len(wheels) == 0 {
			t.Fatalf("TESTFIRST_REAL_REPOS_WHEELS=%s: no wheels there; build them with scripts/debian-wheels %s", dir, dir)
		}
		g, _, _ = envGrading(t, serveIndex(t, wheels, "127.0.0.1:0", nil))
	}
	slots := make(chan struct{}, parallel)

	var mu sync.Mutex
	var grades []realGrade
	t.Run("commits", func(t *testing.T) {
		for _, c := range list.Commits {
			name := strings.ReplaceAll(c.Repo, "/", "+") + "@" + c.Commit[:10]
			t.Run(name, func(t *testing.T) {
				gitDir := gitDirs[c.Repo]
				if gitDir == "" {
					t.Skipf("no git directory of %s under %s", c.Repo, root)
				}
				if len(c.Hidden) == 0 {
					t.Skipf("no hidden files: %s", c.Reason)
				}
				t.Parallel()
				trees, err := realTrees(gitDir, c)
				if err != nil {
					t.Fatal(err)
				}
				for _, as := range []struct {
					name string
					repo *tree.Tree
					want report.Verdict
				}{
					{"commit", trees.commit, report.VerdictPass},
					{"parent", trees.parent, report.VerdictFail},
				} {
					slots <- struct{}{}
					rep, err := g.Grader.Grade(context.Background(), grader.Request{
						Repo: as.repo, Hidden: trees.hidden, Base: trees.parent, Timeout: 15 * time.Minute, TrustedCollection: true, Split: split,
					})
					<-slots
					if err != nil {
						t.Fatalf("grade the %s: %v", as.name, err)
					}
					checkReportInvariants(t, rep, trees.hidden)
					rg := summarize(t, c, as.name, as.want, rep)
					mu.Lock()
					grades = append(grades, rg)
					mu.Unlock()
					t.Logf("%s", rg.line())
					if rep.Verdict != as.want {
						t.Errorf("the %s graded %s, want %s: %q; failed %v; output:\n%s", as.name, rep.Verdict, as.want, rep.Reasons, rep.Failed, lastLines(rep.Output, 40))
					}
					if len(rg.strong) > 0 {
						t.Errorf("the %s raised strong evidence on honest code: %v", as.name, rg.strong)
					}
					switch {
					case split && rep.Sealing != nil:
						s := rep.Sealing
						t.Logf("the %s: %d of %d passing tests sealed, %d graded in-process and passing; decided by the tree: %+v; in-process: %+v; refused on this tree alone: %d",
							as.name, s.Sealed, s.Passing, s.InProcessPassing, s.Decided, s.InProcess, len(s.RefusedHere))
						switch {
						case s.InProcessPassing > 0 && rep.Trust != report.TrustIsolated:
							t.Errorf("the %s graded split with %d passing tests in-process has trust %s, want isolated", as.name, s.InProcessPassing, rep.Trust)
						case s.InProcessPassing == 0 && rep.Trust != report.TrustSealed && rep.Trust != report.TrustSplit:
							t.Errorf("the %s graded split with trust %s, want sealed or split (isolation %+v)", as.name, rep.Trust, rep.Isolation)
						}
					case split:
						t.Errorf("the %s graded split has no sealing", as.name)
					case rep.Trust != report.TrustIsolated:
						t.Errorf("the %s graded with trust %s, want isolated (isolation %+v)", as.name, rep.Trust, rep.Isolation)
					}
					if as.name == "commit" && c.Tests > 0 && rep.Counts.Total != c.Tests {
						t.Errorf("the commit reported %d hidden test cases, the selection ran %d: the grader and a plain pytest run disagree on what the hidden files hold", rep.Counts.Total, c.Tests)
					}
				}
			})
		}
	})
	t.Log("\n" + realReposTable(grades) + "\n" + realCommitsTable(grades))
	t.Cleanup(func() {
		if n := testenv.CheckSandboxes(t); n == 0 && len(grades) > 0 {
			t.Error("no sandbox container was checked")
		}
	})
}

// defaultMaxCases bounds the hidden test cases of the commits graded by
// default: a suite of thousands (idna's 6,336) takes minutes per grade on
// two cores, four sandboxes at a time.
const defaultMaxCases = 600

// firstPerProject keeps the first n commits of each project, n read from
// spec: "" is the first commit of at most defaultMaxCases test cases, "all"
// keeps every commit.
func firstPerProject(t *testing.T, commits []realCommit, spec string) []realCommit {
	t.Helper()
	if spec == "all" {
		return commits
	}
	n := 1
	if spec != "" {
		var err error
		if n, err = strconv.Atoi(spec); err != nil || n < 1 {
			t.Fatalf("TESTFIRST_REAL_REPOS_PER_PROJECT=%q: want a whole number of commits per project, 1 or more, or all", spec)
		}
	}
	seen := map[string]int{}
	var kept []realCommit
	for _, c := range commits {
		if spec == "" && c.Tests > defaultMaxCases {
			continue
		}
		if seen[c.Repo] < n {
			seen[c.Repo]++
			kept = append(kept, c)
		}
	}
	return kept
}

// loadRealCommits reads realrepos.json, refusing fields it does not know and
// cases that cannot be built.
func loadRealCommits(t *testing.T) realCommits {
	t.Helper()
	file := cmp.Or(os.Getenv("TESTFIRST_REAL_REPOS_LIST"), realReposFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var list realCommits
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		t.Fatalf("%s: %v (regenerate it with scripts/realrepos-select)", file, err)
	}
	if len(list.Commits) == 0 {
		t.Fatalf("%s lists no commits", file)
	}
	for i, c := range list.Commits {
		if !strings.Contains(c.Repo, "/") || len(c.Commit) != 40 || len(c.Parent) != 40 || (len(c.Hidden) == 0 && c.Reason == "") {
			t.Fatalf("%s: commit %d (%s %s) needs repo owner/name, 40-digit commit and parent, and hidden files", file, i, c.Repo, c.Commit)
		}
	}
	return list
}

// realRepoGitDir returns the git directory of repo under root, or "".
func realRepoGitDir(root, repo string) string {
	base := filepath.Join(root, strings.ReplaceAll(repo, "/", "+"))
	for _, d := range []string{filepath.Join(base, "repo"), base} {
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil {
			return d
		}
	}
	return ""
}

// realCase holds the trees of one real commit.
type realCase struct {
	commit, parent, hidden *tree.Tree
}

// realTrees builds the commit's and the parent's trees without the hidden
// files, and the hidden tests as the commit has them.
func realTrees(gitDir string, c realCommit) (*realCase, error) {
	parent, err := gitOutput(gitDir, "rev-parse", c.Commit+"^")
	if err != nil {
		return nil, err
	}
	if got := strings.TrimSpace(string(parent)); got != c.Parent {
		return nil, fmt.Errorf("%s: the parent of %s is %s in %s, the list says %s: regenerate %s", c.Repo, c.Commit, got, gitDir, c.Parent, realReposFile)
	}
	var rc realCase
	// The trees leave out the test files the commit changed, which the
	// pull request would not carry; the support files (conftest, helpers,
	// data) stay, as the repository has them, and come with the hidden set
	// too.
	var changed []string
	for _, p := range c.Hidden {
		if name := path.Base(p); strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py")) {
			changed = append(changed, p)
		}
	}
	if rc.commit, err = gitTree(gitDir, c.Commit, changed); err != nil {
		return nil, err
	}
	if rc.parent, err = gitTree(gitDir, c.Parent, changed); err != nil {
		return nil, err
	}
	var hidden []tree.File
	for _, p := range c.Hidden {
		data, err := hiddenBlob(gitDir, c.Commit, p)
		if err != nil {
			return nil, err
		}
		hidden = append(hidden, tree.File{Path: p, Mode: 0o644, Data: data})
	}
	if rc.hidden, err = tree.New(hidden); err != nil {
		return nil, fmt.Errorf("hidden files of %s: %w", c.Commit, err)
	}
	return &rc, nil
}

// hiddenBlob reads path at rev as a test writer would hand it in: a
// symbolic link (python-semver's tests/coerce.py links to its docs) is
// the file it points to, within the repository.
func hiddenBlob(gitDir, rev, path string) ([]byte, error) {
	for range 8 {
		entry, err := gitOutput(gitDir, "ls-tree", rev, "--", path)
		if err != nil {
			return nil, err
		}
		mode, _, _ := strings.Cut(string(entry), " ")
		data, err := gitOutput(gitDir, "show", rev+":"+path)
		if err != nil || mode != "120000" {
			return data, err
		}
		target := filepath.ToSlash(filepath.Join(filepath.Dir(path), string(data)))
		if target == ".." || strings.HasPrefix(target, "../") || filepath.IsAbs(string(data)) {
			return nil, fmt.Errorf("%s at %s links outside the repository, to %s", path, rev, data)
		}
		path = target
	}
	return nil, fmt.Errorf("%s at %s: too many levels of symbolic links", path, rev)
}

// gitTree reads rev's tree through git archive, as a forge's tarball has
// it, leaving out the paths in drop.
func gitTree(gitDir, rev string, drop []string) (*tree.Tree, error) {
	data, err := gitOutput(gitDir, "archive", "--format=tar", rev)
	if err != nil {
		return nil, err
	}
	var files []tree.File
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the archive of %s: %w", rev, err)
		}
		if slices.Contains(drop, hdr.Name) {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			body, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files = append(files, tree.File{Path: hdr.Name, Mode: fs.FileMode(hdr.Mode).Perm(), Data: body})
		case tar.TypeSymlink:
			files = append(files, tree.File{Path: hdr.Name, Mode: fs.ModeSymlink | 0o777, Link: hdr.Linkname})
		}
	}
	tree, err := tree.New(files)
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", rev, err)
	}
	return tree, nil
}

func gitOutput(gitDir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), gitDir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// summarize takes the figures of one grade out of its report.
func summarize(t *testing.T, c realCommit, as string, want report.Verdict, rep *report.Report) realGrade {
	t.Helper()
	rg := realGrade{
		repo: c.Repo, commit: c.Commit[:10], subject: c.Subject, as: as, want: want, got: rep.Verdict,
		passed: rep.Counts.Passed, total: rep.Counts.Total,
		weak: report.WeakSignals(rep.Evidence), tamper: len(rep.TamperSignals),
		seconds: rep.DurationSeconds,
	}
	for _, e := range rep.Evidence {
		s := fmt.Sprintf("%s×%d", e.Reason, e.Count)
		if e.Strength == report.StrengthStrong {
			rg.strong = append(rg.strong, s)
		} else {
			rg.weakReasons = append(rg.weakReasons, s)
		}
	}
	reasons := map[string]int{}
	for _, s := range rep.TamperSignals {
		reasons[s.Reason]++
	}
	for r, n := range reasons {
		rg.tamperReasons = append(rg.tamperReasons, fmt.Sprintf("%s×%d", r, n))
	}
	slices.Sort(rg.tamperReasons)
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var withTwins struct {
		Twins *twinFigures `json:"twins"`
	}
	if err := json.Unmarshal(data, &withTwins); err != nil {
		t.Fatalf("read the report's twins: %v", err)
	}
	rg.twins = withTwins.Twins
	return rg
}

// right reports whether the grade came out as it must.
func (g realGrade) right() bool { return g.got == g.want && len(g.strong) == 0 }

// twinText says the twin coverage, or "-" when the report has none.
func (g realGrade) twinText() string {
	if g.twins == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d twinned, %d contradictions", g.twins.Twinned, g.twins.Of, len(g.twins.Contradictions))
}

// line is the log line of one grade.
func (g realGrade) line() string {
	mark := "right"
	if !g.right() {
		mark = "WRONG"
	}
	return fmt.Sprintf("%s %-28s %s as %-6s -> %-8s (want %s) %d/%d passed; weak %d %v; strong %v; tamper %d %v; twins %s; %.1fs",
		mark, g.repo, g.commit, g.as, g.got, g.want, g.passed, g.total, g.weak, g.weakReasons, g.strong, g.tamper, g.tamperReasons, g.twinText(), g.seconds)
}

// realReposTable is the summary, one row per project and a total, in
// Markdown for docs/benchmarks.md.
func realReposTable(grades []realGrade) string {
	type row struct {
		commits                      map[string]bool
		grades, right, weak, tamper  int
		commitPass, parentFail       int
		weakGrades, twinned, twinsOf int
		contradictions, withTwins    int
	}
	rows := map[string]*row{}
	var order []string
	add := func(key string, g realGrade) {
		r := rows[key]
		if r == nil {
			r = &row{commits: map[string]bool{}}
			rows[key] = r
			order = append(order, key)
		}
		r.commits[g.repo+g.commit] = true
		r.grades++
		if g.right() {
			r.right++
			if g.as == "commit" {
				r.commitPass++
			} else {
				r.parentFail++
			}
		}
		r.weak += g.weak
		if g.weak > 0 {
			r.weakGrades++
		}
		r.tamper += g.tamper
		if g.twins != nil {
			r.withTwins++
			r.twinned += g.twins.Twinned
			r.twinsOf += g.twins.Of
			r.contradictions += len(g.twins.Contradictions)
		}
	}
	slices.SortFunc(grades, func(a, b realGrade) int {
		return cmp.Or(strings.Compare(a.repo, b.repo), strings.Compare(a.commit, b.commit), strings.Compare(a.as, b.as))
	})
	for _, g := range grades {
		add(g.repo, g)
	}
	slices.Sort(order)
	for _, g := range grades {
		add("total", g) // appends "total" to order, last
	}
	var b strings.Builder
	b.WriteString("| project | commits | commit → pass | parent → fail | grades right | grades with weak signals | weak signals / grade | tamper signals / grade | twins twinned/of (contradictions) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, key := range order {
		r := rows[key]
		if r == nil {
			continue
		}
		twins := "-"
		if r.withTwins > 0 {
			twins = fmt.Sprintf("%d/%d (%d)", r.twinned, r.twinsOf, r.contradictions)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d/%d | %d | %.2f | %.2f | %s |\n", key, len(r.commits), r.commitPass, r.parentFail, r.right, r.grades, r.weakGrades,
			float64(r.weak)/float64(r.grades), float64(r.tamper)/float64(r.grades), twins)
	}
	return b.String()
}

// realCommitsTable is one row per commit: both grades, the hidden test
// cases, and what each grade raised besides its verdict.
func realCommitsTable(grades []realGrade) string {
	type pair struct{ commit, parent *realGrade }
	byCommit := map[string]*pair{}
	var keys []string
	for i := range grades {
		g := &grades[i]
		key := g.repo + " " + g.commit
		p := byCommit[key]
		if p == nil {
			p = &pair{}
			byCommit[key] = p
			keys = append(keys, key)
		}
		if g.as == "commit" {
			p.commit = g
		} else {
			p.parent = g
		}
	}
	slices.Sort(keys)
	cell := func(g *realGrade, f func(*realGrade) string) string {
		if g == nil {
			return "-"
		}
		return f(g)
	}
	verdict := func(g *realGrade) string {
		if g.right() {
			return fmt.Sprintf("%s (%d/%d)", g.got, g.passed, g.total)
		}
		return fmt.Sprintf("**%s** (%d/%d), want %s", g.got, g.passed, g.total, g.want)
	}
	var b strings.Builder
	b.WriteString("| project | commit | subject | commit graded | parent graded | weak signals | tamper signals | twins |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, key := range keys {
		p := byCommit[key]
		first := cmp.Or(p.commit, p.parent)
		subject := strings.ReplaceAll(first.subject, "|", "\\|")
		if r := []rune(subject); len(r) > 60 {
			subject = string(r[:57]) + "..."
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s / %s | %d | %s / %s |\n", first.repo, first.commit, subject,
			cell(p.commit, verdict), cell(p.parent, verdict),
			cell(p.commit, func(g *realGrade) string { return strconv.Itoa(g.weak) }),
			cell(p.parent, func(g *realGrade) string { return strconv.Itoa(g.weak) }),
			first.tamper,
			cell(p.commit, (*realGrade).twinText), cell(p.parent, (*realGrade).twinText))
	}
	return b.String()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

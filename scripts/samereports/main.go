// Command samereports shows that two revisions of testfirst grade every
// corpus case to the same report, apart from what varies from one run of a
// grade to the next (timings, the random test uid, the random sentinels).
// It is for restructurings: moving packages must not change a grade.
//
//	go run ./scripts/samereports -old 5bf284c -new HEAD [-cache DIR] [-j 2] [-run REGEXP] [-out DIR]
//	go run ./scripts/samereports -old 5bf284c -new HEAD -cached   # compare what the cache holds, grade nothing
//	go run ./scripts/samereports -normalise report.json           # one raw report, normalised
//
// It builds ./cmd/testfirst and ./cmd/testfirst-wrapper of each revision
// (CGO_ENABLED=0, in temporary git worktrees), makes sure each revision's
// grader image exists ("testfirst image build", idempotent), assembles the
// cases of the corpus the way the tests of test/ do (test/corpus_test.go,
// test/twins_test.go, test/runtimeevidence_test.go, test/styles_test.go),
// grades each with each revision's "testfirst grade --format json", and
// compares the normalised reports (and exit codes) case by case. It prints
// one line per case (with a short diff of the normalised reports when they
// differ), what differs between the two grader images, and a summary; it
// exits 1 if any case differs, 3 if some were not compared (-cached), 2 on
// an error of its own.
//
// The cases are assembled from the new revision's test/testdata, so both
// revisions grade the very same trees. The old revision's raw reports are
// kept in the cache under its commit hash and the input's digest, and are
// not graded again; the new revision's are written there too (so a later
// run with it as -old reuses them) but always graded afresh. Grading the
// same revision as -old and -new therefore compares two runs of one
// revision: whatever differs there is noise, which is how the
// normalisations below were found.
//
// It imports nothing of this module, so it runs against any revision.
//
// The strength fixtures (test/testdata/strength) are not graded: their
// grades run up to 40 mutants each under a time budget, which is neither
// cheap nor the same from run to run.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	var (
		oldRev = flag.String("old", "", "revision before the change (required)")
		newRev = flag.String("new", "HEAD", "revision after the change")
		repo   = flag.String("repo", ".", "the git repository the revisions are in")
		cache  = flag.String("cache", defaultCache(), "directory of raw reports, by commit hash and case")
		jobs   = flag.Int("j", 2, "graders at a time (1 or 2)")
		run    = flag.String("run", "", "grade only the cases whose name matches this regular expression")
		out    = flag.String("out", "", "write each case's normalised reports here (old/ and new/), to diff at leisure")
		keep   = flag.Bool("keep", false, "keep the temporary worktrees and trees")
		cached = flag.Bool("cached", false, "grade nothing: compare the reports of both revisions in the cache, skip the cases missing there (to compare again after changing a normalisation, or what an interrupted run graded)")
		normal = flag.String("normalise", "", "print the normalised form of a raw report (a file of \"testfirst grade --format json\") and exit")
	)
	flag.Parse()
	if *normal != "" {
		data, err := os.ReadFile(*normal)
		if err == nil {
			data, err = normalise(&graded{Report: data}, "")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "samereports:", err)
			os.Exit(2)
		}
		os.Stdout.Write(data)
		return
	}
	if *oldRev == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: samereports -old REV [-new REV] [-cache DIR] [-j 1|2] [-run REGEXP] [-out DIR] [-cached] [-keep]\n       samereports -normalise REPORT.json")
		os.Exit(2)
	}
	if *jobs < 1 || *jobs > 2 {
		fmt.Fprintln(os.Stderr, "-j: 1 or 2 (the grader's sandboxes already use the machine's cores)")
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *run != "" {
		var err error
		if filter, err = regexp.Compile(*run); err != nil {
			fmt.Fprintln(os.Stderr, "-run:", err)
			os.Exit(2)
		}
	}
	code, err := compare(config{oldRev: *oldRev, newRev: *newRev, repo: *repo, cache: *cache, jobs: *jobs, filter: filter, out: *out, keep: *keep, cached: *cached})
	if err != nil {
		fmt.Fprintln(os.Stderr, "samereports:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func defaultCache() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "testfirst-samereports")
	}
	return filepath.Join(os.TempDir(), "testfirst-samereports")
}

type config struct {
	oldRev, newRev, repo, cache, out string
	jobs                             int
	filter                           *regexp.Regexp
	keep, cached                     bool
}

// revision is one revision's build.
type revision struct {
	name, commit string
	dir          string // its worktree
	bin          string // its testfirst
	wrapper      string // its testfirst-wrapper
	cache        string
	mu           sync.Mutex
	image        string // the id of its grader image
	once         sync.Once
	err          error
}

// prepare builds r's commands and makes sure its grader image exists, once
// and only when a case is to be graded with r.
func (r *revision) prepare() error {
	r.once.Do(func() {
		fmt.Printf("building %s (%s)\n", r.name, r.commit[:12])
		build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(r.dir, "bin")+"/", "./cmd/testfirst", "./cmd/testfirst-wrapper")
		build.Dir = r.dir
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := runQuiet(build); err != nil {
			r.err = fmt.Errorf("build %s: %w", r.name, err)
			return
		}
		r.bin, r.wrapper = filepath.Join(r.dir, "bin", "testfirst"), filepath.Join(r.dir, "bin", "testfirst-wrapper")
		image := exec.Command(r.bin, "image", "build")
		image.Env = append(os.Environ(), "TESTFIRST_WRAPPER="+r.wrapper)
		out, err := output(image)
		if err != nil {
			r.err = fmt.Errorf("grader image of %s: %w", r.name, err)
			return
		}
		// "testfirst image build" prints "testfirst-grader:TAG sha256:ID".
		f := strings.Fields(out)
		if len(f) < 2 || !strings.HasPrefix(f[len(f)-1], "sha256:") {
			r.err = fmt.Errorf("grader image of %s: cannot read %q", r.name, out)
			return
		}
		r.mu.Lock()
		r.image = f[len(f)-1]
		r.mu.Unlock()
		_ = os.MkdirAll(filepath.Join(r.cache, r.commit), 0o755)
		_ = os.WriteFile(filepath.Join(r.cache, r.commit, "grader-image"), []byte(r.image+"\n"), 0o644)
	})
	return r.err
}

// graderImage is the id of r's grader image: the one its grades ran in,
// from this run or (for reports from the cache) the run that made them.
func (r *revision) graderImage() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.image == "" {
		if data, err := os.ReadFile(filepath.Join(r.cache, r.commit, "grader-image")); err == nil {
			r.image = strings.TrimSpace(string(data))
		}
	}
	return r.image
}

func compare(cfg config) (int, error) {
	began := time.Now()
	tmp, err := os.MkdirTemp("", "samereports-")
	if err != nil {
		return 0, err
	}
	var worktrees []string
	defer func() {
		if cfg.keep {
			fmt.Printf("kept %s\n", tmp)
			return
		}
		for _, wt := range worktrees {
			_ = exec.Command("git", "-C", cfg.repo, "worktree", "remove", "--force", wt).Run()
		}
		os.RemoveAll(tmp)
	}()
	revs := make([]*revision, 2)
	for i, name := range []string{cfg.oldRev, cfg.newRev} {
		commit, err := output(exec.Command("git", "-C", cfg.repo, "rev-parse", "--verify", name+"^{commit}"))
		if err != nil {
			return 0, fmt.Errorf("revision %s: %w", name, err)
		}
		if i == 1 && commit == revs[0].commit {
			// The same revision twice: one build, graded twice (the
			// noise check).
			revs[1] = revs[0]
			break
		}
		r := &revision{name: name, commit: commit, dir: filepath.Join(tmp, fmt.Sprintf("rev%d-%s", i, commit[:12])), cache: cfg.cache}
		if err := runQuiet(exec.Command("git", "-C", cfg.repo, "worktree", "add", "--detach", r.dir, commit)); err != nil {
			return 0, err
		}
		worktrees = append(worktrees, r.dir)
		revs[i] = r
	}
	old, nw := revs[0], revs[1]
	cases, err := assembleCases(filepath.Join(nw.dir, "test", "testdata"), filepath.Join(tmp, "cases"))
	if err != nil {
		return 0, err
	}
	if cfg.filter != nil {
		cases = slices.DeleteFunc(cases, func(c *gradeCase) bool { return !cfg.filter.MatchString(c.name) })
	}
	if len(cases) == 0 {
		return 0, errors.New("no case to grade")
	}
	fmt.Printf("%d cases, old %s (%s), new %s (%s), %d at a time\n", len(cases), old.name, old.commit[:12], nw.name, nw.commit[:12], cfg.jobs)

	var (
		mu        sync.Mutex
		nSame     int
		nSkipped  int
		differing []string
		varying   []string
		next      = 0
		wg        sync.WaitGroup
	)
	for range cfg.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(cases) {
					mu.Unlock()
					return
				}
				c := cases[next]
				next++
				mu.Unlock()
				line, o := compareCase(cfg, c, old, nw)
				mu.Lock()
				fmt.Println(line)
				switch o {
				case same:
					nSame++
				case differs:
					differing = append(differing, c.name)
				case varies:
					varying = append(varying, c.name)
				case skipped:
					nSkipped++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if oi, ni := old.graderImage(), nw.graderImage(); oi != ni {
		fmt.Printf("grader images: old %s, new %s\n", oi, ni)
		if d, err := imageDiff(oi, ni); err != nil {
			fmt.Printf("  cannot compare them: %v\n", err)
		} else {
			fmt.Print(indent(d) + "\n")
		}
	}
	sort.Strings(differing)
	sort.Strings(varying)
	fmt.Printf("%d of %d cases: the same report (old %s, new %s; %s)\n", nSame, len(cases)-nSkipped, old.commit[:12], nw.commit[:12], time.Since(began).Round(time.Second))
	if len(varying) > 0 {
		fmt.Printf("%d cases vary on one revision (two grades of the old revision differ as well), with the same verdict old and new: %s\n", len(varying), strings.Join(varying, ", "))
	}
	if nSkipped > 0 {
		fmt.Printf("%d more cases of the corpus not compared (not in the cache)\n", nSkipped)
	}
	if len(differing) > 0 {
		fmt.Printf("differ: %s\n", strings.Join(differing, ", "))
		return 1, nil
	}
	if nSkipped > 0 {
		return 3, nil
	}
	return 0, nil
}

// compareCase grades c with both revisions (old from the cache when it is
// there) and says whether the normalised reports are the same.
type outcome int

const (
	same outcome = iota
	differs
	skipped
	// varies: old and new differ, but so do two grades of the old
	// revision, and the verdicts of all three agree: what differs is the
	// case's own noise (a deadline under load, a pid, a random name
	// quoted in evidence), not the change.
	varies
)

func compareCase(cfg config, c *gradeCase, old, nw *revision) (string, outcome) {
	if cfg.cached && (!inCache(cfg.cache, old, c) || !inCache(cfg.cache, nw, c)) {
		return fmt.Sprintf("%-60s not compared: not in the cache for both revisions", c.name), skipped
	}
	o, err := gradeCached(cfg.cache, old, c, true)
	if err != nil {
		return fmt.Sprintf("%-60s ERROR old: %v", c.name, err), differs
	}
	n, err := gradeCached(cfg.cache, nw, c, cfg.cached)
	if err != nil {
		return fmt.Sprintf("%-60s ERROR new: %v", c.name, err), differs
	}
	on, err := normalise(o, old.graderImage())
	if err != nil {
		return fmt.Sprintf("%-60s ERROR old report: %v", c.name, err), differs
	}
	nn, err := normalise(n, nw.graderImage())
	if err != nil {
		return fmt.Sprintf("%-60s ERROR new report: %v", c.name, err), differs
	}
	if cfg.out != "" {
		for side, data := range map[string][]byte{"old": on, "new": nn} {
			p := filepath.Join(cfg.out, side, strings.ReplaceAll(c.name, "/", "__")+".json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				_ = os.WriteFile(p, data, 0o644)
			}
		}
	}
	verdict := verdictOf(n.Report)
	if bytes.Equal(on, nn) {
		return fmt.Sprintf("%-60s same     (%s, exit %d)", c.name, verdict, n.ExitCode), same
	}
	diff := indent(shortDiff(string(on), string(nn), 30))
	if cfg.cached || verdictOf(o.Report) != verdict {
		return fmt.Sprintf("%-60s DIFFERS  (old %s, new %s)\n%s", c.name, verdictOf(o.Report), verdict, diff), differs
	}
	// The noise check: grade the old revision once more. Where its two
	// reports differ as well, the case is not deterministic on one
	// revision, and the change is judged by its verdict alone.
	again, err := grade(old, c)
	if err != nil {
		return fmt.Sprintf("%-60s DIFFERS  (old %s, new %s; the old revision's second grade: %v)\n%s", c.name, verdictOf(o.Report), verdict, err, diff), differs
	}
	an, err := normalise(again, old.graderImage())
	if err != nil || bytes.Equal(on, an) || verdictOf(again.Report) != verdict {
		return fmt.Sprintf("%-60s DIFFERS  (old %s, new %s; two grades of the old revision agree)\n%s", c.name, verdictOf(o.Report), verdict, diff), differs
	}
	return fmt.Sprintf("%-60s varies   (%s; two grades of the old revision differ too)\n%s", c.name, verdict, indent(shortDiff(string(on), string(an), 10))), varies
}

func verdictOf(rep json.RawMessage) string {
	var v struct {
		Verdict string `json:"verdict"`
	}
	_ = json.Unmarshal(rep, &v)
	return v.Verdict
}

// graded is one raw grade as it is cached.
type graded struct {
	Commit      string          `json:"commit"`
	Case        string          `json:"case"`
	InputDigest string          `json:"input_digest"`
	Args        []string        `json:"args"`
	ExitCode    int             `json:"exit_code"`
	Seconds     float64         `json:"seconds"`
	Report      json.RawMessage `json:"report"`
}

func inCache(cache string, r *revision, c *gradeCase) bool {
	var g graded
	data, err := os.ReadFile(cacheFile(cache, r, c))
	return err == nil && json.Unmarshal(data, &g) == nil && g.InputDigest == c.digest && len(g.Report) > 0
}

func cacheFile(cache string, r *revision, c *gradeCase) string {
	return filepath.Join(cache, r.commit, strings.ReplaceAll(c.name, "/", "__")+".json")
}

func gradeCached(cache string, r *revision, c *gradeCase, reuse bool) (*graded, error) {
	file := cacheFile(cache, r, c)
	if reuse {
		if data, err := os.ReadFile(file); err == nil {
			var g graded
			if json.Unmarshal(data, &g) == nil && g.InputDigest == c.digest && len(g.Report) > 0 {
				return &g, nil
			}
		}
	}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	g, err := grade(r, c)
	if err != nil {
		return nil, err
	}
	if data, err := json.MarshalIndent(g, "", " "); err == nil && os.MkdirAll(filepath.Dir(file), 0o755) == nil {
		_ = os.WriteFile(file+".tmp", data, 0o644)
		_ = os.Rename(file+".tmp", file)
	}
	return g, nil
}

// grade runs "testfirst grade" of revision r on c. Exit 0 is a pass, 1
// any other verdict; 2 is bad input or an engine failure.
func grade(r *revision, c *gradeCase) (*graded, error) {
	args := append([]string{"grade"}, c.args...)
	args = append(args, "--format", "json")
	cmd := exec.Command(r.bin, args...)
	cmd.Env = append(os.Environ(), "TESTFIRST_WRAPPER="+r.wrapper)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		return nil, err
	}
	if code > 1 || !json.Valid(stdout.Bytes()) {
		return nil, fmt.Errorf("exit %d: %s", code, lastLines(stderr.String(), 3))
	}
	return &graded{Commit: r.commit, Case: c.name, InputDigest: c.digest, Args: c.args, ExitCode: code,
		Seconds: time.Since(began).Seconds(), Report: bytes.TrimSpace(stdout.Bytes())}, nil
}

// ---------------------------------------------------------------------------
// The corpus.

// gradeCase is one grade's input: the flags of "testfirst grade" (absolute
// paths) and a digest of everything they name.
type gradeCase struct {
	name   string
	args   []string
	digest string
}

// caseSpec is the part of a case.json (test/corpus_test.go) that builds
// the trees and the request; the expectations are the tests' business.
type caseSpec struct {
	Patch       string            `json:"patch"`
	Remove      []string          `json:"remove"`
	Symlinks    map[string]string `json:"symlinks"`
	BaseOverlay bool              `json:"base_overlay"`
	Reference   string            `json:"reference"`
	Timeout     string            `json:"timeout"`
	Decoys      *struct {
		Count   int    `json:"count"`
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"decoys"`
}

// assembleCases builds every case's trees under work from testdata:
//   - sample/cases/* and sample/attacks/* (TestSampleCases, TestAttacks) and
//     twins/attacks/* (TestTwinAttacks): case.json over sample's base,
//     against sample's hidden tests, timeout 3m unless the case says;
//   - evidence/* (TestRuntimeEvidenceAttacks): files/ over sample's base,
//     or its own repo/ and hidden/; no base, the default timeout;
//   - styles/* (TestTestStyles): pr/ against hidden/ with base/, 3m.
func assembleCases(testdata, work string) ([]*gradeCase, error) {
	sample := filepath.Join(testdata, "sample")
	var cases []*gradeCase
	for _, group := range []string{"sample/cases", "sample/attacks", "twins/attacks"} {
		dirs, err := subdirs(filepath.Join(testdata, group))
		if err != nil {
			return nil, err
		}
		for _, dir := range dirs {
			name := group + "/" + filepath.Base(dir)
			c, err := sampleCase(sample, dir, filepath.Join(work, name))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			c.name = name
			cases = append(cases, c)
		}
	}
	dirs, err := subdirs(filepath.Join(testdata, "evidence"))
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		name := "evidence/" + filepath.Base(dir)
		var c *gradeCase
		if _, err := os.Stat(filepath.Join(dir, "repo")); err == nil {
			c = &gradeCase{args: []string{"--repo", filepath.Join(dir, "repo"), "--tests", filepath.Join(dir, "hidden")}}
		} else {
			repo := filepath.Join(work, name, "repo")
			if err := copyTree(filepath.Join(sample, "base"), repo); err != nil {
				return nil, err
			}
			if err := copyTree(filepath.Join(dir, "files"), repo); err != nil {
				return nil, err
			}
			c = &gradeCase{args: []string{"--repo", repo, "--tests", filepath.Join(sample, "hidden")}}
		}
		c.name = name
		cases = append(cases, c)
	}
	dirs, err = subdirs(filepath.Join(testdata, "styles"))
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "case.json")); err != nil {
			continue
		}
		cases = append(cases, &gradeCase{name: "styles/" + filepath.Base(dir), args: []string{
			"--repo", filepath.Join(dir, "pr"), "--tests", filepath.Join(dir, "hidden"), "--base", filepath.Join(dir, "base"), "--timeout", "3m"}})
	}
	for _, c := range cases {
		if c.digest, err = argsDigest(c.args); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return cases, nil
}

// sampleCase builds a case.json's trees as loadCase of test/corpus_test.go
// does: the base, patched when the case says, files removed, files/ laid
// over it, decoys and symlinks added; with base_overlay the PR tree is the
// base as well.
func sampleCase(sample, dir, work string) (*gradeCase, error) {
	var c caseSpec
	data, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	repo := filepath.Join(work, "repo")
	if err := copyTree(filepath.Join(sample, "base"), repo); err != nil {
		return nil, err
	}
	if c.Patch != "" {
		apply := exec.Command("git", "apply", "--whitespace=nowarn", filepath.Join(sample, c.Patch))
		apply.Dir = repo
		if err := runQuiet(apply); err != nil {
			return nil, fmt.Errorf("patch %s: %w", c.Patch, err)
		}
	}
	for _, p := range c.Remove {
		if err := os.Remove(filepath.Join(repo, filepath.FromSlash(p))); err != nil {
			return nil, fmt.Errorf("remove %s: %w", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "files")); err == nil {
		if err := copyTree(filepath.Join(dir, "files"), repo); err != nil {
			return nil, err
		}
	}
	if d := c.Decoys; d != nil {
		for i := 1; i <= d.Count; i++ {
			p := filepath.Join(repo, filepath.FromSlash(fmt.Sprintf(d.Path, i)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, []byte(d.Content), 0o644); err != nil {
				return nil, err
			}
		}
	}
	for p, target := range c.Symlinks {
		full := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		_ = os.Remove(full)
		if err := os.Symlink(target, full); err != nil {
			return nil, err
		}
	}
	base := filepath.Join(sample, "base")
	if c.BaseOverlay {
		base = repo
	}
	timeout := "3m"
	if c.Timeout != "" {
		timeout = c.Timeout
	}
	args := []string{"--repo", repo, "--tests", filepath.Join(sample, "hidden"), "--base", base, "--timeout", timeout}
	if c.Reference != "" {
		args = append(args, "--reference", filepath.Join(sample, c.Reference))
	}
	return &gradeCase{args: args}, nil
}

func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// copyTree copies src's files, directories and symlinks (not followed)
// into dst, keeping modes; files already in dst are replaced.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			_ = os.Remove(to)
			return os.Symlink(target, to)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_ = os.Remove(to)
			return os.WriteFile(to, data, info.Mode().Perm())
		}
	})
}

// argsDigest hashes the flags and every file, symlink and mode under the
// paths they name, so that a cached report is only reused for the same
// input.
func argsDigest(args []string) (string, error) {
	h := sha256.New()
	for _, a := range args {
		if !filepath.IsAbs(a) {
			fmt.Fprintf(h, "arg %q\n", a)
			continue
		}
		// A path is hashed by what it holds, not where it is: the trees
		// are assembled in a new temporary directory each run.
		fmt.Fprintf(h, "path\n")
		err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(a, p)
			fmt.Fprintf(h, "%q %v ", rel, info.Mode())
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				t, _ := os.Readlink(p)
				fmt.Fprintf(h, "-> %q\n", t)
			case info.Mode().IsRegular():
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				if _, err := io.Copy(h, f); err != nil {
					return err
				}
				fmt.Fprintln(h)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ---------------------------------------------------------------------------
// Normalisation. Each rule below was found by grading one revision twice
// and diffing the reports; nothing else is touched, so a change of a
// field's value, name or order between revisions still shows.
//
//  1. duration_seconds (the report), build_seconds (environment) and
//     seconds (mutation): wall times, "0" here.
//  2. uid and gid in [100000, 100000+2^24): the grader picks the test
//     uid of each run at random in that range (grader.testUIDBase); such
//     values become "{test-uid}", also inside strings ("want": "owner N, …",
//     the runner output).
//  3. In the runner output (any "output" string):
//     a. pytest's timings, " in 0.47s" of the summary line: " in {t}s".
//     b. the sentinels: each run appends a random must-pass and must-fail
//     test (random host module, random call of a neighbour, random name
//     that the grader masks as sentinel_must_pass/_fail). So the failure
//     block of a sentinel (its header's width follows the real name's
//     length; its body the random call and line) becomes one line
//     "{sentinel sentinel_must_fail}", the text after " - " of a
//     short-summary line naming a sentinel is dropped, and the progress
//     characters of a module ("..F." vs "...F") are sorted, since where
//     the sentinel sits among them is random.
//     c. object addresses in reprs ("<... object at 0x7f9b38c31a10>"):
//     where Python puts an object changes with every process (ASLR),
//     " at 0x{addr}" here.
//  4. twins.changes[]: what a twin changed in a hidden test (line, kind,
//     "literal: \"cat\" -> \"czt\""); the grader draws the twins from a
//     fresh random seed each grade (grader.newTwinSeed), so the statement
//     chosen, its line, the kind of change and the new value differ between
//     two grades of one tree: "{random twin change}" here, line 0 and kind
//     "{random}"; the test and file stay.
//  5. The report's "image", when it is the id of the grading revision's
//     own grader image, becomes "{the revision's grader image}". That
//     image is the Debian image plus a layer of the revision's wrapper
//     binary and the pytest plugins; the wrapper's bytes change with any
//     change to its code or its packages' import paths, and the id also
//     covers the build's time and deadline label, so two builds of the
//     very same files have different ids. What the two grader images hold
//     is compared once, file by file (imageDiff), and printed: a
//     difference there is shown, not normalised.
//
// The exit code of "testfirst grade" is compared too.

var (
	pytestTime     = regexp.MustCompile(` in \d+(\.\d+)?s\b( \(\d+:\d+:\d+\))?`)
	sentinelHeader = regexp.MustCompile(`^_+ .*(sentinel_must_(?:pass|fail)).* _+$`)
	sectionHeader  = regexp.MustCompile(`^(_{3,}|={3,}|-{3,})`)
	summarySent    = regexp.MustCompile(`^((?:FAILED|ERROR|PASSED|XPASS|XFAIL|SKIPPED) \S*sentinel_must_(?:pass|fail)\S*) - .*$`)
	progress       = regexp.MustCompile(`^(\S+\.py) ([.FEsxX]+)(\s*\[\s*\d+%\])?$`)
	bigNumber      = regexp.MustCompile(`\b\d{6,9}\b`)
	address        = regexp.MustCompile(` at 0x[0-9a-f]{6,16}\b`)
)

const (
	testUIDBase = 100_000
	testUIDSpan = 1 << 24
)

func normalise(g *graded, graderImage string) ([]byte, error) {
	v, err := decodeOrdered(g.Report)
	if err != nil {
		return nil, err
	}
	uids := map[string]bool{}
	collectUIDs(v, uids)
	v = walk(v, "", uids)
	if o, ok := v.(object); ok {
		for i, kv := range o {
			if kv.k == "image" && graderImage != "" && kv.v == graderImage {
				o[i].v = "{the revision's grader image}"
			}
			if kv.k != "twins" {
				continue
			}
			twins, _ := kv.v.(object)
			for _, tkv := range twins {
				changes, _ := tkv.v.([]any)
				for _, c := range changes {
					if co, ok := c.(object); ok && tkv.k == "changes" {
						for j := range co {
							switch co[j].k {
							case "change":
								co[j].v = "{random twin change}"
							case "kind":
								co[j].v = "{random}"
							case "line":
								co[j].v = json.Number("0")
							}
						}
					}
				}
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "exit code %d\n", g.ExitCode)
	encodeOrdered(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func isTestUID(n json.Number) bool {
	i, err := n.Int64()
	return err == nil && i >= testUIDBase && i < testUIDBase+testUIDSpan
}

func collectUIDs(v any, uids map[string]bool) {
	switch x := v.(type) {
	case object:
		for _, kv := range x {
			if n, ok := kv.v.(json.Number); ok && (kv.k == "uid" || kv.k == "gid") && isTestUID(n) {
				uids[n.String()] = true
			}
			collectUIDs(kv.v, uids)
		}
	case []any:
		for _, e := range x {
			collectUIDs(e, uids)
		}
	}
}

func walk(v any, key string, uids map[string]bool) any {
	switch x := v.(type) {
	case object:
		out := make(object, len(x))
		for i, kv := range x {
			out[i] = pair{kv.k, walk(kv.v, kv.k, uids)}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walk(e, key, uids)
		}
		return out
	case json.Number:
		switch {
		case key == "duration_seconds" || key == "build_seconds" || key == "seconds":
			return json.Number("0")
		case (key == "uid" || key == "gid") && isTestUID(x):
			return "{test-uid}"
		}
		return x
	case string:
		s := bigNumber.ReplaceAllStringFunc(x, func(m string) string {
			if uids[m] {
				return "{test-uid}"
			}
			return m
		})
		if key == "output" {
			s = normaliseOutput(s)
		}
		return s
	}
	return v
}

func normaliseOutput(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := sentinelHeader.FindStringSubmatch(l); m != nil {
			out = append(out, "{sentinel "+m[1]+"}")
			for i+1 < len(lines) && !sectionHeader.MatchString(lines[i+1]) {
				i++
			}
			continue
		}
		if m := summarySent.FindStringSubmatch(l); m != nil {
			l = m[1]
		}
		if m := progress.FindStringSubmatch(l); m != nil {
			chars := []byte(m[2])
			slices.Sort(chars)
			l = m[1] + " " + string(chars) + m[3]
		}
		l = address.ReplaceAllString(l, " at 0x{addr}")
		out = append(out, pytestTime.ReplaceAllString(l, " in {t}s"))
	}
	return strings.Join(out, "\n")
}

// imageDiff says how two images differ: the layers they share, then each
// file (path, mode, owner, link, content digest) of their other layers
// that is in one and not the same in the other.
func imageDiff(a, b string) (string, error) {
	la, err := imageLayers(a)
	if err != nil {
		return "", err
	}
	lb, err := imageLayers(b)
	if err != nil {
		return "", err
	}
	shared := 0
	for shared < len(la) && shared < len(lb) && la[shared] == lb[shared] {
		shared++
	}
	fa, err := layerFiles(a, la[shared:])
	if err != nil {
		return "", err
	}
	fb, err := layerFiles(b, lb[shared:])
	if err != nil {
		return "", err
	}
	var lines []string
	for p, x := range fa {
		if y, ok := fb[p]; !ok {
			lines = append(lines, "only in old: "+p+" "+x)
		} else if x != y {
			lines = append(lines, "differs: "+p+" (old "+x+", new "+y+")")
		}
	}
	for p, y := range fb {
		if _, ok := fa[p]; !ok {
			lines = append(lines, "only in new: "+p+" "+y)
		}
	}
	sort.Strings(lines)
	same := len(fa) - strings.Count(strings.Join(lines, "\n"), "differs: ") - strings.Count(strings.Join(lines, "\n"), "only in old: ")
	head := fmt.Sprintf("%d of %d/%d layers shared; in the others, %d entries the same and these not:", shared, len(la), len(lb), same)
	return head + "\n" + strings.Join(lines, "\n"), nil
}

func imageLayers(id string) ([]string, error) {
	out, err := output(exec.Command("docker", "image", "inspect", "--format", "{{json .RootFS.Layers}}", id))
	if err != nil {
		return nil, err
	}
	var layers []string
	err = json.Unmarshal([]byte(out), &layers)
	return layers, err
}

// layerFiles reads "docker save ID" and describes each entry of the layers
// whose uncompressed digest (diff id) is in want.
func layerFiles(id string, want []string) (map[string]string, error) {
	cmd := exec.Command("docker", "save", id)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Wait()
	files := map[string]string{}
	found := 0
	outer := tar.NewReader(stdout)
	for {
		h, err := outer.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// Every regular entry may be a layer: read it as a tar while
		// hashing it, and keep its files if its digest is wanted.
		digest := sha256.New()
		layer := map[string]string{}
		inner := tar.NewReader(io.TeeReader(outer, digest))
		for {
			ih, err := inner.Next()
			if err != nil {
				break
			}
			sum := sha256.New()
			_, _ = io.Copy(sum, inner)
			desc := fmt.Sprintf("mode %o uid %d gid %d", ih.Mode, ih.Uid, ih.Gid)
			switch ih.Typeflag {
			case tar.TypeReg:
				desc += " sha256:" + hex.EncodeToString(sum.Sum(nil))[:16]
			case tar.TypeSymlink, tar.TypeLink:
				desc += " -> " + ih.Linkname
			}
			if name := strings.TrimSuffix(ih.Name, "/"); name != "." && name != "" {
				layer["/"+strings.TrimPrefix(name, "./")] = desc
			}
		}
		_, _ = io.Copy(digest, outer)
		if slices.Contains(want, "sha256:"+hex.EncodeToString(digest.Sum(nil))) {
			found++
			for p, d := range layer {
				files[p] = d
			}
		}
	}
	if found != len(want) {
		return nil, fmt.Errorf("docker save %s: found %d of the %d layers", id, found, len(want))
	}
	return files, nil
}

// ---------------------------------------------------------------------------
// JSON that keeps the order of an object's keys, so that a report whose
// fields moved is not the same report.

type pair struct {
	k string
	v any
}

type object []pair

func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the report")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, pair{kt.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return t, nil
}

func encodeOrdered(b *bytes.Buffer, v any, ind string) {
	switch x := v.(type) {
	case object:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, kv := range x {
			k, _ := json.Marshal(kv.k)
			b.WriteString(ind + "  " + string(k) + ": ")
			encodeOrdered(b, kv.v, ind+"  ")
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(ind + "}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(ind + "  ")
			encodeOrdered(b, e, ind+"  ")
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(ind + "]")
	case json.Number:
		b.WriteString(x.String())
	case string:
		if strings.Contains(x, "\n") && len(x) > 0 {
			// Multi-line strings (the runner output) are written one line
			// of the string a line, so a diff shows the line that changed.
			b.WriteString("<<<\n")
			for _, l := range strings.Split(x, "\n") {
				q, _ := json.Marshal(l)
				b.WriteString(ind + "  | " + string(q[1:len(q)-1]) + "\n")
			}
			b.WriteString(ind + ">>>")
			return
		}
		q, _ := json.Marshal(x)
		b.Write(q)
	default:
		q, _ := json.Marshal(x)
		b.Write(q)
	}
}

// ---------------------------------------------------------------------------
// Helpers.

// shortDiff is a line diff of a and b (longest common subsequence), at
// most max lines of it.
func shortDiff(a, b string, max int) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// The common head and tail are no part of the diff; what is left of a
	// report with thousands of lines (decoy-signal-flood's signals) is
	// compared line by line when the table would be too big.
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	x, y = x[head:len(x)-tail], y[head:len(y)-tail]
	n, m := len(x), len(y)
	if n*m > 4_000_000 {
		var out []string
		for i := 0; i < n || i < m; i++ {
			if i < n && i < m && x[i] == y[i] {
				continue
			}
			if i < n {
				out = append(out, fmt.Sprintf("- %d: %s", head+i+1, x[i]))
			}
			if i < m {
				out = append(out, fmt.Sprintf("+ %d: %s", head+i+1, y[i]))
			}
			if len(out) > max {
				break
			}
		}
		if len(out) > max {
			out = append(out[:max], "… more diff lines")
		}
		return strings.Join(out, "\n")
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max32(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, fmt.Sprintf("+ %d: %s", head+j+1, y[j]))
			j++
		default:
			out = append(out, fmt.Sprintf("- %d: %s", head+i+1, x[i]))
			i++
		}
	}
	if len(out) > max {
		out = append(out[:max], fmt.Sprintf("… %d more diff lines", len(out)-max))
	}
	return strings.Join(out, "\n")
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func output(cmd *exec.Cmd) (string, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func runQuiet(cmd *exec.Cmd) error {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, lastLines(buf.String(), 5))
	}
	return nil
}

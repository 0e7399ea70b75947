package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

const sampleDir = "testdata/sample"

// minAttacks is the least the adversarial corpus may hold.
var minAttacks = 64

// caseSpec is a case.json: a PR tree as an overlay on the sample's base and
// what the grade must say about it. See testdata/sample/README.md.
type caseSpec struct {
	Description string `json:"description"`
	// Patch, when set, is applied to the base before the overlay.
	Patch       string            `json:"patch"`
	Remove      []string          `json:"remove"`
	Symlinks    map[string]string `json:"symlinks"`
	BaseOverlay bool              `json:"base_overlay"`
	Reference   string            `json:"reference"`
	Timeout     string            `json:"timeout"`
	// Decoys, when set, adds generated files to the PR tree: too many to
	// keep under files/.
	Decoys *decoySpec `json:"decoys"`
	// NaiveCommand and NaiveResult record how the attack fooled a naive
	// runner when it was written: proof that it is a real attack.
	NaiveCommand string `json:"naive_command"`
	NaiveResult  string `json:"naive_result"`
	Note         string `json:"note"`
	// PythonLevel marks an attack that works on the runner's process alone
	// (its plugins, hooks, imports, objects) and touches nothing the
	// kernel or the runtime answers differently: no other process, file
	// outside the tree, descriptor, signal, network or memory limit. It is
	// never in runscSmoke; make test-runsc grades every attack.
	PythonLevel bool `json:"python_level"`
	Expect      struct {
		Verdict       string    `json:"verdict"`
		VerdictIn     []string  `json:"verdict_in"`
		NeverPass     bool      `json:"never_pass"`
		Failed        *[]string `json:"failed"`
		TamperSignals []string  `json:"tamper_signals"`
		TouchedTests  *[]string `json:"touched_tests"`
		Contaminated  *bool     `json:"contaminated"`
		Trust         string    `json:"trust"`
		// OutputMustNotContain lists strings that must not appear in the
		// runner output (e.g. credential prefixes).
		OutputMustNotContain []string `json:"output_must_not_contain"`
	} `json:"expect"`
}

// decoySpec generates Count files named by the fmt pattern Path (one
// integer verb, given 1..Count), each holding Content.
type decoySpec struct {
	Count   int    `json:"count"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

// files returns the decoy files, or an error that says what to fix in the
// case.json.
func (d *decoySpec) files() ([]tree.File, error) {
	if d.Count <= 0 || d.Count > tree.MaxTreeFiles {
		return nil, fmt.Errorf("decoys: count %d, want 1 to %d", d.Count, tree.MaxTreeFiles)
	}
	if strings.Count(d.Path, "%") != 1 || fmt.Sprintf(d.Path, 1) == fmt.Sprintf(d.Path, 2) {
		return nil, fmt.Errorf("decoys: path %q must hold exactly one integer verb such as %%05d", d.Path)
	}
	out := make([]tree.File, 0, d.Count)
	for i := 1; i <= d.Count; i++ {
		out = append(out, tree.File{Path: fmt.Sprintf(d.Path, i), Mode: 0o644, Data: []byte(d.Content)})
	}
	return out, nil
}

// readCaseSpec reads dir/case.json.
func readCaseSpec(t *testing.T, dir string) caseSpec {
	t.Helper()
	var c caseSpec
	data, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	return c
}

// loadCase reads dir/case.json and builds the PR tree and the base tree.
func loadCase(t *testing.T, dir string) (caseSpec, *tree.Tree, *tree.Tree) {
	t.Helper()
	c := readCaseSpec(t, dir)
	base, err := tree.Load(filepath.Join(sampleDir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	start := base
	if c.Patch != "" {
		patch, err := os.ReadFile(filepath.Join(sampleDir, c.Patch))
		if err != nil {
			t.Fatal(err)
		}
		if start, err = tree.ApplyPatch(base, patch); err != nil {
			t.Fatalf("%s: patch %s: %v", dir, c.Patch, err)
		}
	}
	files := map[string]tree.File{}
	for _, f := range start.Files {
		files[f.Path] = f
	}
	for _, p := range c.Remove {
		if _, ok := files[p]; !ok {
			t.Fatalf("%s: remove %s: not in base", dir, p)
		}
		delete(files, p)
	}
	if _, err := os.Stat(filepath.Join(dir, "files")); err == nil {
		overlay, err := tree.Load(filepath.Join(dir, "files"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range overlay.Files {
			files[f.Path] = f
		}
	}
	if c.Decoys != nil {
		decoys, err := c.Decoys.files()
		if err != nil {
			t.Fatalf("%s/case.json: %v", dir, err)
		}
		for _, f := range decoys {
			if _, ok := files[f.Path]; ok {
				t.Fatalf("%s/case.json: decoy %s would replace a file of the tree", dir, f.Path)
			}
			files[f.Path] = f
		}
	}
	for p, target := range c.Symlinks {
		files[p] = tree.File{Path: p, Mode: fs.ModeSymlink | 0o777, Link: target}
	}
	list := make([]tree.File, 0, len(files))
	for _, f := range files {
		list = append(list, f)
	}
	pr, err := tree.New(list)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseOverlay {
		base = pr
	}
	return c, pr, base
}

func caseDirs(t *testing.T, parent string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(sampleDir, parent))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(sampleDir, parent, e.Name()))
		}
	}
	return dirs
}

// gradeCase grades one case against the real engine and checks what every
// report must hold whatever the case.
func gradeCase(t *testing.T, dir string, opts ...func(*grader.Request)) (caseSpec, *report.Report) {
	t.Helper()
	return gradeCaseOn(t, testenv.Grading(t).Grader, dir, opts...)
}

// gradeCaseOn grades one case with g, as gradeCase does on Docker.
func gradeCaseOn(t *testing.T, g *grader.Grader, dir string, opts ...func(*grader.Request)) (caseSpec, *report.Report) {
	t.Helper()
	c, pr, base := loadCase(t, dir)
	hidden, err := tree.Load(filepath.Join(sampleDir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	req := grader.Request{Repo: pr, Hidden: hidden, Base: base, Timeout: 3 * time.Minute}
	if c.Timeout != "" {
		if req.Timeout, err = time.ParseDuration(c.Timeout); err != nil {
			t.Fatalf("timeout: %v", err)
		}
	}
	if c.Reference != "" {
		if req.Reference, err = os.ReadFile(filepath.Join(sampleDir, c.Reference)); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range opts {
		o(&req)
	}
	rep, err := g.Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("grade: %v", err)
	}
	checkReportInvariants(t, rep, hidden)
	if want := testenv.SandboxRuntime(); want != "" && rep.Runtime != want {
		t.Errorf("report says runtime %q; the grade ran under %q", rep.Runtime, want)
	}
	if rep.Runtime == "" {
		t.Error("the report names no runtime")
	}
	return c, rep
}

// checkReportInvariants holds for every report: counts add up, only hidden
// tests are reported (never a sentinel; a non-pytest command names its own), failed lists exactly the tests
// that did not pass (but those skipped on the base as well), a pass means
// every other hidden test passed.
func checkReportInvariants(t *testing.T, rep *report.Report, hidden *tree.Tree) {
	t.Helper()
	c := rep.Counts
	if c.Passed+c.Failed+c.Errors+c.Skipped+c.Flaky != c.Total || c.Total != len(rep.Tests) {
		t.Errorf("counts %+v do not add up over %d tests", c, len(rep.Tests))
	}
	var notPassed []string
	for _, tr := range rep.Tests {
		file, _, _ := strings.Cut(tr.ID, "::")
		if _, ok := hidden.Lookup(file); !ok && rep.Trust != report.TrustLow {
			t.Errorf("reported test %s is not in a hidden file", tr.ID)
		}
		excused := slices.Contains(rep.SkippedOnBase, tr.ID)
		if excused && (tr.Outcome != report.OutcomeSkipped || rep.BaseCheck == nil || !slices.Contains(rep.BaseCheck.Skipped, tr.ID)) {
			t.Errorf("%s is excused as skipped on the base, but came out %s here (base check %+v)", tr.ID, tr.Outcome, rep.BaseCheck)
		}
		if tr.Outcome != report.OutcomePassed && !excused {
			notPassed = append(notPassed, tr.ID)
		}
	}
	if diff := cmp.Diff(notPassed, rep.Failed, cmpEmpty); diff != "" {
		t.Errorf("failed ids (-from tests +failed):\n%s", diff)
	}
	if rep.Verdict == report.VerdictPass && (len(notPassed) > 0 || c.Total == 0) {
		t.Errorf("verdict pass with %d of %d tests not passed", len(notPassed), c.Total)
	}
	if rep.TestsDigest == "" || rep.RepoDigest == "" || !strings.HasPrefix(rep.Image, "sha256:") {
		t.Errorf("report does not say what was graded with what: tests %q repo %q image %q", rep.TestsDigest, rep.RepoDigest, rep.Image)
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

// checkExpect compares a report with a case's expectations.
func checkExpect(t *testing.T, c caseSpec, rep *report.Report) {
	t.Helper()
	e := c.Expect
	explain := func() string {
		return fmt.Sprintf("verdict %s, reasons %q, tests %v, signals %v", rep.Verdict, rep.Reasons, rep.Tests, rep.TamperSignals)
	}
	if e.Verdict != "" && string(rep.Verdict) != e.Verdict {
		t.Errorf("verdict %s, want %s (%s)", rep.Verdict, e.Verdict, explain())
	}
	if len(e.VerdictIn) > 0 && !slices.Contains(e.VerdictIn, string(rep.Verdict)) {
		t.Errorf("verdict %s, want one of %v (%s)", rep.Verdict, e.VerdictIn, explain())
	}
	if e.NeverPass && rep.Verdict == report.VerdictPass {
		t.Errorf("an attack passed: %s", explain())
	}
	if e.Failed != nil {
		want := slices.Clone(*e.Failed)
		slices.Sort(want)
		got := slices.Clone(rep.Failed)
		slices.Sort(got)
		if diff := cmp.Diff(want, got, cmpEmpty); diff != "" {
			t.Errorf("failed ids (-want +got):\n%s", diff)
		}
	}
	flagged := map[string]bool{}
	for _, s := range rep.TamperSignals {
		flagged[s.Path] = true
	}
	for _, p := range e.TamperSignals {
		if !flagged[p] {
			t.Errorf("%s not among the tamper signals %v", p, rep.TamperSignals)
		}
	}
	if e.TouchedTests != nil {
		if diff := cmp.Diff(*e.TouchedTests, rep.TouchedTests, cmpEmpty); diff != "" {
			t.Errorf("touched tests (-want +got):\n%s", diff)
		}
	}
	if e.Contaminated != nil && rep.Contaminated != *e.Contaminated {
		t.Errorf("contaminated %v, want %v (%v)", rep.Contaminated, *e.Contaminated, rep.Contamination)
	}
	for _, bad := range e.OutputMustNotContain {
		if strings.Contains(rep.Output, bad) {
			t.Errorf("runner output contains %q", bad)
		}
	}
	if e.Trust != "" && string(rep.Trust) != e.Trust {
		t.Errorf("trust %s, want %s (isolation %+v)", rep.Trust, e.Trust, rep.Isolation)
	}
}

// TestSampleCases grades the honest PR trees of the sample project.
func TestSampleCases(t *testing.T) {
	for _, dir := range caseDirs(t, "cases") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			c, rep := gradeCase(t, dir)
			checkExpect(t, c, rep)
			checkHonestTwins(t, rep)
			var weak []string
			for _, e := range rep.Evidence {
				weak = append(weak, fmt.Sprintf("%s×%d", e.Reason, e.Count))
			}
			t.Logf("%s -> %s; runtime signals %d %v", filepath.Base(dir), rep.Verdict, report.WeakSignals(rep.Evidence), weak)
		})
	}
	t.Cleanup(func() { testenv.CheckSandboxes(t) })
}

// split grades a case split (grader.Request.Split).
func split(r *grader.Request) { r.Split = true }

// TestSampleCasesSplit grades the honest PR trees split: each gets the
// verdict and failed tests it gets in-process, with trust sealed (every
// passing test decided outside the code under test) where in-process
// grading says isolated.
func TestSampleCasesSplit(t *testing.T) {
	for _, dir := range caseDirs(t, "cases") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			c, rep := gradeCase(t, dir, split)
			if c.Expect.Trust == string(report.TrustIsolated) {
				c.Expect.Trust = string(report.TrustSealed)
			}
			checkExpect(t, c, rep)
			if rep.Sealing == nil {
				t.Fatalf("a split grade has no sealing")
			}
			if rep.Sealing.Sealed != rep.Sealing.Passing {
				t.Errorf("sealing %+v: the sample's tests compare values of builtin types only", rep.Sealing)
			}
			t.Logf("%s -> %s (%s); trust %s; %d/%d passing sealed", filepath.Base(dir), rep.Verdict, strings.Join(rep.Reasons, "; "), rep.Trust, rep.Sealing.Sealed, rep.Sealing.Passing)
		})
	}
	t.Cleanup(func() { testenv.CheckSandboxes(t) })
}

// TestAttacksSplit grades the adversarial corpus split, and the attacks on
// split grading itself (attacks-split: the in-process attack classes of
// issue 22 and hostile tree processes against the protocol): no attack may
// pass. The flags each expects in-process are not asked for: under the
// split an attack that reads nothing of the tests simply fails.
//
// make test grades attacks-split alone; the 65 of the in-process corpus
// graded split as well (TESTFIRST_SPLIT_CORPUS=all) are make test-split's:
// together they were the longest leg of make test, and split grading is
// off unless a repository or the service turns it on.
func TestAttacksSplit(t *testing.T) {
	dirs := caseDirs(t, "attacks-split")
	if os.Getenv("TESTFIRST_SPLIT_CORPUS") == "all" {
		dirs = slices.Concat(caseDirs(t, "attacks"), dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			// No base run: whether an attack passes is the tree's run
			// alone, and the base doubles the suite's sandboxes.
			_, rep := gradeCase(t, dir, split, func(r *grader.Request) { r.Base = nil })
			if rep.Verdict == report.VerdictPass {
				t.Errorf("an attack passed split: trust %s, %d/%d passed, reasons %q", rep.Trust, rep.Counts.Passed, rep.Counts.Total, rep.Reasons)
			}
			t.Logf("%s -> %s (%s); trust %s, %d/%d passed", filepath.Base(dir), rep.Verdict, strings.Join(rep.Reasons, "; "), rep.Trust, rep.Counts.Passed, rep.Counts.Total)
		})
	}
	t.Cleanup(func() { testenv.CheckSandboxes(t) })
}

// TestAttacks grades the adversarial corpus: no attack may pass, and each
// must raise the flag it expects.
func TestAttacks(t *testing.T) {
	// make test's gVisor leg grades again only one attack of each way
	// out of the runner's process (runscSmoke); make test-runsc grades
	// them all.
	smoke := os.Getenv("TESTFIRST_RUNSC_ATTACKS") == "smoke" && testenv.SandboxRuntime() == "runsc"
	dirs := caseDirs(t, "attacks")
	if len(dirs) < minAttacks {
		t.Fatalf("the adversarial corpus has %d attacks, want at least %d", len(dirs), minAttacks)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			if smoke && !slices.Contains(runscSmoke, filepath.Base(dir)) {
				t.Skip("graded under runc in make test, and under runsc by make test-runsc")
			}
			c, rep := gradeCase(t, dir)
			if !c.Expect.NeverPass {
				t.Errorf("case.json: an attack must expect never_pass")
			}
			checkExpect(t, c, rep)
			t.Logf("%s -> %s (%s); trust %s, sentinels %s, %d/%d passed, %d tamper signal(s); naive runner: %s",
				filepath.Base(dir), rep.Verdict, strings.Join(rep.Reasons, "; "), rep.Trust, rep.Sentinels,
				rep.Counts.Passed, rep.Counts.Total, len(rep.TamperSignals), c.NaiveResult)
			if os.Getenv("TESTFIRST_CORPUS_OUTPUT") != "" {
				t.Logf("signals %v\nrunner output:\n%s", rep.TamperSignals, rep.Output)
			}
		})
	}
	t.Cleanup(func() {
		if n := testenv.CheckSandboxes(t); n == 0 {
			t.Error("no sandbox container was checked")
		}
	})
}

// runscSmoke are the attacks make test grades under gVisor as well as
// runc: one of each way out of the runner's process the runtime answers
// (more processes, another process, a descriptor, a file outside the tree,
// the network, memory, the environment). Grading every attack on the
// sandbox under gVisor took 420 s of make test's 2 cores (its floods of
// output and signals, 112 s and 82 s, are ten times slower under
// Debian's runsc than runc): make test-runsc grades them all.
var runscSmoke = []string{"fork-bomb", "daemon-child", "kill-wrapper", "junit-fd3-devnull", "symlink-proc1-root", "network-dns", "memory-bomb", "env-credential-dump"}

// TestRunscSmokeIsOnTheSandbox keeps runscSmoke to attacks that exist and
// reach the sandbox.
func TestRunscSmokeIsOnTheSandbox(t *testing.T) {
	for _, name := range runscSmoke {
		dir := filepath.Join(sampleDir, "attacks", name)
		if _, err := os.Stat(filepath.Join(dir, "case.json")); err != nil {
			t.Errorf("runscSmoke names %s: %v", name, err)
			continue
		}
		if readCaseSpec(t, dir).PythonLevel {
			t.Errorf("runscSmoke names %s, an attack on the runner's process alone: the runtime cannot change its verdict", name)
		}
	}
}

// sandboxReach names what an attack that touches the sandbox uses: another
// process, a descriptor, a signal, the network, memory or a file outside
// the tree.
var sandboxReach = regexp.MustCompile(`os\.fork|os\.kill|os\.dup|os\._exit|os\.system|subprocess|signal|socket|Thread\(|/proc|/hidden|/tmp|mmap|ctypes|resource\.`)

// TestPythonLevelAttacksReachNoSandbox keeps case.json's python_level
// honest: make test grades such an attack under runc only, so its files
// must not reach for what gVisor answers differently.
func TestPythonLevelAttacksReachNoSandbox(t *testing.T) {
	n := 0
	for _, dir := range caseDirs(t, "attacks") {
		if !readCaseSpec(t, dir).PythonLevel {
			continue
		}
		n++
		err := filepath.WalkDir(filepath.Join(dir, "files"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := sandboxReach.Find(data); m != nil {
				rel, _ := filepath.Rel(dir, path)
				t.Errorf("%s is python_level, but %s uses %q: it reaches the sandbox: unmark it (runscSmoke may then name it)", filepath.Base(dir), rel, m)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("no attack is python_level: the check checked nothing")
	}
}

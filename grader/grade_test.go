package grader

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/grader/evaluate/evaluatetest"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Canary tokens of the hidden test files of the grade fixtures.
const (
	gradeCanaryX = "canaryXtoken0001"
	gradeCanaryY = "canaryYtoken0002"
	gradeImage   = "testfirst-grader:test"
	gradeImageID = "sha256:0123456789abcdef"
)

// gradeHidden is the hidden tests of the grade fixtures.
func gradeHidden(t *testing.T) *tree.Tree {
	t.Helper()
	return mustTree(t,
		tree.File{Path: "tests/test_x.py", Mode: 0o644, Data: []byte("# testfirst-canary: " + gradeCanaryX + "\nfrom calc import VERSION\n\n\ndef test_a():\n    assert VERSION\n\n\ndef test_b():\n    assert VERSION == 'pr'\n")},
		tree.File{Path: "tests/test_y.py", Mode: 0o644, Data: []byte("# testfirst-canary: " + gradeCanaryY + "\n\n\ndef test_c():\n    pass\n")},
	)
}

// gradeExpected is what the wrapper lists for gradeHidden.
var gradeExpected = []wrapper.ExpectedTest{
	{File: "tests/test_x.py", Name: "test_a"},
	{File: "tests/test_x.py", Name: "test_b"},
	{File: "tests/test_y.py", Name: "test_c"},
}

// gradeRepo is a tree under test whose calc.py names its version; the fake
// sandbox tells the runs apart by it.
func gradeRepo(t *testing.T, version string, extra ...tree.File) *tree.Tree {
	t.Helper()
	files := []tree.File{
		{Path: "calc.py", Mode: 0o644, Data: []byte("VERSION = '" + version + "'\n")},
		{Path: "tests/test_old.py", Mode: 0o644, Data: []byte("def test_old():\n    pass\n")},
	}
	return mustTree(t, append(files, extra...)...)
}

// gradeReference turns the base's calc.py into the reference's.
const gradeReference = `diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1 +1 @@
-VERSION = 'base'
+VERSION = 'ref'
`

func mustTree(t *testing.T, files ...tree.File) *tree.Tree {
	t.Helper()
	tr, err := tree.New(files)
	if err != nil {
		t.Fatalf("tree.New: %v", err)
	}
	return tr
}

// gradeRun is the wrapper's result of an honest pytest run of gradeHidden in
// which the named tests fail and the others pass.
func gradeRun(failing ...string) *wrapper.Result {
	var cases []string
	for _, e := range gradeExpected {
		class := evaluate.JUnitClass(e.File, "")
		if slices.Contains(failing, e.Name) {
			cases = append(cases, evaluatetest.FailedCase(class, e.Name))
		} else {
			cases = append(cases, evaluatetest.PassedCase(class, e.Name))
		}
	}
	cases = append(cases, evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelPass), evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail))
	return evaluatetest.WithEvidence(&wrapper.Result{
		Expected:  gradeExpected,
		Sentinels: evaluatetest.Sentinels,
		Runner:    wrapper.PytestCommand(),
		ExitCode:  1,
		JUnit:     evaluatetest.JUnitReport(cases...),
		Output:    []byte("===== 3 passed, 1 failed in 0.1s =====\n"),
		Isolation: wrapper.Isolation{UID: testUIDBase, GID: testUIDBase, CapEff: "0000000000000000", CapPrm: "0000000000000000", CapAmb: "0000000000000000", NoNewPrivs: true, Proven: true,
			Dirs: sealedDirStates(), DirsSealed: true},
		Seconds: 0.1,
	})
}

// sealedDirStates are the wrapper's directories as it sees them in a
// sealed sandbox under the uid split.
func sealedDirStates() []wrapper.DirState {
	return []wrapper.DirState{
		{Path: wrapper.HiddenDir, Mode: "0755", Want: "owner 0, mode 0755", Sealed: true},
		{Path: wrapper.TmpDir, Mode: "1777", Want: "owner 0, mode 1777", Sealed: true},
		{Path: wrapper.RepoDir, UID: testUIDBase, GID: testUIDBase, Mode: "0755", Want: "owner 100000, mode 0755, or owner 0, mode 1777", Sealed: true},
	}
}

// unsealedHidden is r with the hidden tests' directory as a Kubernetes
// emptyDir leaves it: root-owned 0777, no sticky bit.
func unsealedHidden(r *wrapper.Result) *wrapper.Result {
	r.Isolation.Dirs = sealedDirStates()
	r.Isolation.Dirs[0].Mode, r.Isolation.Dirs[0].Sealed = "0777", false
	r.Isolation.Dirs[0].Problems = []string{"owner 0, mode 0777"}
	r.Isolation.DirsSealed = false
	return r
}

// tamperedRun is a run whose must-fail sentinel passed.
func tamperedRun() *wrapper.Result {
	r := gradeRun()
	r.JUnit = bytes.Replace(r.JUnit, []byte(evaluatetest.FailedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail)), []byte(evaluatetest.PassedCase(evaluatetest.SentinelModule, evaluatetest.SentinelFail)), 1)
	r.ExitCode = 0
	return evaluatetest.WithEvidence(r)
}

// stdout is the sandbox result of a wrapper that reported res.
func stdout(res *wrapper.Result) sandbox.Result {
	data, err := json.Marshal(res)
	if err != nil {
		panic(err)
	}
	return sandbox.Result{Stdout: append(data, '\n')}
}

// tarEntry is one entry of an input archive, as the fake sandbox read it.
type tarEntry struct {
	Name     string
	Typeflag byte
	Mode     int64
	Link     string
	Data     string
}

// sandboxCall is one Run the fake sandbox got.
type sandboxCall struct {
	// Spec is the spec without its Input.
	Spec sandbox.Spec
	// Kind is the version named by the repo's calc.py: "base", "pr", "ref".
	Kind    string
	Job     wrapper.Job
	Entries []tarEntry
	// ReadErr is set when the input was not a well-formed archive.
	ReadErr error
}

// fakeSandbox records every run and answers with the result set for the
// run's kind.
type fakeSandbox struct {
	results map[string]sandbox.Result
	// answer, when set, answers a run first; ok false leaves it to results.
	answer func(sandboxCall) (res sandbox.Result, ok bool)
	err    error
	// kindErr fails the runs of one kind ("pr+twin") with the engine
	// error given.
	kindErr map[string]error

	mu    sync.Mutex
	calls []sandboxCall
}

var _ Sandbox = (*fakeSandbox)(nil)

func (f *fakeSandbox) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	call := sandboxCall{Spec: spec}
	call.Spec.Input = nil
	call.Entries, call.ReadErr = readEntries(spec.Input)
	if len(call.Entries) > 0 && call.Entries[0].Name == wrapper.JobEntry {
		if err := json.Unmarshal([]byte(call.Entries[0].Data), &call.Job); err != nil && call.ReadErr == nil {
			call.ReadErr = err
		}
	}
	for _, e := range call.Entries {
		if e.Name == wrapper.RepoPrefix+"calc.py" {
			_, v, _ := strings.Cut(e.Data, "'")
			call.Kind, _, _ = strings.Cut(v, "'")
		}
	}
	kind := call.Kind
	if call.Job.Twins {
		call.Kind += twinKind
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	if f.err != nil {
		return sandbox.Result{}, f.err
	}
	if err := f.kindErr[call.Kind]; err != nil {
		return sandbox.Result{}, err
	}
	if f.answer != nil {
		if res, ok := f.answer(call); ok {
			return res, nil
		}
	}
	res, ok := f.results[call.Kind]
	if !ok && call.Job.Twins {
		res, ok = f.results[kind]
		res = honestTwinResult(res)
	}
	if !ok {
		return sandbox.Result{}, fmt.Errorf("fake sandbox: no result for a %q run", call.Kind)
	}
	return res, nil
}

// Calls returns the recorded runs sorted by kind.
func (f *fakeSandbox) Calls() []sandboxCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := slices.Clone(f.calls)
	slices.SortFunc(calls, func(a, b sandboxCall) int { return strings.Compare(a.Kind, b.Kind) })
	return calls
}

func readEntries(r io.Reader) ([]tarEntry, error) {
	if r == nil {
		return nil, errors.New("no input")
	}
	tr := tar.NewReader(r)
	var out []tarEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return out, err
		}
		out = append(out, tarEntry{Name: hdr.Name, Typeflag: hdr.Typeflag, Mode: hdr.Mode, Link: hdr.Linkname, Data: string(data)})
	}
}

// results maps each run kind to the sandbox result of a wrapper that
// reported it.
func results(runs map[string]*wrapper.Result) map[string]sandbox.Result {
	out := map[string]sandbox.Result{}
	for k, r := range runs {
		out[k] = stdout(r)
	}
	return out
}

func TestGradeVerdict(t *testing.T) {
	leak := tree.File{Path: "notes/leak.txt", Mode: 0o644, Data: []byte("copied: " + gradeCanaryX + "\n")}
	truncated := func(r *wrapper.Result) *wrapper.Result { r.JUnitTruncated = true; return r }
	seen := func(r *wrapper.Result, tokens ...string) *wrapper.Result { r.CanariesSeen = tokens; return r }
	tests := []struct {
		name      string
		prExtra   []tree.File
		base      bool
		reference bool
		runs      map[string]*wrapper.Result
		// rerun: the failing tests of the pr run run again alone.
		rerun   bool
		want    report.Verdict
		reasons []string
	}{
		{
			name:    "pass",
			runs:    map[string]*wrapper.Result{"pr": gradeRun()},
			want:    report.VerdictPass,
			reasons: []string{"all 3 hidden tests passed"},
		},
		{
			name:    "fail",
			runs:    map[string]*wrapper.Result{"pr": gradeRun("test_b")},
			rerun:   true,
			want:    report.VerdictFail,
			reasons: []string{"1 of 3 hidden tests did not pass"},
		},
		{
			name:    "error beats fail",
			runs:    map[string]*wrapper.Result{"pr": truncated(gradeRun("test_b"))},
			want:    report.VerdictError,
			reasons: []string{"the JUnit report was larger than the limit"},
		},
		{
			name:    "contaminated by a repo file beats error",
			prExtra: []tree.File{leak},
			runs:    map[string]*wrapper.Result{"pr": truncated(gradeRun("test_b"))},
			want:    report.VerdictContaminated,
			reasons: []string{"the canary of tests/test_x.py appears in repo:notes/leak.txt"},
		},
		{
			name:    "contaminated by the output beats error",
			runs:    map[string]*wrapper.Result{"pr": seen(truncated(gradeRun("test_b")), gradeCanaryY)},
			want:    report.VerdictContaminated,
			reasons: []string{"the canary of tests/test_y.py appears in output"},
		},
		{
			name: "contaminated by the JUnit report",
			runs: map[string]*wrapper.Result{"pr": func() *wrapper.Result {
				r := gradeRun("test_b")
				r.JUnit = bytes.Replace(r.JUnit, []byte(">tb<"), []byte(">"+gradeCanaryX+"<"), 1)
				return r
			}()},
			rerun:   true,
			want:    report.VerdictContaminated,
			reasons: []string{"the canary of tests/test_x.py appears in junit"},
		},
		{
			name:    "tampered beats contaminated",
			prExtra: []tree.File{leak},
			runs:    map[string]*wrapper.Result{"pr": seen(tamperedRun(), gradeCanaryX)},
			want:    report.VerdictTampered,
			reasons: []string{"a sentinel test that must fail came out passed", "strong evidence: twin_run_tampered"},
		},
		{
			name:    "invalid_task when every test passes on the base beats tampered",
			base:    true,
			prExtra: []tree.File{leak},
			runs:    map[string]*wrapper.Result{"pr": tamperedRun(), "base": gradeRun()},
			want:    report.VerdictInvalidTask,
			reasons: []string{"every hidden test already passes on the base tree"},
		},
		{
			name:      "invalid_task when the reference fails one",
			base:      true,
			reference: true,
			runs:      map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b", "test_c"), "ref": gradeRun("test_b")},
			want:      report.VerdictInvalidTask,
			reasons:   []string{"the reference patch does not pass every hidden test (1 of 3 failed)"},
		},
		{
			name:    "the base run's problems are an error",
			base:    true,
			runs:    map[string]*wrapper.Result{"pr": gradeRun(), "base": func() *wrapper.Result { r := gradeRun("test_a"); r.JUnit = nil; return r }()},
			want:    report.VerdictError,
			reasons: []string{"base check: the runner wrote no JUnit report"},
		},
		{
			name:      "pass with base and reference checks",
			base:      true,
			reference: true,
			runs:      map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b"), "ref": gradeRun()},
			want:      report.VerdictPass,
			reasons:   []string{"all 3 hidden tests passed"},
		},
		{
			name:    "leftover processes are noted",
			runs:    map[string]*wrapper.Result{"pr": func() *wrapper.Result { r := gradeRun(); r.Leftovers = 2; return r }()},
			want:    report.VerdictPass,
			reasons: []string{"all 3 hidden tests passed", "2 process(es) of the code under test outlived the runner"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(tt.runs)}
			req := Request{Repo: gradeRepo(t, "pr", tt.prExtra...), Hidden: gradeHidden(t)}
			if tt.base {
				req.Base = gradeRepo(t, "base")
			}
			if tt.reference {
				req.Reference = []byte(gradeReference)
			}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			if rep.Verdict != tt.want {
				t.Errorf("Verdict = %q, want %q (reasons %q)", rep.Verdict, tt.want, rep.Reasons)
			}
			evaluatetest.CheckMessages(t, "reasons", rep.Reasons, tt.reasons)
			var kinds []string
			for _, c := range sb.Calls() {
				kinds = append(kinds, c.Kind)
			}
			var want []string
			for k := range tt.runs {
				want = append(want, k)
				if k != "base" {
					want = append(want, k+twinKind)
				}
			}
			if tt.rerun {
				want = append(want, "pr")
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("sandbox runs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGradeChecks(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{
		"pr":   gradeRun(),
		"base": gradeRun("test_a", "test_b"),
		"ref":  gradeRun("test_b"),
	})}
	req := Request{
		Repo:      gradeRepo(t, "pr"),
		Hidden:    gradeHidden(t),
		Base:      gradeRepo(t, "base"),
		Reference: []byte(gradeReference),
	}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	wantBase := &report.BaseCheck{
		GuardTests: []string{"tests/test_y.py::test_c"},
		Skipped:    []string{},
		Broken:     []string{},
		Counts:     report.Counts{Passed: 1, Failed: 2, Total: 3},
		Flaky:      []string{},
	}
	if diff := cmp.Diff(wantBase, rep.BaseCheck); diff != "" {
		t.Errorf("BaseCheck (-want +got):\n%s", diff)
	}
	wantRef := &report.ReferenceCheck{
		Failed:  []string{"tests/test_x.py::test_b"},
		Skipped: []string{},
		Counts:  report.Counts{Passed: 2, Failed: 1, Total: 3},
	}
	if diff := cmp.Diff(wantRef, rep.ReferenceCheck); diff != "" {
		t.Errorf("ReferenceCheck (-want +got):\n%s", diff)
	}
	wantTests := []report.TestResult{
		{ID: "tests/test_x.py::test_a", Outcome: report.OutcomePassed},
		{ID: "tests/test_x.py::test_b", Outcome: report.OutcomePassed},
		{ID: "tests/test_y.py::test_c", Outcome: report.OutcomePassed},
	}
	if diff := cmp.Diff(wantTests, rep.Tests); diff != "" {
		t.Errorf("Tests (-want +got):\n%s", diff)
	}
	if rep.Image != gradeImageID || rep.TestsDigest != req.Hidden.Digest() || rep.RepoDigest != req.Repo.Digest() {
		t.Errorf("Image, TestsDigest, RepoDigest = %q, %q, %q, want %q, %q, %q",
			rep.Image, rep.TestsDigest, rep.RepoDigest, gradeImageID, req.Hidden.Digest(), req.Repo.Digest())
	}
	if rep.Sentinels != report.SentinelsOK {
		t.Errorf("Sentinels = %q, want %q", rep.Sentinels, report.SentinelsOK)
	}
}

// TestGradeInput checks what each sandbox gets: its spec and the layout of
// its input archive.
func TestGradeInput(t *testing.T) {
	// The tree under test comes from disk, with compiled files, a .git
	// directory, a .git file and a symlink.
	dir := t.TempDir()
	for p, data := range map[string]string{
		"calc.py":                             "VERSION = 'pr'\n",
		"calc.pyc":                            "\x00compiled",
		"__pycache__/calc.cpython-312.pyc":    "\x00compiled",
		"pkg/mod.py":                          "X = 1\n",
		"pkg/__pycache__/mod.cpython-312.pyc": "\x00compiled",
		"pkg/.git":                            "gitdir: ../.git/modules/pkg\n",
		".git/HEAD":                           "ref: refs/heads/main\n",
		"tests/test_old.py":                   "def test_old():\n    pass\n",
	} {
		writeTestFile(t, filepath.Join(dir, p), data, 0o644)
	}
	if err := os.Chmod(filepath.Join(dir, "pkg/mod.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("calc.py", filepath.Join(dir, "alias.py")); err != nil {
		t.Fatal(err)
	}
	repo, err := tree.Load(dir)
	if err != nil {
		t.Fatalf("LoadTree: %v", err)
	}
	hidden := gradeHidden(t)
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{
		"pr":   gradeRun(),
		"base": gradeRun("test_a", "test_b"),
		"ref":  gradeRun(),
	})}
	req := Request{
		Repo:      repo,
		Hidden:    hidden,
		Base:      gradeRepo(t, "base"),
		Reference: []byte(gradeReference),
	}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if rep.Verdict != report.VerdictPass {
		t.Errorf("Verdict = %q (%q), want pass", rep.Verdict, rep.Reasons)
	}
	calls := sb.Calls()
	if len(calls) != 5 {
		t.Fatalf("got %d sandbox runs, want 5 (base, pr and ref, and the twins of pr and ref)", len(calls))
	}

	hiddenEntries := []tarEntry{
		{Name: "hidden/tests/test_x.py", Typeflag: tar.TypeReg, Mode: 0o644, Data: string(hidden.Files[0].Data)},
		{Name: "hidden/tests/test_y.py", Typeflag: tar.TypeReg, Mode: 0o644, Data: string(hidden.Files[1].Data)},
	}
	oldTest := tarEntry{Name: "repo/tests/test_old.py", Typeflag: tar.TypeReg, Mode: 0o644, Data: "def test_old():\n    pass\n"}
	wantRepo := map[string][]tarEntry{
		"base": {
			{Name: "repo/calc.py", Typeflag: tar.TypeReg, Mode: 0o644, Data: "VERSION = 'base'\n"},
			oldTest,
		},
		"pr": {
			{Name: "repo/alias.py", Typeflag: tar.TypeSymlink, Mode: 0o777, Link: "calc.py"},
			{Name: "repo/calc.py", Typeflag: tar.TypeReg, Mode: 0o644, Data: "VERSION = 'pr'\n"},
			{Name: "repo/pkg/mod.py", Typeflag: tar.TypeReg, Mode: 0o755, Data: "X = 1\n"},
			oldTest,
		},
		"ref": {
			{Name: "repo/calc.py", Typeflag: tar.TypeReg, Mode: 0o644, Data: "VERSION = 'ref'\n"},
			oldTest,
		},
	}
	for _, c := range calls {
		t.Run(c.Kind, func(t *testing.T) {
			if c.ReadErr != nil {
				t.Fatalf("input archive: %v", c.ReadErr)
			}
			if c.Entries[0].Name != wrapper.JobEntry {
				t.Errorf("first entry = %q, want %q", c.Entries[0].Name, wrapper.JobEntry)
			}
			want := append(slices.Clone(hiddenEntries), wantRepo[strings.TrimSuffix(c.Kind, twinKind)]...)
			if diff := cmp.Diff(want, c.Entries[1:]); diff != "" {
				t.Errorf("archive entries after job.json (-want +got):\n%s", diff)
			}

			job := c.Job
			if job.ProcLimit <= 0 || int64(job.ProcLimit) >= c.Spec.Limits.Pids {
				t.Errorf("job ProcLimit = %d, want in (0, %d)", job.ProcLimit, c.Spec.Limits.Pids)
			}
			if job.TimeoutMillis <= 0 || job.TimeoutMillis >= c.Spec.Timeout.Milliseconds() {
				t.Errorf("job TimeoutMillis = %d, want in (0, %d)", job.TimeoutMillis, c.Spec.Timeout.Milliseconds())
			}
			if job.TestUID < testUIDBase || job.TestUID >= testUIDBase+testUIDSpan {
				t.Errorf("job TestUID = %d, want a fresh uid in [%d, %d)", job.TestUID, testUIDBase, testUIDBase+testUIDSpan)
			}
			if c.Spec.TestUID != job.TestUID {
				t.Errorf("spec TestUID %d differs from the job's %d: the repo mount would belong to another uid", c.Spec.TestUID, job.TestUID)
			}
			wantJob := wrapper.Job{
				Mode:          wrapper.ModePytest,
				UIDSplit:      true,
				TestUID:       job.TestUID,
				TimeoutMillis: job.TimeoutMillis,
				Canaries:      []string{gradeCanaryX, gradeCanaryY},
				ProcLimit:     job.ProcLimit,
				OutputLimit:   outputLimit,
				JUnitLimit:    junitLimit,
				// Every pytest run gets the grade's seed; only the twin
				// runs are asked for twins.
				TwinJob: wrapper.TwinJob{Twins: strings.HasSuffix(c.Kind, twinKind), TwinSeed: calls[0].Job.TwinSeed},
			}
			if job.TwinSeed == "" {
				t.Errorf("job has no twin seed")
			}
			if diff := cmp.Diff(wantJob, job); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}

			if c.Spec.Timeout <= 0 || c.Spec.Timeout > DefaultTimeout {
				t.Errorf("spec Timeout = %v, want in (0, %v]", c.Spec.Timeout, DefaultTimeout)
			}
			wantSpec := sandbox.Spec{
				Image:       gradeImage,
				Entrypoint:  []string{wrapper.BinaryPath},
				Timeout:     c.Spec.Timeout,
				Limits:      sandbox.DefaultLimits,
				UIDSplit:    true,
				TestUID:     job.TestUID,
				StdoutLimit: stdoutLimit,
				StderrLimit: stderrLimit,
				// The run says what it does, for whoever lists the engine's
				// containers (a rescue, an operator).
				// The tree label says which tree the run judged, so the
				// tested run is told from its base and twins.
				Labels: map[string]string{sandbox.LabelMode: wrapper.ModePytest, sandbox.LabelTree: wantTreeLabel(c.Kind)},
			}
			if diff := cmp.Diff(wantSpec, c.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}

	// The report judges the tree as given, compiled files included.
	var flagged []string
	for _, s := range rep.TamperSignals {
		flagged = append(flagged, s.Path)
	}
	for _, p := range []string{"__pycache__/calc.cpython-312.pyc", "calc.pyc"} {
		if !slices.Contains(flagged, p) {
			t.Errorf("TamperSignals = %v, want one for %s", rep.TamperSignals, p)
		}
	}
	if rep.RepoDigest != repo.Digest() {
		t.Errorf("RepoDigest = %q, want the digest of the tree as given %q", rep.RepoDigest, repo.Digest())
	}
}

func writeTestFile(t *testing.T, p, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestGradeLimits(t *testing.T) {
	limits := sandbox.DefaultLimits
	limits.Pids = 100
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Limits: limits}
	if _, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req); err != nil {
		t.Fatalf("Grade: %v", err)
	}
	c := sb.Calls()[0]
	if c.Spec.Limits != limits {
		t.Errorf("spec Limits = %+v, want %+v", c.Spec.Limits, limits)
	}
	if c.Job.ProcLimit <= 0 || c.Job.ProcLimit >= 100 {
		t.Errorf("job ProcLimit = %d, want in (0, 100)", c.Job.ProcLimit)
	}
}

func TestGradeTrust(t *testing.T) {
	notProven := gradeRun()
	notProven.Isolation = wrapper.Isolation{UID: 0, CapEff: "000001ffffffffff", Error: ""}
	command := &wrapper.Result{Runner: []string{"/usr/bin/make", "test"}, Isolation: gradeRun().Isolation}
	tests := []struct {
		name       string
		noUIDSplit bool
		command    []string
		res        *wrapper.Result
		want       report.Trust
		wantSplit  bool
		wantMode   string
		wantTests  []report.TestResult
	}{
		{
			name:      "uid split proven",
			res:       gradeRun(),
			want:      report.TrustIsolated,
			wantSplit: true,
			wantMode:  wrapper.ModePytest,
		},
		{
			name:      "uid split proven, hidden directory writable",
			res:       unsealedHidden(gradeRun()),
			want:      report.TrustBestEffort,
			wantSplit: true,
			wantMode:  wrapper.ModePytest,
		},
		{
			name:      "uid split asked for but not proven",
			res:       notProven,
			want:      report.TrustBestEffort,
			wantSplit: true,
			wantMode:  wrapper.ModePytest,
		},
		{
			name:       "no uid split",
			noUIDSplit: true,
			res:        notProven,
			want:       report.TrustBestEffort,
			wantMode:   wrapper.ModePytest,
		},
		{
			name:      "a command",
			command:   []string{"make", "test"},
			res:       command,
			want:      report.TrustLow,
			wantSplit: true,
			wantMode:  wrapper.ModeCommand,
			wantTests: []report.TestResult{{ID: "make", Outcome: report.OutcomePassed}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": tt.res})}
			req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), NoUIDSplit: tt.noUIDSplit, Command: tt.command}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			if rep.Trust != tt.want {
				t.Errorf("Trust = %q, want %q", rep.Trust, tt.want)
			}
			c := sb.Calls()[0]
			if c.Spec.UIDSplit != tt.wantSplit || c.Job.UIDSplit != tt.wantSplit {
				t.Errorf("spec UIDSplit = %v, job UIDSplit = %v, want %v", c.Spec.UIDSplit, c.Job.UIDSplit, tt.wantSplit)
			}
			if c.Job.Mode != tt.wantMode || !slices.Equal(c.Job.Command, tt.command) {
				t.Errorf("job Mode, evaluate.Command = %q, %q, want %q, %q", c.Job.Mode, c.Job.Command, tt.wantMode, tt.command)
			}
			if tt.wantTests != nil {
				if diff := cmp.Diff(tt.wantTests, rep.Tests); diff != "" {
					t.Errorf("Tests (-want +got):\n%s", diff)
				}
				if rep.Sentinels != report.SentinelsNone {
					t.Errorf("Sentinels = %q, want %q", rep.Sentinels, report.SentinelsNone)
				}
			}
		})
	}
}

// TestGradeNoUIDSplitCapsTrust: without the uid split the code under test
// runs as the wrapper's uid and can write the wrapper's stdout, so the
// isolation evidence it carries cannot lift trust above best_effort.
func TestGradeNoUIDSplitCapsTrust(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), NoUIDSplit: true}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if rep.Trust != report.TrustBestEffort {
		t.Errorf("Trust = %q with NoUIDSplit, want %q", rep.Trust, report.TrustBestEffort)
	}
}

func TestGradeSandboxWithoutReport(t *testing.T) {
	valid := stdout(gradeRun())
	tests := []struct {
		name   string
		res    sandbox.Result
		reason string
	}{
		{
			name:   "out of memory",
			res:    sandbox.Result{Stdout: []byte(`{"expected": [`), ExitCode: 137, OOMKilled: true, Stderr: []byte("starting\nKilled\n")},
			reason: "the sandbox ended without a report (exit 137, out of memory): Killed",
		},
		{
			name:   "killed at the deadline",
			res:    sandbox.Result{ExitCode: 137, TimedOut: true},
			reason: "the sandbox ended without a report (exit 137, killed at the deadline)",
		},
		{
			name:   "stdout not JSON",
			res:    sandbox.Result{Stdout: []byte("PASSED\n"), ExitCode: 2},
			reason: "the sandbox ended without a report (exit 2)",
		},
		{
			name:   "stdout truncated",
			res:    sandbox.Result{Stdout: valid.Stdout, StdoutTruncated: true},
			reason: "the sandbox ended without a report (exit 0)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{results: map[string]sandbox.Result{"pr": tt.res}}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)})
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			if rep.Verdict != report.VerdictError {
				t.Errorf("Verdict = %q, want %q", rep.Verdict, report.VerdictError)
			}
			evaluatetest.CheckMessages(t, "reasons", rep.Reasons, []string{tt.reason})
			if len(rep.Tests) != 0 || rep.Trust != report.TrustBestEffort {
				t.Errorf("Tests = %v, Trust = %q, want no tests and best_effort", rep.Tests, rep.Trust)
			}
		})
	}
}

func TestGradeSandboxError(t *testing.T) {
	engineDown := errors.New("cannot connect to the Docker daemon")
	sb := &fakeSandbox{err: engineDown}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base")}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if !errors.Is(err, engineDown) || !strings.Contains(err.Error(), "run sandbox") {
		t.Fatalf("Grade = %v, %v, want an error wrapping %q", rep, err, engineDown)
	}
}

func TestGradeBadRequest(t *testing.T) {
	conflict := strings.Replace(gradeReference, "-VERSION = 'base'", "-VERSION = 'other'", 1)
	tests := []struct {
		name    string
		req     func(t *testing.T) Request
		wantErr []string
	}{
		{
			name:    "no repo",
			req:     func(t *testing.T) Request { return Request{Hidden: gradeHidden(t)} },
			wantErr: []string{"a repo tree and hidden tests are required"},
		},
		{
			name:    "no hidden tests",
			req:     func(t *testing.T) Request { return Request{Repo: gradeRepo(t, "pr")} },
			wantErr: []string{"a repo tree and hidden tests are required"},
		},
		{
			name:    "no hidden files",
			req:     func(t *testing.T) Request { return Request{Repo: gradeRepo(t, "pr"), Hidden: mustTree(t)} },
			wantErr: []string{"the hidden tests directory is empty"},
		},
		{
			name: "reference without base",
			req: func(t *testing.T) Request {
				return Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Reference: []byte(gradeReference)}
			},
			wantErr: []string{"a reference patch needs the base tree (--base)"},
		},
		{
			name: "reference that does not apply",
			req: func(t *testing.T) Request {
				return Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(conflict)}
			},
			wantErr: []string{"reference patch does not apply to the base tree", "calc.py"},
		},
		{
			name: "reference that is not a patch",
			req: func(t *testing.T) Request {
				return Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte("make it pass\n")}
			},
			wantErr: []string{"reference patch does not apply", "no file changes found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), tt.req(t))
			if err == nil {
				t.Fatalf("Grade = %+v, want an error", rep)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Grade error = %q, want it to contain %q", err, w)
				}
			}
			if n := len(sb.Calls()); n != 0 {
				t.Errorf("a bad request ran %d sandboxes, want none", n)
			}
		})
	}
}

// TestGradeReportJSON checks the shape of a report's JSON: every key is
// there and no list is null.
func TestGradeReportJSON(t *testing.T) {
	keys := []string{"verdict", "trust", "counts", "tests", "failed", "tamper_signals", "touched_tests",
		"contaminated", "image", "tests_digest", "repo_digest", "output"}
	tests := []struct {
		name      string
		base      bool
		results   map[string]sandbox.Result
		wantKeys  []string
		emptyList []string
	}{
		{
			name: "with base and reference checks",
			base: true,
			results: results(map[string]*wrapper.Result{
				"pr":   gradeRun(),
				"base": gradeRun("test_a", "test_b", "test_c"),
				"ref":  gradeRun(),
			}),
			wantKeys:  append(slices.Clone(keys), "base_check", "reference_check"),
			emptyList: []string{"failed", "tamper_signals", "touched_tests", "contamination", "base_check.guard_tests", "reference_check.failed"},
		},
		{
			name:      "without a report from the sandbox",
			results:   map[string]sandbox.Result{"pr": {ExitCode: 1}},
			wantKeys:  keys,
			emptyList: []string{"tests", "failed", "tamper_signals", "touched_tests", "contamination", "runner"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{results: tt.results}
			req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)}
			if tt.base {
				req.Base, req.Reference = gradeRepo(t, "base"), []byte(gradeReference)
			}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			data, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.wantKeys {
				if _, ok := doc[k]; !ok {
					t.Errorf("report JSON has no key %q:\n%s", k, data)
				}
			}
			if !tt.base {
				for _, k := range []string{"base_check", "reference_check"} {
					if _, ok := doc[k]; ok {
						t.Errorf("report JSON has %q without a base", k)
					}
				}
			}
			for _, p := range tt.emptyList {
				v := lookupJSON(doc, p)
				if l, ok := v.([]any); !ok || len(l) != 0 {
					t.Errorf("report JSON %s = %#v, want []", p, v)
				}
			}
			for _, p := range nullsIn("", doc) {
				t.Errorf("report JSON %s is null:\n%s", p, data)
			}
		})
	}
}

// lookupJSON follows a dotted path of object keys.
func lookupJSON(doc map[string]any, p string) any {
	var v any = doc
	for k := range strings.SplitSeq(p, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// nullsIn lists the paths of every null in v.
func nullsIn(at string, v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{at}
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(out, nullsIn(strings.TrimPrefix(at+"."+k, "."), e)...)
		}
		slices.Sort(out)
		return out
	case []any:
		var out []string
		for i, e := range v {
			out = append(out, nullsIn(fmt.Sprintf("%s[%d]", at, i), e)...)
		}
		return out
	}
	return nil
}

// TestMaskSentinels: the sentinels' names in the runner output are replaced
// as whole words; their module, a hidden one, and the neighbours whose names
// start like theirs keep their own.
func TestMaskSentinels(t *testing.T) {
	out := "tests/test_bigrams.py::test_bigrams_of_single FAILED\n" +
		"tests/test_bigrams.py::test_bigrams_of_single_word_is_empty PASSED\n" +
		"tests/test_bigrams.py::test_bigrams_empty PASSED\n" +
		"    def test_bigrams_of_single():\n"
	got := maskSentinels(out, []wrapper.Sentinel{
		{ClassName: "tests.test_bigrams", Name: "test_bigrams_of_single", MustPass: false},
		{ClassName: "tests.test_bigrams", Name: "test_bigrams_empty", MustPass: true},
	})
	want := "tests/test_bigrams.py::sentinel_must_fail FAILED\n" +
		"tests/test_bigrams.py::test_bigrams_of_single_word_is_empty PASSED\n" +
		"tests/test_bigrams.py::sentinel_must_pass PASSED\n" +
		"    def sentinel_must_fail():\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("maskSentinels (-want +got):\n%s", diff)
	}
}

// TestGradeLabelsEverySandbox: the request's labels reach every sandbox of
// the grade (the tree's, the base's, the twins'), so the service can find
// them by the job they ran for.
func TestGradeLabelsEverySandbox(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun()})}
	labels := map[string]string{sandbox.LabelJob: "42"}
	req := Request{Repo: gradeRepo(t, "pr"), Base: gradeRepo(t, "base"), Hidden: gradeHidden(t), Labels: labels}
	if _, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req); err != nil {
		t.Fatalf("Grade: %v", err)
	}
	calls := sb.Calls()
	if len(calls) < 3 {
		t.Fatalf("%d sandboxes ran, want the tree's, the base's and twins", len(calls))
	}
	for _, c := range calls {
		if c.Spec.Labels[sandbox.LabelJob] != "42" {
			t.Errorf("the %s sandbox has labels %v, want %s=42", c.Kind, c.Spec.Labels, sandbox.LabelJob)
		}
	}
}

// TestGradeUnsealedDirs: a run whose hidden tests' directory the test uid
// could write keeps its verdict but is not isolated, and the report says
// which directory was wrong, ranked with the other runtime evidence.
func TestGradeUnsealedDirs(t *testing.T) {
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": unsealedHidden(gradeRun())})}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if rep.Trust != report.TrustBestEffort || rep.Verdict != report.VerdictPass {
		t.Errorf("trust %s, verdict %s: want best_effort, and the verdict kept (pass)", rep.Trust, rep.Verdict)
	}
	if !rep.Isolation.UIDSplit || rep.Isolation.DirsSealed || len(rep.Isolation.Dirs) != 3 || rep.Isolation.Dirs[0].Mode != "0777" {
		t.Errorf("isolation %+v: want the uid split proven and the directories as the wrapper saw them", rep.Isolation)
	}
	want := report.Evidence{Reason: evaluate.ReasonDirsUnsealed, Strength: report.StrengthWeak, Count: 1,
		Examples: []string{"/hidden: owner 0, mode 0777 (want owner 0, mode 0755)"}}
	if len(rep.Evidence) != 1 || !cmp.Equal(rep.Evidence[0], want) {
		t.Errorf("evidence %+v, want [%+v]", rep.Evidence, want)
	}
}

// TestGradeSourceDirFromBase: a pull request that declares a layout of its
// own (pointing sys.path at a directory it chose) is graded with the
// base's layout; every run of the grade gets the same one.
func TestGradeSourceDirFromBase(t *testing.T) {
	layout := tree.File{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools.packages.find]\nwhere = [\"lib\"]\n")}
	forged := tree.File{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools.packages.find]\nwhere = [\"forged\"]\n")}
	for _, c := range []struct {
		name     string
		base, pr []tree.File
		want     string
	}{
		{"base flat, pull request adds a layout", nil, []tree.File{forged, {Path: "forged/calc.py", Mode: 0o644}}, ""},
		{"base layout, pull request changes it", []tree.File{layout, {Path: "lib/x.py", Mode: 0o644}}, []tree.File{forged, {Path: "lib/x.py", Mode: 0o644}, {Path: "forged/calc.py", Mode: 0o644}}, "lib"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b")})}
			req := Request{Repo: gradeRepo(t, "pr", c.pr...), Hidden: gradeHidden(t), Base: gradeRepo(t, "base", c.base...)}
			if _, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req); err != nil {
				t.Fatalf("Grade: %v", err)
			}
			for _, call := range sb.Calls() {
				if call.Job.SourceDir != c.want {
					t.Errorf("%s run: SourceDir %q, want %q", call.Kind, call.Job.SourceDir, c.want)
				}
			}
		})
	}
}

// Every run has its own budget: the rerun of failing tests after a slow
// first run, and the base run, each get the whole timeout.
func TestGradeRunsHaveTheirOwnBudget(t *testing.T) {
	const timeout = 3 * time.Second
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun("test_b"), "base": gradeRun("test_b")})}
	sb.answer = func(c sandboxCall) (sandbox.Result, bool) {
		if c.Kind == "pr" && len(c.Job.Select) == 0 {
			time.Sleep(timeout / 2)
		}
		return sandbox.Result{}, false
	}
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Timeout: timeout}
	if _, err := New(sb, gradeImage, gradeImageID).Grade(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	reruns := 0
	for _, c := range sb.Calls() {
		if c.Spec.Timeout != timeout {
			t.Errorf("the %s run (select %v) had %v, want its own %v", c.Kind, c.Job.Select, c.Spec.Timeout, timeout)
		}
		if len(c.Job.Select) > 0 {
			reruns++
		}
	}
	if reruns != 1 {
		t.Errorf("%d reruns, want 1", reruns)
	}
}

// skipRun is gradeRun with the named tests skipped and the others passing.
func skipRun(skipping ...string) *wrapper.Result {
	r := gradeRun()
	for _, name := range skipping {
		for _, e := range gradeExpected {
			if e.Name == name {
				class := evaluate.JUnitClass(e.File, "")
				r.JUnit = bytes.Replace(r.JUnit, []byte(evaluatetest.PassedCase(class, name)), []byte(evaluatetest.SkippedCase(class, name)), 1)
			}
		}
	}
	return evaluatetest.WithEvidence(r)
}

// TestGradeSkips: a test that skips on the base and with the reference
// does not count; one the reference runs does; a set that skips whole on
// the base is invalid only when the reference skips it too.
func TestGradeSkips(t *testing.T) {
	all := []string{"test_a", "test_b", "test_c"}
	for _, tt := range []struct {
		name          string
		runs          map[string]*wrapper.Result
		want          report.Verdict
		skippedOnBase []string
	}{
		{"skips on base and reference", map[string]*wrapper.Result{"pr": skipRun("test_c"), "base": skipRun("test_b", "test_c"), "ref": skipRun("test_c")},
			report.VerdictPass, []string{"tests/test_y.py::test_c"}},
		{"the reference runs it", map[string]*wrapper.Result{"pr": skipRun("test_c"), "base": skipRun("test_b", "test_c"), "ref": gradeRun()},
			report.VerdictFail, nil},
		{"skips on the pull request only", map[string]*wrapper.Result{"pr": skipRun("test_b"), "base": gradeRun("test_b"), "ref": gradeRun()},
			report.VerdictFail, nil},
		{"all skip on base, the reference runs them", map[string]*wrapper.Result{"pr": gradeRun(), "base": skipRun(all...), "ref": gradeRun()},
			report.VerdictPass, nil},
		{"all skip on base and reference", map[string]*wrapper.Result{"pr": skipRun(all...), "base": skipRun(all...), "ref": skipRun(all...)},
			report.VerdictInvalidTask, []string{"tests/test_x.py::test_a", "tests/test_x.py::test_b", "tests/test_y.py::test_c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(tt.runs)}
			req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(gradeReference)}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tt.want {
				t.Errorf("verdict %s (%q), want %s", rep.Verdict, rep.Reasons, tt.want)
			}
			if diff := cmp.Diff(tt.skippedOnBase, rep.SkippedOnBase, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("SkippedOnBase (-want +got):\n%s", diff)
			}
		})
	}
}

// wantTreeLabel is the sandbox.LabelTree a run of kind (a version of calc.py,
// maybe with twinKind) carries.
func wantTreeLabel(kind string) string {
	if strings.HasSuffix(kind, twinKind) {
		return "twins"
	}
	return map[string]string{"base": "base", "pr": "tested", "ref": "reference"}[kind]
}

package grader

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Sandbox runs one sealed container. Run returns an error only when the
// container engine failed; anything the program in the container did is in
// the Result.
type Sandbox interface {
	Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)
}

// Defaults of a grade.
const (
	DefaultTimeout = 10 * time.Minute
	// testUIDBase and testUIDSpan bound the unprivileged uids the code
	// under test runs as: one drawn at random per sandbox, so that per-uid
	// kernel accounting (RLIMIT_NPROC) is never shared between sandboxes.
	testUIDBase = 100_000
	testUIDSpan = 1 << 24
	// reportMargin is the part of a run's time kept for the wrapper to kill
	// the tests and report before the engine kills the container.
	reportMargin = 15 * time.Second
	outputLimit  = 1 << 20
	junitLimit   = 16 << 20
	stdoutLimit  = 64 << 20
	stderrLimit  = 64 << 10
	// procReserve is the part of the pids limit kept for the wrapper.
	procReserve = 64
	// engineGrace is how long past a run's budget the engine calls that
	// kill and remove its sandbox may take.
	engineGrace = 30 * time.Second
	// baseOvertime is the least time a pull request's grade waits for its
	// base run once every other run has ended (see runAll).
	baseOvertime = 30 * time.Second
)

// errBaseOvertime ends a base run that outlasted the rest of its grade.
var errBaseOvertime = errors.New("the base run outlasted the rest of the grade")

// Grader grades trees against hidden tests in sandboxes.
type Grader struct {
	sb      Sandbox
	image   string
	imageID string
	envs    EnvironmentSource
	runtime string
	// defaultRuntime names the engine's default runtime in reports.
	defaultRuntime string
	// baseRuns keeps recent base runs for the next grade of the same
	// base and tests (see baseMemo).
	baseRuns *baseMemo
	// suiteRuns keeps recent regression runs' base runs (Regress) for the
	// next push against the same base.
	suiteRuns *lru[suiteRun]
}

// Option changes a Grader.
type Option func(*Grader)

// WithEnvironments grades every request in the dependency environment src
// prepares for it, instead of the one image New names.
func WithEnvironments(src EnvironmentSource) Option { return func(g *Grader) { g.envs = src } }

// WithRuntime runs every sandbox of a grade with the engine's OCI runtime
// name (sandbox.Spec.Runtime) and reports it (Report.Runtime): runsc is
// gVisor. Without it, sandboxes run under the engine's default.
func WithRuntime(name string) Option { return func(g *Grader) { g.runtime = name } }

// WithDefaultRuntime names the engine's default runtime (runc) for the
// reports of a grader without WithRuntime; it is never asked of the
// engine, which keeps its own choice.
func WithDefaultRuntime(name string) Option { return func(g *Grader) { g.defaultRuntime = name } }

// runtimeName is what a report says of g's runtime: "default" when
// nothing names it.
func (g *Grader) runtimeName() string { return cmp.Or(g.runtime, g.defaultRuntime, "default") }

// New returns a Grader that runs image (by id or reference; imageID is
// reported in every grade) through sb.
func New(sb Sandbox, image, imageID string, opts ...Option) *Grader {
	g := &Grader{sb: sb, image: image, imageID: imageID, baseRuns: newBaseMemo(), suiteRuns: newLRU[suiteRun](baseMemoSize)}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Request is one grade.
type Request struct {
	// Repo is the tree under test.
	Repo *tree.Tree
	// Hidden holds the hidden test files.
	Hidden *tree.Tree
	// Base, when set, enables the base check and touched_tests.
	Base *tree.Tree
	// Reference, when set, is a patch against Base that must make every
	// hidden test pass.
	Reference []byte
	// Command, when set, replaces pytest: trust is low.
	Command []string
	// NoUIDSplit runs the tests as the wrapper's uid, for runtimes without
	// SETUID: trust is best_effort at most.
	NoUIDSplit bool
	// Timeout bounds each sandbox run of the grade, from its own start
	// (the tree under test, the base, the reference, twins; the rerun of
	// failing tests has one of its own after the first run), so a grade
	// takes at most twice as long plus the engine's grace; DefaultTimeout
	// when zero.
	Timeout time.Duration
	// Limits bound each sandbox; sandbox.DefaultLimits when zero.
	Limits sandbox.Limits
	// TestsDigest, when set, is reported as the digest of the hidden tests
	// (the store's version digest); otherwise Hidden's tree digest is.
	TestsDigest string
	// TwinExclude lists hidden test ids never to twin: tests whose twin
	// the reference patch passed (Twins.InvalidTwins of the version's
	// check) and tests found flaky. A parametrized test's id without its
	// case excludes every case.
	TwinExclude []string
	// TestStrength, when set with a base tree, also measures the hidden
	// tests: flaky tests and, with a reference patch, mutants of it.
	TestStrength *TestStrength
	// Stage, when set, is told what the grade starts doing: StageEnvironment
	// before its dependency environment is found or built, StageTests
	// before its sandboxes run the hidden tests (and their twins, beside
	// them). It must return quickly.
	Stage func(Stage)
	// TrustedCollection, with a base tree, first collects the hidden tests
	// with pytest against the reference (else the base) in a sandbox of its
	// own, so the ids the syntax tree cannot tell (computed parametrize
	// lists, parametrized fixtures, TestCase bases in the tree) are
	// expected too. It costs one more sandbox, before the others.
	TrustedCollection bool

	// collected is what the grade's trusted collection found beyond the
	// listing (see collectTrusted); every run expects it.
	collected []wrapper.ExpectedTest
	// Python picks the Python version of the grade's environment
	// (DefaultPython when empty); it needs WithEnvironments.
	Python string
	// Mirror lets the grade's sandboxes read (GET, HEAD) the package index
	// through the read-only egress proxy, and nothing else (network:
	// mirror); it needs WithEnvironments.
	Mirror bool
	// proxySocket is the read-only proxy's socket a mirror grade's
	// sandboxes mount.
	proxySocket string
	// context is the base's test support laid beside the hidden tests,
	// and laid the hidden tests with it: what every sandbox's hidden
	// directory holds (see TestContextOf).
	context TestContext
	laid    *tree.Tree
	// memoBase marks the request of a base run: its run may be one kept
	// from an earlier grade of the same base and tests, and is kept for
	// the next (baseMemo).
	memoBase bool
	// Split grades the tree under test split (wrapper.Job.Split): the
	// hidden tests, pytest and every assertion in one process, as a grader
	// uid that alone can read the tests, and every module of the tree in
	// another, as the test uid. It needs the uid split; twins, an
	// in-process defence, are not run. The trust is sealed or split, or
	// isolated when a passing test was graded in-process by the per-test
	// fallback (runFallback): the tests the split refused on the base or
	// reference run.
	Split bool
	// Labels are added to every sandbox container of the grade: the
	// service names the job with them, so that whoever takes the job over
	// finds the sandboxes a dead process left running.
	Labels map[string]string
}

// Stage is what a grade is doing, for those who show its progress.
type Stage string

// The stages of a grade, in order.
const (
	// StageEnvironment: the dependency environment is found or built.
	StageEnvironment Stage = "environment"
	// StageTests: the hidden tests run, their twins beside them.
	StageTests Stage = "tests"
)

// Grade grades req and returns its report. It returns an error for bad
// input or when the sandbox engine fails; everything the code under test
// does ends in a report, never an error. With WithEnvironments, the grade
// runs in the environment prepared for it, and one that cannot be built is
// a report with verdict error that graded nothing.
func (g *Grader) Grade(ctx context.Context, req Request) (*report.Report, error) {
	stage := func(s Stage) {
		if req.Stage != nil {
			req.Stage(s)
		}
	}
	if g.envs == nil {
		if req.Python != "" && req.Python != sandbox.DefaultPython {
			return nil, fmt.Errorf("grade: python %s needs dependency environments, which this grader was not given", req.Python)
		}
		if req.Mirror {
			return nil, errors.New("grade: network mirror needs dependency environments and the read-only proxy, which this grader was not given")
		}
		stage(StageTests)
		return g.grade(ctx, req)
	}
	if req.Repo == nil || req.Hidden == nil {
		return nil, errors.New("grade: a repo tree and hidden tests are required")
	}
	stage(StageEnvironment)
	p, err := g.envs.Prepare(ctx, environment.Request{Repo: req.Repo, Base: req.Base, Python: req.Python, Mirror: req.Mirror, Labels: req.Labels})
	if err != nil {
		return nil, fmt.Errorf("grade: environment: %w", err)
	}
	if p.Failure != "" {
		rep := report.ErrorReport(trustOf(req), p.Failure, p.FailureOutput)
		rep.Environment, rep.Network, rep.Settings = p.Environment, report.NetworkNone, settingsOf(req)
		rep.Runtime = g.runtimeName()
		if req.Mirror {
			rep.Network = report.NetworkMirror
		}
		rep.RepoDigest, rep.TestsDigest = req.Repo.Digest(), cmp.Or(req.TestsDigest, req.Hidden.Digest())
		rep.Normalize()
		return rep, nil
	}
	req.proxySocket = p.ProxySocket
	in := &Grader{sb: g.sb, image: p.Image, imageID: p.ImageID, runtime: g.runtime, defaultRuntime: g.defaultRuntime, baseRuns: g.baseRuns, suiteRuns: g.suiteRuns}
	stage(StageTests)
	rep, err := in.grade(ctx, req)
	if err != nil {
		return nil, err
	}
	rep.Environment = p.Environment
	wantOfUnavailable(rep)
	if env := rep.Environment; env != nil && len(env.IgnoredChanges) > 0 {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("the pull request changes %s: graded with the base's environment", strings.Join(env.IgnoredChanges, ", ")))
	}
	rep.Normalize()
	return rep, nil
}

// splits reports whether req's pytest runs are split.
func (req Request) splits() bool { return req.Split && req.Command == nil && !req.NoUIDSplit }

// trustOf is the trust a grade of req has when it runs as asked.
func trustOf(req Request) report.Trust {
	switch {
	case req.Command != nil:
		return report.TrustLow
	case req.NoUIDSplit:
		return report.TrustBestEffort
	case req.splits():
		return report.TrustSealed
	}
	return report.TrustIsolated
}

// grade grades req in g's image, stage by stage: scan the trees, run the
// sandboxes, evaluate the recorded runs, judge.
func (g *Grader) grade(ctx context.Context, req Request) (*report.Report, error) {
	began := time.Now()
	req, refTree, err := prepare(req)
	if err != nil {
		return nil, err
	}
	canaries := detect.Canaries(req.Hidden)
	rep := g.scan(req, canaries)
	runs, err := g.runAll(ctx, req, refTree, canaries)
	if err != nil {
		return nil, err
	}
	if err := g.runFallback(ctx, req, runs, canaries); err != nil {
		return nil, err
	}
	c := evaluateRuns(rep, req, refTree, canaries, runs)
	judgeGrade(rep, req.Repo, runs, c)
	rep.DurationSeconds = time.Since(began).Seconds()
	rep.Normalize()
	return rep, nil
}

// prepare checks req, fills in its defaults and applies its reference
// patch to the base: the tree the reference run grades.
func prepare(req Request) (Request, *tree.Tree, error) {
	if req.Repo == nil || req.Hidden == nil {
		return req, nil, errors.New("grade: a repo tree and hidden tests are required")
	}
	if len(req.Hidden.Files) == 0 {
		return req, nil, errors.New("grade: the hidden tests directory is empty")
	}
	if req.Reference != nil && req.Base == nil {
		return req, nil, errors.New("grade: a reference patch needs the base tree (--base)")
	}
	if req.Timeout <= 0 {
		req.Timeout = DefaultTimeout
	}
	if req.Limits == (sandbox.Limits{}) {
		req.Limits = sandbox.DefaultLimits
	}
	req.laid = req.Hidden
	if req.Base != nil && req.Command == nil {
		limits := req.Limits.HiddenSize/2 - req.Hidden.Size()
		req.context = TestContextOf(req.Base, req.Hidden, limits)
		laid, err := withContext(req.Hidden, req.context)
		if err != nil {
			return req, nil, fmt.Errorf("lay the base's test support beside the hidden tests: %w", err)
		}
		req.laid = laid
	}
	var refTree *tree.Tree
	if req.Reference != nil {
		var err error
		if refTree, err = tree.ApplyPatch(req.Base, req.Reference); err != nil {
			return req, nil, fmt.Errorf("reference patch does not apply to the base tree: %w", err)
		}
	}
	return req, refTree, nil
}

// scan is the first stage: what the trees show before anything runs (the
// static detectors, the canaries already in the tree under test, the
// tests it touched), in a report the later stages fill in.
func (g *Grader) scan(req Request, canaries []detect.Canary) *report.Report {
	rep := &report.Report{
		Settings:      settingsOf(req),
		Image:         g.imageID,
		Runtime:       g.runtimeName(),
		TestsDigest:   cmp.Or(req.TestsDigest, req.Hidden.Digest()),
		RepoDigest:    req.Repo.Digest(),
		Contamination: detect.ScanTree(req.Repo, canaries),
		Network:       report.NetworkNone,
	}
	if req.proxySocket != "" {
		rep.Network = report.NetworkMirror
	}
	rep.TamperSignals, rep.TamperContext = detect.RankTamperSignals(detect.TamperSignals(req.Repo, req.Hidden), req.Base, req.Repo)
	if req.Base != nil {
		rep.TouchedTests = detect.TouchedTests(req.Base, req.Repo)
	}
	return rep
}

// gradeRuns are the sandbox runs of one grade.
type gradeRuns struct {
	pr, base, ref   *run
	prTwin, refTwin evaluate.TwinRun
	strength        *strengthRuns
	// sameAsRef and sameAsBase say that the tree under test is the
	// reference or the base itself: its run is theirs too.
	sameAsRef, sameAsBase bool
	// fallback is the in-process run of the tests of fallbackSet, those
	// the split could not run on the base or the reference tree (see
	// runFallback); nil when there were none.
	fallback    *run
	fallbackSet map[string][]string
}

// runFallback is the per-test fallback of a split grade: the hidden tests
// the split could not run as they needed on the base or the reference
// tree (the trusted side's refusals there) run once more on the tree under
// test, in-process, alone, with the in-process defences of the runner
// (the evidence plugin, sentinels); their outcomes replace the split
// ones. The set is decided on the base and the reference, never on the
// tree under test: a tree that provokes a refusal in every test buys
// itself nothing but failing tests. Twins are not run for it.
func (g *Grader) runFallback(ctx context.Context, req Request, runs *gradeRuns, canaries []detect.Canary) error {
	if !req.splits() {
		return nil
	}
	set := map[string][]string{}
	add := func(r *run, where string) {
		if r == nil || r.crash() != "" {
			return
		}
		for id, whys := range evaluate.Refusals(r.ev, r.res, where) {
			set[id] = append(set[id], whys...)
		}
	}
	add(runs.base, "on the base, ")
	if !runs.sameAsRef {
		add(runs.ref, "with the reference patch, ")
	}
	if len(set) == 0 {
		return nil
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	in := req
	in.Split = false
	tj := wrapper.TwinJob{TwinSeed: newTwinSeed(), TwinExclude: req.TwinExclude}
	r, err := g.run(ctx, in, req.Repo, canaries, tj, selectTests(evaluate.FunctionsOf(ids)))
	if err != nil {
		return err
	}
	runs.fallback, runs.fallbackSet = r, set
	return nil
}

// runAll is the second stage: the sandbox runs of a grade, all at once
// (the trusted collection first, when asked): the tree under test and the
// rerun of its failing tests, the base, the reference, the twins and the
// extra runs of TestStrength.
// Every run has a budget of its own, from its own start: a base that
// hangs (the very bug the pull request fixes) does not eat the pull
// request's time, nor the first run the rerun's. The engine calls that
// kill, read and remove a sandbox get engineGrace past its budget.
func (g *Grader) runAll(ctx context.Context, req Request, refTree *tree.Tree, canaries []detect.Canary) (*gradeRuns, error) {
	if req.TrustedCollection {
		collected, err := g.collectTrusted(ctx, req, cmp.Or(refTree, req.Base))
		if err != nil {
			return nil, err
		}
		req.collected = collected
	}

	var prRun, baseRun, refRun *run
	var prTwin, refTwin evaluate.TwinRun
	tj := wrapper.TwinJob{TwinSeed: newTwinSeed(), TwinExclude: req.TwinExclude}
	group, gctx := errgroup.WithContext(ctx)
	start := func(dst **run, tree *tree.Tree, opts ...func(*wrapper.Job)) {
		group.Go(func() error {
			r, err := g.run(gctx, req, tree, canaries, tj, opts...)
			*dst = r
			return err
		})
	}
	group.Go(func() error {
		r, err := g.run(gctx, req, req.Repo, canaries, tj)
		if err == nil && req.Command == nil {
			// Failing tests run once more, alone: one that passes then is
			// reported flaky.
			if ids := rerunOf(r); ids != nil {
				if r.rerun, err = g.run(gctx, req, req.Repo, canaries, tj, selectTests(ids)); err == nil {
					r.flaky = evaluate.ApplyRerun(r.ev, r.rerun.ev)
				}
			}
		}
		prRun = r
		return err
	})
	// The tree under test may be the reference itself (the base check of a
	// version): its run is then the reference run.
	sameAsRef := refTree != nil && refTree.Digest() == req.Repo.Digest()
	// Likewise the tree under test may be the base itself (the base check
	// of a version without a reference patch, a pull request that changes
	// nothing): its run is then the base run.
	sameAsBase := req.Base != nil && req.Base.Digest() == req.Repo.Digest()
	// The base runs beside the others, under a context of its own: a base
	// that hangs (the very bug the pull request fixes) must not make the
	// grade wait out its whole budget.
	baseCtx, cancelBase := context.WithCancelCause(ctx)
	defer cancelBase(nil)
	baseEnded := make(chan error, 1)
	began := time.Now()
	if req.Base != nil && !sameAsBase {
		go func() {
			breq := req
			breq.memoBase = true
			r, err := g.run(baseCtx, breq, req.Base, canaries, tj)
			if err != nil && errors.Is(context.Cause(baseCtx), errBaseOvertime) && ctx.Err() == nil {
				r, err = &run{res: &wrapper.Result{TimedOut: true}, ev: &evaluate.Evaluation{}, wall: time.Since(began), noReport: true, overtime: true}, nil
			}
			baseRun = r
			baseEnded <- err
		}()
	} else {
		baseEnded <- nil
	}
	if refTree != nil && !sameAsRef {
		start(&refRun, refTree)
	}
	if req.Command == nil && !req.splits() {
		g.startTwin(group, gctx, req, req.Repo, canaries, tj, &prTwin)
		if refTree != nil && !sameAsRef {
			g.startTwin(group, gctx, req, refTree, canaries, tj, &refTwin)
		}
	}
	strength := g.startStrength(req, refTree, start)
	if err := group.Wait(); err != nil {
		cancelBase(err)
		<-baseEnded
		return nil, err
	}
	// Every other run has ended. The base of a pull request's grade gets
	// as long again as they took, at least baseOvertime, within its own
	// budget, and is then killed: it counts as failing every hidden test,
	// timed out. The version's check grades the base itself as its tree
	// under test (sameAsBase: no separate base run), with the whole
	// budget: whether the hidden tests already pass on the base is what
	// it is for, and a pull request's base run only repeats it. A grade of
	// the reference itself waits for its base too.
	var baseErr error
	if !sameAsRef {
		wait := time.NewTimer(max(baseOvertime, time.Since(began)))
		select {
		case baseErr = <-baseEnded:
		case <-wait.C:
			cancelBase(errBaseOvertime)
			baseErr = <-baseEnded
		}
		wait.Stop()
	} else {
		baseErr = <-baseEnded
	}
	if baseErr != nil {
		return nil, baseErr
	}
	if sameAsRef {
		refRun, refTwin = prRun, prTwin
	}
	if sameAsBase {
		baseRun = prRun
	}
	return &gradeRuns{pr: prRun, base: baseRun, ref: refRun, prTwin: prTwin, refTwin: refTwin, strength: strength, sameAsRef: sameAsRef, sameAsBase: sameAsBase}, nil
}

// evaluated is what the evaluate stage makes of a grade's runs, for the
// judge stage.
type evaluated struct {
	pr                *evaluate.Evaluation
	excused           map[string]bool
	baseCrash         string
	invalid, problems []string
}

// evaluateRuns is the third stage: grader/evaluate on the recorded runs.
// It fills in rep's outcomes, isolation, contamination, trust, base and
// reference checks, twins and evidence, and returns what the verdict is
// decided from.
func evaluateRuns(rep *report.Report, req Request, refTree *tree.Tree, canaries []detect.Canary, runs *gradeRuns) evaluated {
	prRun, baseRun, refRun := runs.pr, runs.base, runs.ref
	prTwin, refTwin, strength := runs.prTwin, runs.refTwin, runs.strength
	sameAsRef, sameAsBase := runs.sameAsRef, runs.sameAsBase
	pr := prRun.ev
	// A base that hung past its budget or crashed fails on the base:
	// nothing it reported counts, and it is no problem of the grade.
	baseCrash := ""
	if baseRun != nil {
		baseCrash = baseRun.crash()
	}
	// Hidden tests that skip on the base, and with the reference patch
	// too, do not count against the tree under test when they skip there.
	var excused map[string]bool
	if baseRun != nil && baseCrash == "" {
		excused = map[string]bool{}
		for _, id := range baseRun.ev.Skipped() {
			excused[id] = refRun == nil || slices.Contains(refRun.ev.Skipped(), id)
		}
	}
	// The per-test fallback's outcomes replace the split ones first: the
	// grade counts them.
	var fallback, refusedHere []report.FallbackTest
	inProcess := map[string]bool{}
	if runs.fallback != nil {
		fallback = evaluate.ApplyFallback(pr, runs.fallback.ev, runs.fallbackSet)
		for _, f := range fallback {
			inProcess[f.ID] = true
		}
	}
	if req.splits() && !sameAsBase && !sameAsRef {
		here := evaluate.Refusals(pr, prRun.res, "")
		for _, t := range pr.Tests {
			if whys, ok := here[t.ID]; ok && runs.fallbackSet[t.ID] == nil {
				refusedHere = append(refusedHere, report.FallbackTest{ID: t.ID, Why: whys})
			}
		}
	}
	rep.Tests = pr.Tests
	rep.Counts = report.CountsOf(pr.Tests)
	rep.Failed = pr.NotPassed(excused)
	for _, id := range pr.Skipped() {
		if excused[id] {
			rep.SkippedOnBase = append(rep.SkippedOnBase, id)
		}
	}
	rep.Sentinels = pr.Sentinels
	rep.Runner = prRun.res.Runner
	rep.ExitCode = prRun.res.ExitCode
	rep.Output = maskSentinels(string(prRun.res.Output), prRun.res.Sentinels)
	rep.OutputTruncated = prRun.res.OutputTruncated
	if names := evaluate.CaseNames(prRun.res.Expected); len(names) > 0 {
		rep.CaseNames = names
	}
	rep.Isolation = report.Isolation{
		UIDSplit:   prRun.res.Isolation.Proven,
		UID:        prRun.res.Isolation.UID,
		GID:        prRun.res.Isolation.GID,
		CapEff:     prRun.res.Isolation.CapEff,
		CapPrm:     prRun.res.Isolation.CapPrm,
		CapAmb:     prRun.res.Isolation.CapAmb,
		NoNewPrivs: prRun.res.Isolation.NoNewPrivs,
		Inferred:   prRun.res.Isolation.Inferred,
		DirsSealed: prRun.res.Isolation.DirsSealed,
	}
	for _, d := range prRun.res.Isolation.Dirs {
		rep.Isolation.Dirs = append(rep.Isolation.Dirs, report.DirState(d))
	}
	rep.Contamination = append(rep.Contamination, runSightings(canaries, prRun.res)...)
	if prRun.rerun != nil {
		rep.Contamination = append(rep.Contamination, runSightings(canaries, prRun.rerun.res)...)
	}
	if runs.fallback != nil {
		rep.Contamination = append(rep.Contamination, runSightings(canaries, runs.fallback.res)...)
	}
	rep.Contamination = detect.SortSightings(rep.Contamination)
	rep.Contaminated = len(rep.Contamination) > 0

	rep.Sealing = evaluate.Sealing(pr, prRun.res, inProcess)
	if rep.Sealing != nil {
		rep.Sealing.InProcess, rep.Sealing.RefusedHere = fallback, refusedHere
	}
	switch {
	case req.Command != nil:
		rep.Trust = report.TrustLow
	case rep.Isolation.UIDSplit && rep.Isolation.DirsSealed && !req.NoUIDSplit && rep.Sealing != nil:
		rep.Trust = report.TrustSealed
		if rep.Sealing.Sealed < rep.Sealing.Passing {
			rep.Trust = report.TrustSplit
		}
		// The grade's trust is its weakest test's: a passing test the
		// fallback graded in-process has the in-process level, and that
		// run's own isolation.
		if rep.Sealing.InProcessPassing > 0 {
			rep.Trust = report.TrustIsolated
			if iso := runs.fallback.res.Isolation; !iso.Proven || !iso.DirsSealed {
				rep.Trust = report.TrustBestEffort
			}
		}
	case rep.Isolation.UIDSplit && rep.Isolation.DirsSealed && !req.NoUIDSplit:
		rep.Trust = report.TrustIsolated
	default:
		rep.Trust = report.TrustBestEffort
	}

	var invalid, problems []string
	if baseRun != nil {
		bc := *baseRun.ev // a copy: the base run may be the tree's own
		b := &bc
		rep.BaseCheck = &report.BaseCheck{Counts: report.CountsOf(b.Tests), Context: req.context.Paths(), ContextLeftOut: req.context.LeftOut, Reused: baseRun.reused}
		switch {
		case baseCrash != "":
			rep.BaseCheck.Note = baseCrash + ": every hidden test counts as failing on the base"
			rep.BaseCheck.Counts = report.Counts{}
		default:
			b.Tampered = append(b.Tampered, evaluate.DescribeStrong(b.Evidence)...)
			rep.BaseCheck.AllPass = b.AllPassed(excused) && len(b.Problems) == 0 && len(b.Tampered) == 0
			rep.BaseCheck.Skipped = b.Skipped()
			for _, t := range b.Tests {
				if t.Outcome == report.OutcomePassed {
					rep.BaseCheck.GuardTests = append(rep.BaseCheck.GuardTests, t.ID)
				}
			}
			if errs := slices.Concat(b.Tampered, b.Problems); len(errs) > 0 {
				rep.BaseCheck.Error = strings.Join(errs, "; ")
				if !sameAsBase {
					problems = append(problems, "base check: "+rep.BaseCheck.Error)
				}
			}
		}
		switch {
		case rep.BaseCheck.AllPass && len(rep.BaseCheck.GuardTests) == len(b.Tests):
			invalid = append(invalid, "every hidden test already passes on the base tree")
		case rep.BaseCheck.AllPass:
			invalid = append(invalid, fmt.Sprintf("every hidden test passes or skips on the base tree (%d skip there and with the reference): none can tell a fix from no change", len(rep.BaseCheck.Skipped)))
		case len(b.Tests) > 0 && baseCrash == "" && !slices.ContainsFunc(b.Tests, func(t report.TestResult) bool { return !excused[t.ID] }):
			// Every test skips on the base (and with the reference): a
			// tree that changes nothing skips them too.
			invalid = append(invalid, "every hidden test skips on the base tree: none can tell a fix from no change")
		}
		rep.BaseCheck.Flaky = strength.flaky(baseRun, refRun)
		if baseCrash == "" {
			evs := []*evaluate.Evaluation{b, pr}
			trees := []*tree.Tree{req.Base, req.Repo}
			if refRun != nil && !sameAsRef {
				evs, trees = append(evs, refRun.ev), append(trees, refTree)
			}
			rep.BaseCheck.Broken = evaluate.BrokenHidden(evs, trees, req.Hidden)
			invalid = append(invalid, rep.BaseCheck.Broken...)
		}
	}
	if refRun != nil {
		r := refRun.ev
		r.Tampered = append(r.Tampered, evaluate.DescribeStrong(r.Evidence)...)
		rep.ReferenceCheck = &report.ReferenceCheck{Counts: report.CountsOf(r.Tests), Failed: r.NotPassed(excused), Skipped: r.Skipped(), AllPass: r.AllPassed(excused) && len(r.Problems) == 0 && len(r.Tampered) == 0}
		if errs := slices.Concat(r.Tampered, r.Problems); len(errs) > 0 {
			// The reference run could not be judged: that says nothing
			// about the task, only that the grade cannot be trusted.
			rep.ReferenceCheck.Error = strings.Join(errs, "; ")
			problems = append(problems, "reference check: "+rep.ReferenceCheck.Error)
		} else if !rep.ReferenceCheck.AllPass {
			invalid = append(invalid, fmt.Sprintf("the reference patch does not pass every hidden test (%d of %d failed)", len(rep.ReferenceCheck.Failed), len(r.Tests)))
		}
		rep.ReferenceCheck.Mutation = strength.mutation(rep.ReferenceCheck.AllPass && rep.ReferenceCheck.Error == "")
	}
	problems = slices.Concat(pr.Problems, problems)

	// evidence gathers what the runs say about the runner itself, beside
	// the outcomes: strong evidence makes the grade tampered.
	var evidence evaluate.EvidenceSet
	for _, e := range pr.Evidence {
		evidence.Merge(e)
	}
	if runs.fallback != nil {
		// The in-process run of the fallback is the tree under test in
		// pytest's process: what its evidence shows counts as the
		// grade's.
		for _, e := range runs.fallback.ev.Evidence {
			evidence.Merge(e)
		}
	}
	if req.Command == nil && !req.splits() {
		in := evaluate.TwinInput{PR: pr, Twin: &prTwin, Exclude: req.TwinExclude}
		if refRun != nil {
			in.Ref, in.RefTwin = refRun.ev, &refTwin
		}
		rep.Twins = evaluate.CompareTwins(in, &evidence)
		if prTwin.Result != nil {
			// The twin run is the same tree under the same runner: what
			// bends one shows in both, and neither can tell which it is.
			evaluate.MergeStrong(&evidence, prTwin.Eval.Evidence, "twin run: ")
		}
	}

	rep.Evidence = evidence.List()
	return evaluated{pr: pr, excused: excused, baseCrash: baseCrash, invalid: invalid, problems: problems}
}

// judgeGrade is the last stage: the verdict and its reasons, most severe
// first, then the notes that change no verdict.
func judgeGrade(rep *report.Report, repo *tree.Tree, runs *gradeRuns, c evaluated) {
	prRun, sameAsBase := runs.pr, runs.sameAsBase
	pr, excused, baseCrash, invalid, problems := c.pr, c.excused, c.baseCrash, c.invalid, c.problems
	rep.Verdict, rep.Reasons = evaluate.Judge(evaluate.VerdictInputs{
		Invalid:      invalid,
		Tampered:     pr.Tampered,
		Evidence:     rep.Evidence,
		Contaminated: rep.Contamination,
		Problems:     problems,
		Failed:       len(rep.Failed),
		Total:        len(pr.Tests),
		AllPassed:    pr.AllPassed(excused),
	})
	if rep.Verdict == report.VerdictFail {
		// Name why hidden modules did not import (a name the tree lacks, a
		// module it needs that is not installed): the real cause.
		var base *evaluate.Evaluation
		if runs.base != nil && baseCrash == "" {
			base = runs.base.ev
		}
		rep.Reasons = append(rep.Reasons, evaluate.ImportFailureReasons(pr, base, repo)...)
	}
	if baseCrash != "" && !sameAsBase {
		rep.Reasons = append(rep.Reasons, "base check: "+rep.BaseCheck.Note)
	}
	if n := len(rep.SkippedOnBase); n > 0 {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("%d hidden test(s) skipped here and skipped on the base as well: reported skipped, not counted against the grade", n))
	}
	if prRun.flaky > 0 {
		rep.Reasons = append(rep.Reasons, evaluate.FlakyReason(prRun.flaky))
	}
	rep.Reasons = append(rep.Reasons, pr.Notes...)
	if note := report.TwinsNote(rep.Twins); note != "" {
		rep.Reasons = append(rep.Reasons, note)
	}
}

// run is one sandboxed test run and its evaluation.
type run struct {
	res *wrapper.Result
	ev  *evaluate.Evaluation
	// rerun is the run of just the failing tests, if there was one; flaky
	// counts the tests that passed there.
	rerun *run
	flaky int
	// wall is how long the sandbox ran.
	wall time.Duration
	// noReport is set when the sandbox ended without the wrapper's
	// report.
	noReport bool
	// overtime is set on a base run killed because it outlasted the rest
	// of its grade (see runAll).
	overtime bool
	// reused is set on a base run kept from an earlier grade (baseMemo).
	reused bool
}

// crash says how the run ended without an answer (it hung past its budget,
// the runner was killed, the sandbox died without a report), or "".
func (r *run) crash() string {
	switch {
	case r.overtime:
		return fmt.Sprintf("the run timed out: it was killed after %.0fs, when the rest of the grade had ended and it had run as long again", r.wall.Seconds())
	case r.res.TimedOut:
		return fmt.Sprintf("the run timed out: it was killed at the end of its budget after %.0fs", r.wall.Seconds())
	case r.noReport:
		return "the sandbox ended without a report"
	case r.res.Signal != "":
		return "the runner was killed by " + r.res.Signal
	}
	return ""
}

// run runs the hidden tests against tree in a fresh sandbox, with the
// grade's twin job (every pytest run makes twins, only a twin run keeps
// them); opts change its job further.
func (g *Grader) run(ctx context.Context, req Request, tree *tree.Tree, canaries []detect.Canary, tj wrapper.TwinJob, opts ...func(*wrapper.Job)) (r *run, err error) {
	timeout := req.Timeout
	ctx, cancel := context.WithTimeout(ctx, timeout+engineGrace)
	defer cancel()
	testTimeout := timeout - reportMargin
	if testTimeout < timeout/2 {
		testTimeout = timeout / 2
	}
	clean, _ := detect.WithoutBytecode(tree)
	uid := testUIDBase + int(rand.Int32N(testUIDSpan))
	job := wrapper.Job{
		Mode:          wrapper.ModePytest,
		UIDSplit:      !req.NoUIDSplit,
		TestUID:       uid,
		TimeoutMillis: testTimeout.Milliseconds(),
		OutputLimit:   outputLimit,
		JUnitLimit:    junitLimit,
		ProcLimit:     int(max(req.Limits.Pids-procReserve, req.Limits.Pids/2)),
	}
	if req.Command != nil {
		job.Mode, job.Command = wrapper.ModeCommand, req.Command
	} else {
		job.TwinJob = tj
	}
	for _, c := range canaries {
		job.Canaries = append(job.Canaries, c.Token)
	}
	job.SourceDir = detect.SourceDir(cmp.Or(req.Base, req.Repo))
	job.Collected = req.collected
	job.Proxy = req.proxySocket != ""
	for _, o := range opts {
		o(&job)
	}
	if req.splits() && job.Mode == wrapper.ModePytest && !job.Twins {
		// The grader uid is the test uid's neighbour: both are drawn
		// from a span no other sandbox's tests use at the same time.
		job.Split, job.GraderUID = true, uid+1
	}
	var memoKey string
	if req.memoBase {
		memoKey = g.baseMemoKey(job, req.laid, clean, timeout, req.Limits)
		if r, ok := g.baseRuns.get(memoKey); ok {
			return r, nil
		}
		defer func() {
			if err == nil {
				g.baseRuns.put(memoKey, r)
			}
		}()
	}
	began := time.Now()
	labels := maps.Clone(req.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[sandbox.LabelTree] = treeLabel(req, tree, job)
	sres, err := g.runWrapper(ctx, job, req.laid, clean, timeout, req.Limits, req.proxySocket, labels)
	if err != nil {
		return nil, err
	}
	res := &wrapper.Result{}
	noReport := false
	if derr := json.Unmarshal(sres.Stdout, res); derr != nil || sres.StdoutTruncated {
		// The wrapper did not report: the container died, ran out of memory
		// or was killed at its deadline. Fail closed.
		why := fmt.Sprintf("the sandbox ended without a report (exit %d", sres.ExitCode)
		if sres.TimedOut {
			why += ", killed at the deadline"
		}
		if sres.OOMKilled {
			why += ", out of memory"
		}
		why += ")"
		if msg := strings.TrimSpace(string(sres.Stderr)); msg != "" {
			why += ": " + lastLine(msg)
		}
		res = &wrapper.Result{Error: why, TimedOut: sres.TimedOut}
		noReport = true
	}
	if req.Command != nil {
		return &run{res: res, ev: evaluate.Command(res), wall: time.Since(began), noReport: noReport}, nil
	}
	return &run{res: res, ev: evaluate.Pytest(res), wall: time.Since(began), noReport: noReport}, nil
}

// maskSentinels replaces the sentinels' names in the runner output with
// names that say what they are, for the requester who reads it. Sentinels
// sit in hidden modules, so only their names are replaced, as whole words:
// a neighbour whose name starts with a sentinel's keeps its own.
func maskSentinels(out string, sentinels []wrapper.Sentinel) string {
	for _, s := range sentinels {
		name := "sentinel_must_fail"
		if s.MustPass {
			name = "sentinel_must_pass"
		}
		out = regexp.MustCompile(`\b`+regexp.QuoteMeta(s.Name)+`\b`).ReplaceAllLiteralString(out, name)
	}
	return out
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// runSightings are the canaries a run printed or wrote into its report.
func runSightings(cs []detect.Canary, res *wrapper.Result) []report.CanarySighting {
	return append(canarySightings(cs, res.CanariesSeen, "output"), detect.ScanBytes("junit", res.JUnit, cs)...)
}

// canarySightings maps seen tokens back to their hidden files.
func canarySightings(cs []detect.Canary, tokens []string, where string) []report.CanarySighting {
	var out []report.CanarySighting
	for _, c := range cs {
		if slices.Contains(tokens, c.Token) {
			out = append(out, report.CanarySighting{HiddenFile: c.HiddenFile, Where: where})
		}
	}
	return out
}

// treeLabel is the sandbox.LabelTree of job's run on tree in the grade of
// req.
func treeLabel(req Request, tree *tree.Tree, job wrapper.Job) string {
	switch {
	case job.Twins:
		return "twins"
	case tree == req.Repo:
		return "tested"
	case tree == req.Base:
		return "base"
	}
	return "reference"
}

// runWrapper runs the wrapper in a sandbox on job, with the hidden tests
// and tree streamed in as its input archive, for at most timeout, its
// container labelled with labels and with the job's mode unless labels
// name another.
func (g *Grader) runWrapper(ctx context.Context, job wrapper.Job, hidden, tree *tree.Tree, timeout time.Duration, limits sandbox.Limits, proxySocket string, labels map[string]string) (sandbox.Result, error) {
	pr, pw := io.Pipe()
	inputErr := make(chan error, 1)
	go func() {
		err := writeInput(pw, job, hidden, tree)
		pw.CloseWithError(err)
		inputErr <- err
	}()
	defer pr.Close()
	labels = maps.Clone(labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if labels[sandbox.LabelMode] == "" {
		labels[sandbox.LabelMode] = job.Mode
	}
	sres, err := g.sb.Run(ctx, sandbox.Spec{
		Image:       g.image,
		Entrypoint:  []string{wrapper.BinaryPath},
		Input:       pr,
		Timeout:     timeout,
		Limits:      limits,
		UIDSplit:    job.UIDSplit,
		TestUID:     job.TestUID,
		StdoutLimit: stdoutLimit,
		StderrLimit: stderrLimit,
		ProxySocket: proxySocket,
		Labels:      labels,
		Runtime:     g.runtime,
	})
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("run sandbox: %w", err)
	}
	pr.Close() // unblocks the writer if the sandbox stopped reading
	if err := <-inputErr; err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return sandbox.Result{}, fmt.Errorf("write the sandbox's input: %w", err)
	}
	return sres, nil
}

// wantOfUnavailable says on rep which requirements its environment could
// not install, and turns a grade whose hidden tests failed for want of a
// module (fail, invalid_task) into an error naming that import: the
// tests could not judge the code, which is not the code's failure.
// Anything else about a package that could not be had leaves the grade as
// it was.
func wantOfUnavailable(rep *report.Report) {
	env := rep.Environment
	if env == nil || len(env.Unavailable) == 0 {
		return
	}
	rep.Reasons = append(rep.Reasons, "the environment lacks what could not be installed: "+strings.Join(env.Unavailable, "; "))
	if rep.Verdict != report.VerdictFail && rep.Verdict != report.VerdictInvalidTask {
		return
	}
	var mods []string
	for _, m := range evaluate.MissingModules(rep.Output) {
		mods = append(mods, strconv.Quote(m))
	}
	if len(mods) == 0 {
		return
	}
	rep.Verdict = report.VerdictError
	rep.Reasons = append(rep.Reasons, fmt.Sprintf("hidden tests failed for want of the import %s, which the environment could not install: not a judgement of the code", strings.Join(mods, ", ")))
}

package grader

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// DefaultRegressionBudget bounds each run of a regression run when its
// request names no budget.
const DefaultRegressionBudget = 10 * time.Minute

// RegressRequest is one regression run: the base commit's own test suite
// run on the base and on the pull request's code.
type RegressRequest struct {
	// Repo is the pull request's tree; Base the base commit's.
	Repo, Base *tree.Tree
	// Paths, when set, are the suite's paths (files or directories,
	// relative to the tree's root) given to pytest; otherwise pytest
	// finds the tests by the repository's configuration.
	Paths []string
	// Budget bounds each run (the base's, the pull request's, the rerun
	// of the regressed tests); DefaultRegressionBudget when zero.
	Budget time.Duration
	// Limits bound each sandbox; sandbox.DefaultLimits when zero.
	Limits sandbox.Limits
	// Python and Mirror pick the environment as a grade's do.
	Python string
	Mirror bool
	// NoUIDSplit runs the suite as the wrapper's uid, for runtimes
	// without SETUID.
	NoUIDSplit bool
	// Labels are added to every sandbox container of the run.
	Labels map[string]string
}

// suiteConfigFiles are the files of a repository's pytest configuration:
// a regression run takes them from the base with its test files, so the
// pull request's edits to them (an addopts that deselects a test) do not
// change what the suite checks.
var suiteConfigFiles = []string{"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"}

// SuiteTree is the tree a regression run runs the base's suite on: the
// pull request's files but its test files (detect.IsTestFile) and pytest
// configuration, which are the base's. A test file the pull request added
// is not in it, nor one it removed missing from it.
func SuiteTree(base, head *tree.Tree) (*tree.Tree, error) {
	suite := func(p string) bool {
		return detect.IsTestFile(p) || (!strings.Contains(p, "/") && slices.Contains(suiteConfigFiles, p))
	}
	var files []tree.File
	for _, f := range head.Files {
		if !suite(f.Path) {
			files = append(files, f)
		}
	}
	for _, f := range base.Files {
		if suite(f.Path) {
			files = append(files, f)
		}
	}
	return tree.New(files)
}

// Regress runs the base's own test suite on the base and on the pull
// request's code (SuiteTree), at once, each in a fresh sandbox of the
// grade's kind, and then the tests that regressed once more, alone, on the
// pull request: those that pass then are flaky. It returns an error for
// bad input or when the sandbox engine fails; a suite that cannot run is
// a report with verdict error saying why.
func (g *Grader) Regress(ctx context.Context, req RegressRequest) (*report.Regressions, error) {
	began := time.Now()
	if req.Repo == nil || req.Base == nil {
		return nil, errors.New("regress: the pull request's tree and the base's are required")
	}
	for _, p := range req.Paths {
		if err := tree.CheckPath(strings.TrimSuffix(p, "/")); err != nil || strings.HasPrefix(p, "-") {
			return nil, fmt.Errorf("regress: suite path %q: want a relative path inside the repository, such as tests/", p)
		}
	}
	if req.Budget <= 0 {
		req.Budget = DefaultRegressionBudget
	}
	if req.Limits == (sandbox.Limits{}) {
		req.Limits = sandbox.DefaultLimits
	}
	suiteTree, err := SuiteTree(req.Base, req.Repo)
	if err != nil {
		return nil, fmt.Errorf("regress: the suite's tree: %w", err)
	}
	rep := &report.Regressions{Paths: req.Paths, Budget: req.Budget.Seconds(), RepoDigest: req.Repo.Digest(), BaseDigest: req.Base.Digest(),
		Image: g.imageID, Runtime: g.runtimeName(), Regressed: []string{}}
	in := g
	var proxySocket string
	if g.envs != nil {
		p, err := g.envs.Prepare(ctx, environment.Request{Repo: req.Repo, Base: req.Base, Python: req.Python, Mirror: req.Mirror, Labels: req.Labels})
		if err != nil {
			return nil, fmt.Errorf("regress: environment: %w", err)
		}
		rep.Environment = p.Environment
		if p.Failure != "" {
			rep.Verdict = report.VerdictError
			rep.Reasons = []string{"the suite's environment could not be built: " + p.Failure}
			rep.DurationSeconds = time.Since(began).Seconds()
			return rep, nil
		}
		in = &Grader{sb: g.sb, image: p.Image, imageID: p.ImageID, runtime: g.runtime, defaultRuntime: g.defaultRuntime, suiteRuns: g.suiteRuns}
		rep.Image = p.ImageID
		proxySocket = p.ProxySocket
	} else if req.Python != "" && req.Python != sandbox.DefaultPython {
		return nil, fmt.Errorf("regress: python %s needs dependency environments, which this grader was not given", req.Python)
	}
	source := detect.SourceDir(req.Base)
	type result struct {
		s   suiteRun
		err error
	}
	// both runs the suite on the base and on the pull request at once,
	// with extra options before the paths.
	both := func(extra []string) (base, pr suiteRun, err error) {
		baseDone := make(chan result, 1)
		go func() {
			s, err := in.runSuite(ctx, req, req.Base, source, extra, req.Paths, proxySocket, "base")
			baseDone <- result{s, err}
		}()
		pr, prErr := in.runSuite(ctx, req, suiteTree, source, extra, req.Paths, proxySocket, "tested")
		b := <-baseDone
		return b.s, pr, cmp.Or(b.err, prErr)
	}
	var (
		b     result
		pr    suiteRun
		extra []string
	)
	if b.s, pr, err = both(nil); err != nil {
		return nil, err
	}
	if why := refusedConfig(b.s); why != "" {
		// The repository's addopts ask for what this environment lacks
		// (--cov without pytest-cov; --strict-config with pytest-asyncio's
		// options and no pytest-asyncio): the suite runs again without its
		// addopts, the same on both.
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("pytest refused the repository's configuration in this environment (%s): the suite ran without its addopts", why))
		extra = []string{"-o", "addopts="}
		if b.s, pr, err = both(extra); err != nil {
			return nil, err
		}
	}
	rep.BaseSeconds, rep.PRSeconds, rep.BaseReused = b.s.seconds, pr.seconds, b.s.reused
	rep.Base, rep.PR = report.CountSuite(b.s.outcomes), report.CountSuite(pr.outcomes)
	if b.s.timedOut {
		rep.TimedOut = append(rep.TimedOut, "base")
	}
	if pr.timedOut {
		rep.TimedOut = append(rep.TimedOut, "pr")
	}
	rep.Output, rep.OutputTruncated = pr.output, pr.outputTruncated
	defer func() { rep.DurationSeconds = time.Since(began).Seconds() }()
	if why := b.s.unusable(); why != "" {
		rep.Verdict = report.VerdictError
		rep.Reasons = append(rep.Reasons, "the suite could not be compared: on the base, "+why)
		if b.s.output != "" {
			rep.Output = "The base's run:\n" + b.s.output
		}
		return rep, nil
	}
	change := evaluate.CompareSuite(b.s.outcomes, pr.outcomes)
	rep.FailingOnBase, rep.Fixed = len(change.FailingOnBase), change.Fixed
	rep.Changed = evaluate.SplitChanged(&change, detect.ChangedTestsOf(req.Base, req.Repo).Changed)
	if why := pr.unusable(); why != "" && !pr.timedOut {
		// The suite ran on the base and not at all with the pull request:
		// every test the base passed is missing, and the reason says why.
		rep.Reasons = append(rep.Reasons, "with the pull request, "+why)
	}
	if pr.timedOut {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("with the pull request, the suite did not finish within its budget of %s (on the base it took %.0fs)", req.Budget, b.s.seconds))
	}
	if args := evaluate.RerunArgs(change.Regressed); len(args) > 0 && len(change.Missing) < len(change.Regressed) && !pr.timedOut {
		again, err := in.runSuite(ctx, req, suiteTree, source, extra, args, proxySocket, "tested")
		if err != nil {
			return nil, err
		}
		if again.unusable() == "" {
			rep.Flaky = evaluate.SplitFlaky(&change, again.outcomes)
		}
	}
	rep.Regressed = change.Regressed
	rep.Verdict = report.VerdictPass
	if len(rep.Regressed) > 0 {
		rep.Verdict = report.VerdictFail
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("%d test(s) that passed on the base fail with the pull request", len(rep.Regressed)))
	}
	rep.Cut()
	return rep, nil
}

// refusedConfig says what pytest refused in s, a run that exited 4
// (usage or configuration): the options of "unrecognized arguments" (an
// addopts --cov without pytest-cov), or its first ERROR line (an addopts
// --strict-config meeting an option of a plugin the environment lacks);
// "" for any other run.
func refusedConfig(s suiteRun) string {
	if s.exit != 4 {
		return ""
	}
	first := ""
	for _, l := range strings.Split(s.output, "\n") {
		if _, opts, ok := strings.Cut(l, "error: unrecognized arguments: "); ok {
			return strings.TrimSpace(opts)
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "ERROR: "); ok && first == "" {
			first = rest
		}
	}
	return first
}

// suiteRun is one run of a repository's suite.
type suiteRun struct {
	outcomes        map[string]report.Outcome
	seconds         float64
	timedOut        bool
	output          string
	outputTruncated bool
	// reused says the run is one kept from an earlier regression run of
	// the same base (suiteRuns).
	reused bool
	// exit is pytest's exit status; junitErr why its report is unusable.
	exit     int
	junitErr error
	err      string // the wrapper's or the sandbox's failure
}

// unusable says why the run tells nothing of the suite's tests, or "".
func (s suiteRun) unusable() string {
	switch {
	case s.timedOut:
		return "the suite did not finish within its budget"
	case s.err != "":
		return s.err
	case s.junitErr != nil:
		return fmt.Sprintf("pytest exited %d without a usable report (%v)", s.exit, s.junitErr)
	case s.exit == 4:
		return "pytest was given arguments or configuration it does not accept (exit 4); the output says which"
	case s.exit == 5 || len(s.outcomes) == 0:
		return "pytest collected no tests"
	}
	return ""
}

// suiteCommand is pytest run on the repository's own suite: its
// configuration from the tree, node ids written to a JUnit report whose
// cases name their module's file (junit_family=xunit1), a module that
// fails to collect reported and the rest run. source, the tree's source
// directory, is first on the path, as the grade's runs have it.
func suiteCommand(source string, extra, args []string) []string {
	pythonPath := wrapper.RepoDir
	if source != "" {
		pythonPath = path.Join(wrapper.RepoDir, source) + ":" + wrapper.RepoDir
	}
	cmd := []string{"/usr/bin/env", "PYTHONPATH=" + pythonPath, "PYTHONDONTWRITEBYTECODE=1",
		"/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
		"--junitxml=/proc/self/fd/3", "--continue-on-collection-errors", "-q", "-rfE"}
	cmd = append(cmd, extra...)
	if len(args) > 0 {
		cmd = append(cmd, "--")
		cmd = append(cmd, args...)
	}
	return cmd
}

// runSuite runs the suite on t (args: pytest's arguments) in a fresh
// sandbox labelled as which tree it runs.
func (g *Grader) runSuite(ctx context.Context, req RegressRequest, t *tree.Tree, source string, extra, args []string, proxySocket, which string) (suiteRun, error) {
	timeout := req.Budget
	ctx, cancel := context.WithTimeout(ctx, timeout+engineGrace)
	defer cancel()
	testTimeout := max(timeout-reportMargin, timeout/2)
	clean, _ := detect.WithoutBytecode(t)
	job := wrapper.Job{
		Mode:          wrapper.ModeCommand,
		Command:       suiteCommand(source, extra, args),
		UIDSplit:      !req.NoUIDSplit,
		TestUID:       testUIDBase + int(rand.Int32N(testUIDSpan)),
		TimeoutMillis: testTimeout.Milliseconds(),
		OutputLimit:   outputLimit,
		JUnitLimit:    junitLimit,
		ProcLimit:     int(max(req.Limits.Pids-procReserve, req.Limits.Pids/2)),
		Proxy:         proxySocket != "",
	}
	labels := maps.Clone(req.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[sandbox.LabelTree] = which
	labels[sandbox.LabelMode] = ModeRegressions
	// The base's run is the same at every push against the same base:
	// one that ended with a report is kept for the next (suiteRuns).
	var key string
	if which == "base" && g.suiteRuns != nil {
		job.TestUID = 0
		b, _ := json.Marshal(struct {
			Image, ImageID, Runtime, Base string
			Job                           wrapper.Job
			Timeout                       time.Duration
			Limits                        sandbox.Limits
		}{g.image, g.imageID, g.runtime, clean.Digest(), job, timeout, req.Limits})
		sum := sha256.Sum256(b)
		key = hex.EncodeToString(sum[:])
		job.TestUID = testUIDBase + int(rand.Int32N(testUIDSpan))
		if s, ok := g.suiteRuns.load(key); ok {
			s.reused = true
			return s, nil
		}
	}
	s, err := g.runSuiteOnce(ctx, job, t, clean, timeout, req.Limits, proxySocket, labels)
	if err == nil && key != "" && !s.timedOut && s.err == "" {
		g.suiteRuns.store(key, s)
	}
	return s, err
}

// runSuiteOnce runs job, a suite's run on t, in a fresh sandbox.
func (g *Grader) runSuiteOnce(ctx context.Context, job wrapper.Job, t, clean *tree.Tree, timeout time.Duration, limits sandbox.Limits, proxySocket string, labels map[string]string) (suiteRun, error) {
	sres, err := g.runWrapper(ctx, job, nil, clean, timeout, limits, proxySocket, labels)
	if err != nil {
		return suiteRun{}, err
	}
	res := &wrapper.Result{}
	if derr := json.Unmarshal(sres.Stdout, res); derr != nil || sres.StdoutTruncated {
		why := fmt.Sprintf("the sandbox ended without a report (exit %d", sres.ExitCode)
		if sres.OOMKilled {
			why += ", out of memory"
		}
		if sres.TimedOut {
			return suiteRun{timedOut: true, seconds: timeout.Seconds()}, nil
		}
		return suiteRun{err: why + ")"}, nil
	}
	s := suiteRun{seconds: res.Seconds, timedOut: res.TimedOut, output: string(res.Output), outputTruncated: res.OutputTruncated, exit: res.ExitCode}
	if res.Error != "" {
		s.err = "the run failed: " + res.Error
		return s, nil
	}
	if res.TimedOut {
		return s, nil
	}
	cases, err := evaluate.ParseJUnit(res.JUnit)
	if err != nil {
		s.junitErr = err
		return s, nil
	}
	s.outcomes = evaluate.SuiteOutcomes(cases, func(p string) bool { _, ok := t.Lookup(p); return ok })
	return s, nil
}

// ModeRegressions is the sandbox.LabelMode of a regression run's
// sandboxes: the wrapper runs them in command mode, but an operator
// listing containers tells them from a grade's.
const ModeRegressions = "regressions"

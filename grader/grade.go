package grader

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/testfirst-app/testfirst/grader/wrapper"
	"github.com/testfirst-app/testfirst/sandbox"
)

// Sandbox runs one sealed container. Run returns an error only when the
// container engine failed; anything the program in the container did is in
// the Result.
type Sandbox interface {
	Run(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)
}

var _ Sandbox = (*sandbox.Docker)(nil)

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
	// engineGrace is how long past a grade's deadline the engine calls that
	// kill and remove its sandboxes may take.
	engineGrace = 30 * time.Second
)

// Grader grades trees against hidden tests in sandboxes.
type Grader struct {
	sb      Sandbox
	image   string
	imageID string
}

// New returns a Grader that runs image (by id or reference; imageID is
// reported in every grade) through sb.
func New(sb Sandbox, image, imageID string) *Grader {
	return &Grader{sb: sb, image: image, imageID: imageID}
}

// Request is one grade.
type Request struct {
	// Repo is the tree under test.
	Repo *Tree
	// Hidden holds the hidden test files.
	Hidden *Tree
	// Base, when set, enables the base check and touched_tests.
	Base *Tree
	// Reference, when set, is a patch against Base that must make every
	// hidden test pass.
	Reference []byte
	// Command, when set, replaces pytest: trust is low.
	Command []string
	// NoUIDSplit runs the tests as the wrapper's uid, for runtimes without
	// SETUID: trust is best_effort at most.
	NoUIDSplit bool
	// Timeout bounds the whole grade; DefaultTimeout when zero.
	Timeout time.Duration
	// Limits bound each sandbox; sandbox.DefaultLimits when zero.
	Limits sandbox.Limits
	// TestsDigest, when set, is reported as the digest of the hidden tests
	// (the store's version digest); otherwise Hidden's tree digest is.
	TestsDigest string
}

// Grade grades req and returns its report. It returns an error for bad
// input or when the sandbox engine fails; everything the code under test
// does ends in a report, never an error.
func (g *Grader) Grade(ctx context.Context, req Request) (*Report, error) {
	began := time.Now()
	if req.Repo == nil || req.Hidden == nil {
		return nil, errors.New("grade: a repo tree and hidden tests are required")
	}
	if len(req.Hidden.Files) == 0 {
		return nil, errors.New("grade: the hidden tests directory is empty")
	}
	if req.Reference != nil && req.Base == nil {
		return nil, errors.New("grade: a reference patch needs the base tree (--base)")
	}
	if req.Timeout <= 0 {
		req.Timeout = DefaultTimeout
	}
	if req.Limits == (sandbox.Limits{}) {
		req.Limits = sandbox.DefaultLimits
	}
	var refTree *Tree
	if req.Reference != nil {
		var err error
		if refTree, err = ApplyPatch(req.Base, req.Reference); err != nil {
			return nil, fmt.Errorf("reference patch does not apply to the base tree: %w", err)
		}
	}
	// Every sandbox is killed at the grade's deadline and reports; the
	// context lives a little longer so the engine calls that kill, read and
	// remove the containers are not cut short.
	deadline := began.Add(req.Timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(engineGrace))
	defer cancel()

	canaries := Canaries(req.Hidden)
	rep := &Report{
		Image:         g.imageID,
		TestsDigest:   cmp.Or(req.TestsDigest, req.Hidden.Digest()),
		RepoDigest:    req.Repo.Digest(),
		TamperSignals: TamperSignals(req.Repo),
		Contamination: ScanTree(req.Repo, canaries),
	}
	if req.Base != nil {
		rep.TouchedTests = TouchedTests(req.Base, req.Repo)
	}

	var prRun, baseRun, refRun *run
	group, gctx := errgroup.WithContext(ctx)
	start := func(dst **run, tree *Tree) {
		group.Go(func() error {
			r, err := g.run(gctx, req, tree, canaries, deadline)
			*dst = r
			return err
		})
	}
	start(&prRun, req.Repo)
	if req.Base != nil {
		start(&baseRun, req.Base)
	}
	if refTree != nil {
		start(&refRun, refTree)
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}

	pr := prRun.ev
	rep.Tests = pr.tests
	rep.Counts = count(pr.tests)
	rep.Failed = pr.notPassed()
	rep.Sentinels = pr.sentinels
	rep.Runner = prRun.res.Runner
	rep.ExitCode = prRun.res.ExitCode
	rep.Output = maskSentinels(string(prRun.res.Output), prRun.res.Sentinels)
	rep.OutputTruncated = prRun.res.OutputTruncated
	rep.Isolation = Isolation{
		UIDSplit:   prRun.res.Isolation.Proven,
		UID:        prRun.res.Isolation.UID,
		GID:        prRun.res.Isolation.GID,
		CapEff:     prRun.res.Isolation.CapEff,
		CapPrm:     prRun.res.Isolation.CapPrm,
		CapAmb:     prRun.res.Isolation.CapAmb,
		NoNewPrivs: prRun.res.Isolation.NoNewPrivs,
	}
	rep.Contamination = append(rep.Contamination, canarySightings(canaries, prRun.res.CanariesSeen, "output")...)
	rep.Contamination = append(rep.Contamination, ScanBytes("junit", prRun.res.JUnit, canaries)...)
	rep.Contamination = sortSightings(rep.Contamination)
	rep.Contaminated = len(rep.Contamination) > 0

	switch {
	case req.Command != nil:
		rep.Trust = TrustLow
	case rep.Isolation.UIDSplit && !req.NoUIDSplit:
		rep.Trust = TrustIsolated
	default:
		rep.Trust = TrustBestEffort
	}

	var invalid, problems []string
	if baseRun != nil {
		b := baseRun.ev
		b.tampered = append(b.tampered, describeStrong(b.evidence)...)
		rep.BaseCheck = &BaseCheck{Counts: count(b.tests), AllPass: b.allPassed() && len(b.problems) == 0 && len(b.tampered) == 0}
		for _, t := range b.tests {
			if t.Outcome == OutcomePassed {
				rep.BaseCheck.GuardTests = append(rep.BaseCheck.GuardTests, t.ID)
			}
		}
		if errs := slices.Concat(b.tampered, b.problems); len(errs) > 0 {
			rep.BaseCheck.Error = strings.Join(errs, "; ")
			problems = append(problems, "base check: "+rep.BaseCheck.Error)
		}
		if rep.BaseCheck.AllPass {
			invalid = append(invalid, "every hidden test already passes on the base tree")
		}
	}
	if refRun != nil {
		r := refRun.ev
		r.tampered = append(r.tampered, describeStrong(r.evidence)...)
		rep.ReferenceCheck = &ReferenceCheck{Counts: count(r.tests), Failed: r.notPassed(), AllPass: r.allPassed() && len(r.problems) == 0 && len(r.tampered) == 0}
		if errs := slices.Concat(r.tampered, r.problems); len(errs) > 0 {
			// The reference run could not be judged: that says nothing
			// about the task, only that the grade cannot be trusted.
			rep.ReferenceCheck.Error = strings.Join(errs, "; ")
			problems = append(problems, "reference check: "+rep.ReferenceCheck.Error)
		} else if !rep.ReferenceCheck.AllPass {
			invalid = append(invalid, fmt.Sprintf("the reference patch does not pass every hidden test (%d of %d failed)", len(rep.ReferenceCheck.Failed), len(r.tests)))
		}
	}
	problems = slices.Concat(pr.problems, problems)

	// evidence gathers what the runs say about the runner itself, beside
	// the outcomes: strong evidence makes the grade tampered.
	var evidence evidenceSet
	for _, e := range pr.evidence {
		evidence.merge(e)
	}

	rep.Evidence = evidence.list()
	rep.Verdict, rep.Reasons = judge(verdictInputs{
		invalid:      invalid,
		tampered:     pr.tampered,
		evidence:     rep.Evidence,
		contaminated: rep.Contamination,
		problems:     problems,
		failed:       len(rep.Failed),
		total:        len(pr.tests),
		allPassed:    pr.allPassed(),
	})
	rep.Reasons = append(rep.Reasons, pr.notes...)
	rep.DurationSeconds = time.Since(began).Seconds()
	rep.normalize()
	return rep, nil
}

// run is one sandboxed test run and its evaluation.
type run struct {
	res *wrapper.Result
	ev  *evaluation
}

// run runs the hidden tests against tree in a fresh sandbox.
func (g *Grader) run(ctx context.Context, req Request, tree *Tree, canaries []Canary, deadline time.Time) (*run, error) {
	timeout := time.Until(deadline)
	testTimeout := timeout - reportMargin
	if testTimeout < timeout/2 {
		testTimeout = timeout / 2
	}
	clean, _ := WithoutBytecode(tree)
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
	}
	for _, c := range canaries {
		job.Canaries = append(job.Canaries, c.Token)
	}
	pr, pw := io.Pipe()
	inputErr := make(chan error, 1)
	go func() {
		err := writeInput(pw, job, req.Hidden, clean)
		pw.CloseWithError(err)
		inputErr <- err
	}()
	defer pr.Close()
	sres, err := g.sb.Run(ctx, sandbox.Spec{
		Image:       g.image,
		Entrypoint:  []string{wrapper.BinaryPath},
		Input:       pr,
		Timeout:     timeout,
		Limits:      req.Limits,
		UIDSplit:    job.UIDSplit,
		TestUID:     uid,
		StdoutLimit: stdoutLimit,
		StderrLimit: stderrLimit,
	})
	if err != nil {
		return nil, fmt.Errorf("run sandbox: %w", err)
	}
	pr.Close() // unblocks the writer if the sandbox stopped reading
	if err := <-inputErr; err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return nil, fmt.Errorf("write the sandbox's input: %w", err)
	}
	res := &wrapper.Result{}
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
	}
	if req.Command != nil {
		return &run{res: res, ev: evaluateCommand(res)}, nil
	}
	ev := evaluatePytest(res)
	var set evidenceSet
	runtimeEvidence(res, &set)
	ev.evidence = set.list()
	return &run{res: res, ev: ev}, nil
}

// maskSentinels replaces the sentinels' random names in the runner output
// with names that say what they are, for the requester who reads it.
func maskSentinels(out string, sentinels []wrapper.Sentinel) string {
	var pairs []string
	for _, s := range sentinels {
		name := "sentinel_must_fail"
		if s.MustPass {
			name = "sentinel_must_pass"
		}
		file := strings.ReplaceAll(s.ClassName, ".", "/") + ".py"
		pairs = append(pairs, file, "testfirst_sentinels.py", s.ClassName, "testfirst_sentinels", s.Name, name)
	}
	return strings.NewReplacer(pairs...).Replace(out)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// canarySightings maps seen tokens back to their hidden files.
func canarySightings(cs []Canary, tokens []string, where string) []CanarySighting {
	var out []CanarySighting
	for _, c := range cs {
		if slices.Contains(tokens, c.Token) {
			out = append(out, CanarySighting{HiddenFile: c.HiddenFile, Where: where})
		}
	}
	return out
}

func count(tests []TestResult) Counts {
	c := Counts{Total: len(tests)}
	for _, t := range tests {
		switch t.Outcome {
		case OutcomePassed:
			c.Passed++
		case OutcomeFailed:
			c.Failed++
		case OutcomeSkipped:
			c.Skipped++
		default:
			c.Errors++
		}
	}
	return c
}

// normalize makes every list field an empty list rather than null, so the
// JSON contract never changes shape.
func (r *Report) normalize() {
	nonNil := func(s *[]string) {
		if *s == nil {
			*s = []string{}
		}
	}
	nonNil(&r.Reasons)
	nonNil(&r.Failed)
	nonNil(&r.TouchedTests)
	nonNil(&r.Runner)
	if r.Tests == nil {
		r.Tests = []TestResult{}
	}
	if r.TamperSignals == nil {
		r.TamperSignals = []TamperSignal{}
	}
	if r.Contamination == nil {
		r.Contamination = []CanarySighting{}
	}
	if r.Evidence == nil {
		r.Evidence = []Evidence{}
	}
	for i := range r.Evidence {
		nonNil(&r.Evidence[i].Examples)
	}
	if r.BaseCheck != nil {
		nonNil(&r.BaseCheck.GuardTests)
	}
	if r.ReferenceCheck != nil {
		nonNil(&r.ReferenceCheck.Failed)
	}
}

// verdictInputs is what a verdict is decided from.
type verdictInputs struct {
	invalid      []string // why the task itself is invalid
	tampered     []string // why the runner was bent (sentinels, report checks)
	evidence     []Evidence
	contaminated []CanarySighting
	problems     []string // why the run cannot say pass or fail
	failed       int
	total        int
	allPassed    bool
}

// judge decides the verdict and its reasons, most severe first: an invalid
// task, then a bent runner (wrong sentinels or strong evidence), then
// contamination, then a run that could not be judged, then the outcomes.
// Weak evidence never changes the verdict; it is counted in the reasons.
func judge(in verdictInputs) (Verdict, []string) {
	strong := StrongEvidence(in.evidence)
	var v Verdict
	var reasons []string
	switch {
	case len(in.invalid) > 0:
		v, reasons = VerdictInvalidTask, slices.Clone(in.invalid)
	case len(in.tampered) > 0 || len(strong) > 0:
		v, reasons = VerdictTampered, slices.Clone(in.tampered)
		for _, e := range strong {
			reasons = append(reasons, e.describe())
		}
	case len(in.contaminated) > 0:
		v = VerdictContaminated
		for _, s := range in.contaminated {
			reasons = append(reasons, fmt.Sprintf("the canary of %s appears in %s", s.HiddenFile, s.Where))
		}
	case len(in.problems) > 0:
		v, reasons = VerdictError, slices.Clone(in.problems)
	case !in.allPassed:
		v, reasons = VerdictFail, []string{fmt.Sprintf("%d of %d hidden tests did not pass", in.failed, in.total)}
	default:
		v, reasons = VerdictPass, []string{fmt.Sprintf("all %d hidden tests passed", in.total)}
	}
	if n := WeakSignals(in.evidence); n > 0 {
		reasons = append(reasons, fmt.Sprintf("runtime signals: %d", n))
	}
	return v, reasons
}

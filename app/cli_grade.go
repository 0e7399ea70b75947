package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/sandbox"
)

// DefaultGradeTimeout is the wall clock of a whole grade unless the caller
// sets one.
const DefaultGradeTimeout = grader.DefaultTimeout

// SandboxLimits bound each sandbox of a grade.
type SandboxLimits struct {
	// Memory is in bytes.
	Memory int64
	// CPUs is the CPU quota, in CPUs (1.5 is one and a half).
	CPUs float64
	// Pids is the maximum number of processes and threads.
	Pids int64
}

// DefaultSandboxLimits returns the limits of a grade unless configured
// otherwise.
func DefaultSandboxLimits() SandboxLimits {
	l := sandbox.DefaultLimits
	return SandboxLimits{Memory: l.Memory, CPUs: float64(l.NanoCPUs) / 1e9, Pids: l.Pids}
}

// sandboxLimits returns the engine's limits: l's memory, CPUs and pids, the
// defaults for everything else; the defaults alone when l is zero.
func (l SandboxLimits) sandboxLimits() sandbox.Limits {
	s := sandbox.DefaultLimits
	if l == (SandboxLimits{}) {
		return s
	}
	s.Memory, s.NanoCPUs, s.Pids = l.Memory, int64(l.CPUs*1e9), l.Pids
	return s
}

// LocalTree is a directory of this host read into memory, to be graded or
// graded against. The zero LocalTree is no tree.
type LocalTree struct{ tree *grader.Tree }

// ReadLocalTree reads dir into memory. It never follows a symlink inside
// dir (dir itself may be one), leaves out any .git directory and refuses
// trees over the grader's size limits.
func ReadLocalTree(dir string) (LocalTree, error) {
	t, err := grader.LoadTree(dir)
	if err != nil {
		return LocalTree{}, err
	}
	return LocalTree{tree: t}, nil
}

// ApprovedTests names a ticket's approved version of hidden tests in the
// store: the grader reads it with its identity and verifies Digest.
type ApprovedTests struct {
	// StoreURL is the store: file://PATH or gs://bucket/prefix.
	StoreURL string
	Ticket   TestsTicket
	// Digest is the approved version's digest, sha256:….
	Digest string
}

// LocalGradeRequest is one grade of trees on this host.
type LocalGradeRequest struct {
	// Repo is the tree under test (required).
	Repo LocalTree
	// Tests holds the hidden tests; give it or Approved, not both.
	Tests LocalTree
	// Approved reads the hidden tests from the store instead of Tests.
	Approved *ApprovedTests
	// Base, when set, enables the base check and touched_tests.
	Base LocalTree
	// Reference, when set, is a patch against Base that must pass every
	// hidden test. With Approved and Base, the version's reference patch is
	// used when Reference is nil.
	Reference []byte
	// Command, when set, replaces pytest: trust is low.
	Command []string
	// NoUIDSplit runs the tests as the wrapper's uid: trust is best_effort
	// at most.
	NoUIDSplit bool
	// Timeout bounds the whole grade; DefaultGradeTimeout when zero.
	Timeout time.Duration
	// Limits bound each sandbox; DefaultSandboxLimits when zero.
	Limits SandboxLimits
	// TestStrength, with Base, also finds flaky hidden tests and, with a
	// reference patch, grades mutants of it, as the base check of a
	// version does.
	TestStrength bool
}

// GradeLocal reads req's approved tests from the store when it names them,
// connects to the sandbox engine (building the grader image if it is
// missing) and grades req. It returns an error for bad input, a store that
// refuses the version, or an engine failure; whatever the code under test
// does ends in the report.
func GradeLocal(ctx context.Context, cfg GradingConfig, req LocalGradeRequest) (*GradeReport, error) {
	if req.Tests.tree != nil && req.Approved != nil {
		return nil, errors.New("grade: hidden tests given both as a tree and as an approved version: give one")
	}
	gr := grader.Request{
		Repo: req.Repo.tree, Hidden: req.Tests.tree, Base: req.Base.tree, Reference: req.Reference,
		Command: req.Command, NoUIDSplit: req.NoUIDSplit, Timeout: req.Timeout, Limits: req.Limits.sandboxLimits(),
	}
	if req.TestStrength {
		gr.TestStrength = &grader.TestStrength{}
	}
	if req.Approved != nil {
		if err := req.Approved.fill(ctx, &gr); err != nil {
			return nil, err
		}
	}
	g, err := OpenGrading(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep, err := g.Grader.Grade(ctx, gr)
	if err != nil {
		return nil, err
	}
	return &GradeReport{report: rep}, nil
}

// fill sets req's hidden tests (and, with a base and no reference, the
// reference patch) from the approved version, verified against a.Digest.
func (a *ApprovedTests) fill(ctx context.Context, req *grader.Request) error {
	r, closeFn, err := OpenStoreReader(ctx, a.StoreURL)
	if err != nil {
		return err
	}
	defer closeFn()
	content, _, err := r.Open(ctx, a.Ticket.ticket, a.Digest)
	if err != nil {
		return err
	}
	if req.Hidden, err = content.HiddenTree(); err != nil {
		return err
	}
	req.TestsDigest = a.Digest
	if req.Base != nil && req.Reference == nil && len(content.Reference) > 0 {
		req.Reference = content.Reference
	}
	return nil
}

// GradeReport is the outcome of a grade, as the command line prints it.
type GradeReport struct{ report *grader.Report }

// Passed reports whether the verdict is pass.
func (r *GradeReport) Passed() bool { return r.report.Verdict == grader.VerdictPass }

// WriteJSON writes the report in its JSON contract, indented.
func (r *GradeReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.report)
}

// WriteText writes a short table of the report for people, never the
// runner's output.
func (r *GradeReport) WriteText(w io.Writer) error { return grader.WriteText(w, r.report) }

package pipeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
)

// VersionCheck is the base check of one version of hidden tests, run
// before anyone decides on it: which tests exist, which already pass on
// the base commit, and whether the reference patch passes them all. It is
// stored as the version's check_result and shown on the card.
type VersionCheck struct {
	// Tests are the hidden test ids, as the implementer will see them.
	Tests []string `json:"tests"`
	// Base is the run on the base commit.
	Base report.BaseCheck `json:"base"`
	// Reference is the run with the reference patch, when there is one.
	Reference *report.ReferenceCheck `json:"reference,omitempty"`
	// Trust is how far the base run can be believed.
	Trust report.Trust `json:"trust"`
	// Error says why the check could not run, if it could not.
	Error string `json:"error,omitempty"`
	// Twins are the twins of the version's tests as the check made them:
	// with a reference patch, the ones it passed are invalid and are never
	// used to grade a pull request.
	Twins *report.Twins `json:"twins,omitempty"`
}

// TwinExclude lists the hidden tests whose twins must not be used when a
// pull request is graded against this version: twins the reference patch
// passed, and tests the check found flaky. A nil check excludes nothing.
func (c *VersionCheck) TwinExclude() []string {
	if c == nil {
		return nil
	}
	var ids []string
	if c.Twins != nil {
		ids = append(ids, c.Twins.InvalidTwins...)
	}
	for _, id := range c.Base.Flaky {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// SkipsHere lists the hidden tests that skip in the grader's environment:
// on the base and, with a reference patch, with it too. A pull request's
// grade reports them skipped without counting them, so they check
// nothing: the requester approves them knowingly, or has them fixed.
func (c *VersionCheck) SkipsHere() []string {
	if c == nil {
		return nil
	}
	var ids []string
	for _, id := range c.Base.Skipped {
		if c.Reference == nil || slices.Contains(c.Reference.Skipped, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Problems lists why the version is not a valid task, in counts only (it
// is posted on the issue); empty when it is valid.
func (c VersionCheck) Problems() []string {
	var ps []string
	if c.Error != "" {
		ps = append(ps, "the base check could not run (the approval card says why)")
	}
	if len(c.Tests) == 0 && c.Error == "" {
		ps = append(ps, "no hidden test was found")
	}
	if n := len(c.Base.Broken); n > 0 {
		ps = append(ps, fmt.Sprintf("%d hidden test problem(s) no implementation can fix, such as a missing helper or fixture (the approval card says which)", n))
	}
	if c.Base.AllPass && len(c.Tests) > 0 {
		if len(c.Base.Skipped) > 0 {
			ps = append(ps, fmt.Sprintf("all %d tests already pass or skip on the base commit", len(c.Tests)))
		} else {
			ps = append(ps, fmt.Sprintf("all %d tests already pass on the base commit", len(c.Tests)))
		}
	}
	if r := c.Reference; r != nil && !r.AllPass {
		ps = append(ps, fmt.Sprintf("the reference patch fails %d of %d tests", len(r.Failed), r.Counts.Total))
	}
	return ps
}

// Valid reports whether the version can be offered for approval.
func (c VersionCheck) Valid() bool { return len(c.Problems()) == 0 }

// ParseCheck reads a version's stored check_result: nil when the check
// has not run. It is the one reader of that column.
func ParseCheck(raw []byte) (*VersionCheck, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c VersionCheck
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("read the base check: %w", err)
	}
	return &c, nil
}

// Blocks says, for the approval card, why a checked version cannot be
// approved at all, or "" when it is valid. It follows Problems: a version
// is blocked exactly when it is not Valid. A nil check blocks nothing (the
// card waits for readiness instead).
func (c *VersionCheck) Blocks() string {
	switch {
	case c == nil || c.Valid():
		return ""
	case len(c.Base.Broken) > 0:
		return "Some hidden tests cannot run on the base commit nor on any pull request: " + strings.Join(c.Base.Broken, "; ") + ". Reject this version and say what to fix."
	case c.Base.AllPass && len(c.Tests) > 0 && len(c.Base.Skipped) > 0:
		return "Every hidden test passes or skips on the base commit: these tests cannot tell a fix from no change. Reject this version and say what the tests should check."
	case c.Base.AllPass && len(c.Tests) > 0:
		return "Every hidden test passes on the base commit: these tests cannot tell a fix from no change. Reject this version and say what the tests should check."
	case c.Reference != nil && !c.Reference.AllPass:
		return fmt.Sprintf("The writer's reference patch fails %d of the hidden tests: the tests or the patch are wrong. Reject this version.", len(c.Reference.Failed))
	case c.Error != "":
		return "The base check could not run: " + c.Error + ". Reject this version, or push a new one."
	default:
		return "The base check found no hidden test in this version. Reject it and push tests the grader can run."
	}
}

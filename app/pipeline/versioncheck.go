package pipeline

import (
	"fmt"

	"github.com/testfirst-app/testfirst/grader"
)

// VersionCheck is the base check of one version of hidden tests, run
// before anyone decides on it: which tests exist, which already pass on
// the base commit, and whether the reference patch passes them all. It is
// stored as the version's check_result and shown on the card.
type VersionCheck struct {
	// Tests are the hidden test ids, as the implementer will see them.
	Tests []string `json:"tests"`
	// Base is the run on the base commit.
	Base grader.BaseCheck `json:"base"`
	// Reference is the run with the reference patch, when there is one.
	Reference *grader.ReferenceCheck `json:"reference,omitempty"`
	// Trust is how far the base run can be believed.
	Trust grader.Trust `json:"trust"`
	// Error says why the check could not run, if it could not.
	Error string `json:"error,omitempty"`
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
	if c.Base.AllPass && len(c.Tests) > 0 {
		ps = append(ps, fmt.Sprintf("all %d tests already pass on the base commit", len(c.Tests)))
	}
	if r := c.Reference; r != nil && !r.AllPass {
		ps = append(ps, fmt.Sprintf("the reference patch fails %d of %d tests", len(r.Failed), r.Counts.Total))
	}
	return ps
}

// Valid reports whether the version can be offered for approval.
func (c VersionCheck) Valid() bool { return len(c.Problems()) == 0 }

package report

import (
	"fmt"
	"strings"
)

// Mutation says how many small changes to the reference patch the hidden
// tests notice: each mutant is the reference with one change in a line the
// patch adds (an operator swapped, a constant moved by one, a boolean
// flipped, a returned string changed, a statement deleted). A mutant is
// killed when a hidden test does not pass against it; a survivor is a
// change no hidden test notices.
type Mutation struct {
	// Mutants counts the mutants that ran and were judged.
	Mutants int `json:"mutants"`
	// Killed counts the mutants some hidden test noticed.
	Killed int `json:"killed"`
	// Survivors are the mutants every hidden test passed against.
	Survivors []Survivor `json:"survivors"`
	// Candidates counts the mutants the added lines allow; at most the
	// bound of them are made, spread over the whole patch.
	Candidates int `json:"candidates"`
	// Invalid counts mutants the hidden tests could not import; they are
	// not counted.
	Invalid int `json:"invalid"`
	// NotRun counts mutants left out by the time budget or whose run could
	// not be judged; they are not counted.
	NotRun int `json:"not_run"`
	// Sandboxes is how many sandbox runs the mutants took.
	Sandboxes int `json:"sandboxes"`
	// Seconds is the wall time of the longest mutation sandbox.
	Seconds float64 `json:"seconds"`
	// Error says why the mutation was not measured, if it was not.
	Error string `json:"error,omitempty"`
}

// Survivor is one change to the reference that no hidden test noticed.
type Survivor struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Change says what changed: "< -> <=", "statement deleted", ….
	Change string `json:"change"`
	// Before and After are the line before and after the change.
	Before string `json:"before"`
	After  string `json:"after"`
}

// writeMutation adds a mutation's rows to a text report: its summary, then
// each survivor as "file:line change: after".
func writeMutation(row func(k, v string), rows func(k string, vs []string), m *Mutation) {
	if m == nil {
		return
	}
	v := m.Summary()
	if m.Invalid+m.NotRun > 0 {
		v += fmt.Sprintf(" (%d not counted: %d did not import, %d not run)", m.Invalid+m.NotRun, m.Invalid, m.NotRun)
	}
	row("mutation", v)
	var surv []string
	for _, s := range m.Survivors {
		surv = append(surv, EscapeText(fmt.Sprintf("%s:%d %s: %s", s.File, s.Line, s.Change, strings.TrimSpace(s.After))))
	}
	rows("survivors", surv)
}

// Summary is the sentence the card leads with: "these tests miss 4 of 23
// changes to the reference".
func (m *Mutation) Summary() string {
	switch {
	case m == nil:
		return ""
	case m.Error != "" && m.Mutants == 0:
		return "mutation " + m.Error
	case m.Mutants == 0:
		return "no change to the reference could be tried"
	case len(m.Survivors) == 0:
		return fmt.Sprintf("these tests notice all %d changes to the reference tried", m.Mutants)
	}
	return fmt.Sprintf("these tests miss %d of %d changes to the reference", len(m.Survivors), m.Mutants)
}

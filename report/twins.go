package report

import (
	"fmt"
	"strings"
)

// Twins is what the twin runs of a grade showed. A twin is a hidden test
// with one expectation changed so that a correct, deterministic
// implementation must fail it; it runs in a sandbox of its own, beside the
// grade's run, that cannot tell it is the twin run. A test that passes and
// whose twin passes too was not decided by the code under test: the runner
// was bent, or the answer was read from the test.
type Twins struct {
	// Twinned counts the hidden tests (cases of parametrized tests count
	// one each) whose twin ran and was compared.
	Twinned int `json:"twinned"`
	// Of counts the hidden tests of the grade's run.
	Of int `json:"of"`
	// Untwinnable counts the hidden tests without a compared twin;
	// Untwinned says why for each.
	Untwinnable int       `json:"untwinnable"`
	Untwinned   []TwinGap `json:"untwinned"`
	// Contradictions are the hidden tests that passed while their twin
	// passed too: strong evidence.
	Contradictions []string `json:"contradictions"`
	// InvalidTwins are twins the reference patch passed: they say nothing
	// and were dropped. The service passes their tests as
	// Request.TwinExclude to later grades of the same version.
	InvalidTwins []string `json:"invalid_twins"`
	// Changes say what the twins of the contradicting and invalid tests
	// changed, for the requester only: they quote the hidden tests.
	Changes []TwinChange `json:"changes"`
	// Validated is true when the twins also ran on the reference patch.
	Validated bool `json:"validated"`
	// NotRun says why the twins were not run or not compared, if so.
	NotRun string `json:"not_run,omitempty"`
}

// TwinGap is a hidden test without a compared twin.
type TwinGap struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// TwinChange is what one twin changed.
type TwinChange struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
	Change string `json:"change"`
}

// TwinsNote is the reason a grade carries about its twins, or "".
func TwinsNote(tw *Twins) string {
	if tw == nil || tw.NotRun == "" || tw.Of == 0 {
		return ""
	}
	if tw.Twinned == 0 {
		return "twins: not run (" + tw.NotRun + ")"
	}
	return "twins: " + tw.NotRun
}

// TwinsLine says what the twins showed in one line of text.
func TwinsLine(tw *Twins) string {
	if tw.Twinned == 0 && tw.NotRun != "" {
		return "not run (" + tw.NotRun + ")"
	}
	v := fmt.Sprintf("%d/%d twinned, %d untwinnable", tw.Twinned, tw.Of, tw.Untwinnable)
	if tw.Validated {
		v += ", validated on the reference"
	}
	if n := len(tw.InvalidTwins); n > 0 {
		v += fmt.Sprintf(", %d invalid (the reference passed them)", n)
	}
	if len(tw.Contradictions) > 0 {
		v += "; contradictions: " + strings.Join(tw.Contradictions, ", ")
	} else {
		v += "; no contradiction"
	}
	if tw.NotRun != "" {
		v += "; " + tw.NotRun
	}
	return EscapeText(v)
}

// normalize makes the lists of tw empty rather than null.
func (tw *Twins) Normalize() {
	if tw == nil {
		return
	}
	for _, s := range []*[]string{&tw.Contradictions, &tw.InvalidTwins} {
		if *s == nil {
			*s = []string{}
		}
	}
	if tw.Untwinned == nil {
		tw.Untwinned = []TwinGap{}
	}
	if tw.Changes == nil {
		tw.Changes = []TwinChange{}
	}
}

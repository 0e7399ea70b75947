package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Strength says how much one kind of evidence weighs in the verdict.
type Strength string

// Strengths of evidence.
const (
	// StrengthStrong is evidence that only a bent runner, a forged report or
	// a test read at run time explains: a twin that passed beside its test,
	// a pytest object replaced, a hidden test compiled from another source,
	// the evidence channel closed. Any strong evidence makes the verdict
	// tampered.
	StrengthStrong Strength = "strong"
	// StrengthWeak is evidence worth a reviewer's eye that honest code can
	// also produce (a frame walk, a trace function, a fork). It keeps the
	// verdict and is counted in the check run's title.
	StrengthWeak Strength = "weak"
)

// Evidence is one reason to doubt a run, with how often it was seen. A
// report holds one Evidence per reason, strongest first.
type Evidence struct {
	// Reason is a stable name for what was seen, e.g. "twin_contradiction"
	// or "identity_mismatch".
	Reason   string   `json:"reason"`
	Strength Strength `json:"strength"`
	// Count is how many times it was seen.
	Count int `json:"count"`
	// Examples are up to MaxEvidenceExamples of the things seen (test ids,
	// paths, audit events), escaped so that no control or bidirectional
	// character reaches a reader.
	Examples []string `json:"examples"`
}

// MaxEvidenceExamples bounds the examples kept per reason.
const MaxEvidenceExamples = 5

// SortEvidence orders evidence strongest first, then most seen, then by
// reason, so that a cut list always keeps what matters most.
func SortEvidence(es []Evidence) {
	rank := func(s Strength) int {
		if s == StrengthStrong {
			return 0
		}
		return 1
	}
	slices.SortFunc(es, func(a, b Evidence) int {
		return cmp.Or(
			cmp.Compare(rank(a.Strength), rank(b.Strength)),
			cmp.Compare(b.Count, a.Count),
			strings.Compare(a.Reason, b.Reason),
		)
	})
}

// StrongEvidence returns the strong evidence of es.
func StrongEvidence(es []Evidence) []Evidence {
	var out []Evidence
	for _, e := range es {
		if e.Strength == StrengthStrong {
			out = append(out, e)
		}
	}
	return out
}

// WeakSignals counts the sightings of weak evidence in es.
func WeakSignals(es []Evidence) int { return sightings(es, StrengthWeak) }

// StrongSignals counts the sightings of strong evidence in es.
func StrongSignals(es []Evidence) int { return sightings(es, StrengthStrong) }

func sightings(es []Evidence, strength Strength) int {
	n := 0
	for _, e := range es {
		if e.Strength == strength {
			n += e.Count
		}
	}
	return n
}

// EscapeText makes s safe to show: control characters, bidirectional
// overrides and other invisible format characters become Go escapes, so a
// path or test id can neither reorder the text around it nor hide in it.
func EscapeText(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if needsEscape(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return r == unicode.ReplacementChar || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// describe says one piece of evidence in words, for a report's reasons.
func (e Evidence) Describe() string {
	s := fmt.Sprintf("%s evidence: %s (%d×)", e.Strength, e.Reason, e.Count)
	if len(e.Examples) > 0 {
		s += ": " + strings.Join(e.Examples, ", ")
	}
	return s
}

package evaluate

import (
	"slices"

	"github.com/testfirst-app/testfirst/report"
)

// EvidenceSet gathers evidence by reason. Its zero value is ready to use.
type EvidenceSet struct {
	byReason map[string]*report.Evidence
}

// add records one sighting of reason with strength; example, when not
// empty, is kept among the first few. A reason seen as both weak and strong
// is strong.
func (s *EvidenceSet) add(reason string, strength report.Strength, example string) {
	s.addN(reason, strength, 1, example)
}

// addN records n sightings of reason.
func (s *EvidenceSet) addN(reason string, strength report.Strength, n int, example string) {
	if n <= 0 {
		return
	}
	if s.byReason == nil {
		s.byReason = map[string]*report.Evidence{}
	}
	e := s.byReason[reason]
	if e == nil {
		e = &report.Evidence{Reason: reason, Strength: strength}
		s.byReason[reason] = e
	}
	if strength == report.StrengthStrong {
		e.Strength = report.StrengthStrong
	}
	e.Count += n
	if example = report.EscapeText(example); example != "" && len(e.Examples) < report.MaxEvidenceExamples && !slices.Contains(e.Examples, example) {
		e.Examples = append(e.Examples, example)
	}
}

// List returns the evidence strongest first, then most seen, then by name.
func (s *EvidenceSet) List() []report.Evidence {
	out := make([]report.Evidence, 0, len(s.byReason))
	for _, e := range s.byReason {
		out = append(out, *e)
	}
	report.SortEvidence(out)
	return out
}

package grader

import (
	"cmp"
	"slices"
	"strings"
)

// SignalGroup is the tamper signals of one reason: how many there are and
// the first few paths. Grouped, no number of decoys can push the signal
// that matters out of a report that has to be cut.
type SignalGroup struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
	// Examples are up to maxEvidenceExamples of the paths, escaped and
	// shortened so that none can hide text or crowd out the others.
	Examples []string `json:"examples"`
}

// maxExampleRunes bounds one example path as shown.
const maxExampleRunes = 120

// GroupTamperSignals groups ss by reason, strongest kind first (ways past
// the scan, then what the source reaches for, then files that configure or
// hook the run), then most seen, then by reason.
func GroupTamperSignals(ss []TamperSignal) []SignalGroup {
	byReason := map[string]*SignalGroup{}
	var out []*SignalGroup
	for _, s := range ss {
		g := byReason[s.Reason]
		if g == nil {
			g = &SignalGroup{Reason: s.Reason}
			byReason[s.Reason] = g
			out = append(out, g)
		}
		g.Count++
		if len(g.Examples) < maxEvidenceExamples {
			g.Examples = append(g.Examples, ShortText(s.Path, maxExampleRunes))
		}
	}
	slices.SortFunc(out, func(a, b *SignalGroup) int {
		return cmp.Or(
			cmp.Compare(signalRank(a.Reason), signalRank(b.Reason)),
			cmp.Compare(b.Count, a.Count),
			strings.Compare(a.Reason, b.Reason),
		)
	})
	groups := make([]SignalGroup, len(out))
	for i, g := range out {
		groups[i] = *g
	}
	return groups
}

// signalRank orders tamper signal reasons: 0 for the ways past the scan or
// into the hidden tests' place (names of hidden modules, encodings, normal
// forms, binaries, unscanned sources, symlinks out of the tree), 1 for what
// the source reaches for, 2 for files that configure or hook the run,
// which honest trees have too.
func signalRank(reason string) int {
	switch {
	case reason == reasonHiddenPath, reason == reasonHiddenName, reason == reasonHiddenPkg,
		reason == reasonForeignEncoding, reason == reasonUndecodable, reason == reasonNotNFKC,
		strings.HasPrefix(reason, "source too large"), strings.HasPrefix(reason, "symlink target"), reason == reasonZipUnscanned,
		slices.ContainsFunc(binaryKinds, func(k binaryKind) bool { return k.reason == reason }):
		return 0
	case strings.HasPrefix(reason, "source mentions "):
		return 1
	}
	return 2
}

// ShortText escapes s (see EscapeText) and cuts it to at most n runes,
// keeping its end, where a path's file name is.
func ShortText(s string, n int) string {
	s = EscapeText(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

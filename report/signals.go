package report

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
	// Examples are up to MaxEvidenceExamples of the paths, escaped and
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
		if len(g.Examples) < MaxEvidenceExamples {
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
	case reason == ReasonHiddenPath, reason == ReasonHiddenName, reason == ReasonHiddenPkg,
		reason == ReasonForeignEncoding, reason == ReasonUndecodable, reason == ReasonNotNFKC,
		strings.HasPrefix(reason, "source too large"), strings.HasPrefix(reason, "symlink target"), reason == ReasonZipUnscanned,
		slices.Contains(binaryReasons, reason):
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

// Reasons of the tamper signals that rank first: a detector raises them,
// and the report groups them ahead of the rest (see signalRank). Like every
// tamper signal reason they come from a fixed set, so that signals group
// into a bounded number of kinds whatever the tree holds.
const (
	// Files named like the hidden tests.
	ReasonHiddenPath = "has the path of a hidden test file"
	ReasonHiddenName = "named like a hidden test module: it can be imported in its place"
	ReasonHiddenPkg  = "package with the import name of a hidden test package: it can be imported in its place"

	// The reading of a Python source.
	ReasonForeignEncoding = "source declares an encoding other than UTF-8 (PEP 263), which Python decodes before it reads the code"
	ReasonUndecodable     = "source does not decode in its declared encoding"
	ReasonNotNFKC         = "identifiers that Python reads in another form (NFKC), such as fullwidth letters"

	// Binary content, flagged whatever the file is called: an archive on
	// sys.path is importable, a shared object is native code, and none of
	// them is read by the pattern scan.
	ReasonZip   = "zip archive: Python can import code from it whatever its name"
	ReasonELF   = "ELF binary: native code a reviewer cannot read"
	ReasonPyc   = "compiled python bytecode: it can hide code a reviewer cannot read"
	ReasonGzip  = "gzip data: its content is not scanned"
	ReasonBzip2 = "bzip2 data: its content is not scanned"
	ReasonXz    = "xz data: its content is not scanned"
	ReasonZstd  = "zstd data: its content is not scanned"
	Reason7z    = "7z archive: its content is not scanned"
	ReasonTar   = "tar archive: its content is not scanned"
	// An archive the scan could not read to the end.
	ReasonZipUnscanned = "zip archive that could not be read whole: its members are not all scanned"
)

// binaryReasons are the reasons of binary content.
var binaryReasons = []string{ReasonZip, ReasonELF, ReasonPyc, ReasonGzip, ReasonBzip2, ReasonXz, ReasonZstd, Reason7z, ReasonTar}

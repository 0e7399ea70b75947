package detect

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// Canary is the token that marks one hidden test file. Seeing the token
// anywhere outside the hidden tests means the tests leaked.
type Canary struct {
	// HiddenFile is the path of the hidden test file, inside its tree.
	HiddenFile string
	// Token is the canary token: 8 or more characters of [A-Za-z0-9_-].
	Token string
}

// CanaryLine matches "# testfirst-canary: <token>", possibly indented; the
// token is its first group. The store refuses drafts holding such a line,
// so the only canaries the grader finds are the ones the store adds.
var CanaryLine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*testfirst-canary:[ \t]*([A-Za-z0-9_-]{8,})`)

// Canaries returns every canary token of every file in hidden, sorted by file
// then token and deduplicated per file. A file carries its token on a line
// "# testfirst-canary: <token>", possibly indented. A nil tree has none.
func Canaries(hidden *tree.Tree) []Canary {
	if hidden == nil {
		return nil
	}
	var out []Canary
	for _, f := range hidden.Files {
		for _, m := range CanaryLine.FindAllSubmatch(f.Data, -1) {
			out = append(out, Canary{HiddenFile: f.Path, Token: string(m[1])})
		}
	}
	slices.SortFunc(out, func(a, b Canary) int {
		return cmp.Or(strings.Compare(a.HiddenFile, b.HiddenFile), strings.Compare(a.Token, b.Token))
	})
	return slices.Compact(out)
}

// ScanTree reports the canaries of cs seen in t: in a file's content (text or
// binary, whatever its size) or in a symlink's target. Each sighting's Where
// is "repo:" + the file's path. Sightings are sorted and deduplicated; nil
// when there are none.
func ScanTree(t *tree.Tree, cs []Canary) []report.CanarySighting {
	if t == nil {
		return nil
	}
	var out []report.CanarySighting
	for _, f := range t.Files {
		where := "repo:" + f.Path
		out = append(out, ScanBytes(where, f.Data, cs)...)
		out = append(out, ScanBytes(where, []byte(f.Link), cs)...)
	}
	return SortSightings(out)
}

// ScanBytes reports the canaries of cs whose token occurs in b, each with the
// given where ("output", "junit", "repo:<path>"). Sightings are sorted and
// deduplicated; nil when there are none. Canaries with an empty token are
// ignored.
func ScanBytes(where string, b []byte, cs []Canary) []report.CanarySighting {
	var out []report.CanarySighting
	for _, c := range cs {
		if c.Token != "" && bytes.Contains(b, []byte(c.Token)) {
			out = append(out, report.CanarySighting{HiddenFile: c.HiddenFile, Where: where})
		}
	}
	return SortSightings(out)
}

// SortSightings orders sightings by hidden file, then by where they were
// seen, and drops repeats.
func SortSightings(s []report.CanarySighting) []report.CanarySighting {
	slices.SortFunc(s, func(a, b report.CanarySighting) int {
		return cmp.Or(strings.Compare(a.HiddenFile, b.HiddenFile), strings.Compare(a.Where, b.Where))
	})
	return slices.Compact(s)
}

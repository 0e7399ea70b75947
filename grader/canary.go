package grader

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Canary is the token that marks one hidden test file. Seeing the token
// anywhere outside the hidden tests means the tests leaked.
type Canary struct {
	// HiddenFile is the path of the hidden test file, inside its tree.
	HiddenFile string
	// Token is the canary token: 8 or more characters of [A-Za-z0-9_-].
	Token string
}

// canaryLine matches "# testfirst-canary: <token>", possibly indented.
var canaryLine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*testfirst-canary:[ \t]*([A-Za-z0-9_-]{8,})`)

// Canaries returns every canary token of every file in hidden, sorted by file
// then token and deduplicated per file. A file carries its token on a line
// "# testfirst-canary: <token>", possibly indented. A nil tree has none.
func Canaries(hidden *Tree) []Canary {
	if hidden == nil {
		return nil
	}
	var out []Canary
	for _, f := range hidden.Files {
		for _, m := range canaryLine.FindAllSubmatch(f.Data, -1) {
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
func ScanTree(t *Tree, cs []Canary) []CanarySighting {
	if t == nil {
		return nil
	}
	var out []CanarySighting
	for _, f := range t.Files {
		where := "repo:" + f.Path
		out = append(out, ScanBytes(where, f.Data, cs)...)
		out = append(out, ScanBytes(where, []byte(f.Link), cs)...)
	}
	return sortSightings(out)
}

// ScanBytes reports the canaries of cs whose token occurs in b, each with the
// given where ("output", "junit", "repo:<path>"). Sightings are sorted and
// deduplicated; nil when there are none. Canaries with an empty token are
// ignored.
func ScanBytes(where string, b []byte, cs []Canary) []CanarySighting {
	var out []CanarySighting
	for _, c := range cs {
		if c.Token != "" && bytes.Contains(b, []byte(c.Token)) {
			out = append(out, CanarySighting{HiddenFile: c.HiddenFile, Where: where})
		}
	}
	return sortSightings(out)
}

func sortSightings(s []CanarySighting) []CanarySighting {
	slices.SortFunc(s, func(a, b CanarySighting) int {
		return cmp.Or(strings.Compare(a.HiddenFile, b.HiddenFile), strings.Compare(a.Where, b.Where))
	})
	return slices.Compact(s)
}

// CanaryScanner is an io.Writer that watches a stream, such as the runner's
// output, for canary tokens. It finds a token split across any number of
// writes while keeping only the last len(longest token)-1 bytes, so it can
// watch a stream of any length. It is safe for concurrent use.
type CanaryScanner struct {
	mu      sync.Mutex
	cs      []Canary
	pending [][]byte // tokens not seen yet
	seen    []string
	longest int
	tail    []byte // the stream's last bytes, at most longest-1
	window  []byte // scratch: tail followed by the start of a write
}

// NewCanaryScanner returns a scanner for the tokens of cs. Canaries with an
// empty token are ignored.
func NewCanaryScanner(cs []Canary) *CanaryScanner {
	s := &CanaryScanner{cs: slices.Clone(cs)}
	tokens := make(map[string]bool)
	for _, c := range cs {
		if c.Token == "" || tokens[c.Token] {
			continue
		}
		tokens[c.Token] = true
		s.pending = append(s.pending, []byte(c.Token))
		s.longest = max(s.longest, len(c.Token))
	}
	s.tail = make([]byte, 0, max(s.longest-1, 0))
	return s
}

// Write scans p for tokens; it never fails and always consumes all of p.
func (s *CanaryScanner) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 || len(p) == 0 {
		return len(p), nil
	}
	keep := s.longest - 1
	// A token that straddles the previous writes and p ends within the
	// first keep bytes of p.
	s.window = append(append(s.window[:0], s.tail...), p[:min(len(p), keep)]...)
	s.match(s.window)
	s.match(p)
	if len(p) >= keep {
		s.tail = append(s.tail[:0], p[len(p)-keep:]...)
	} else {
		// The window is all of tail then p.
		s.tail = append(s.tail[:0], s.window[max(len(s.window)-keep, 0):]...)
	}
	return len(p), nil
}

// match moves the pending tokens found in b to seen.
func (s *CanaryScanner) match(b []byte) {
	s.pending = slices.DeleteFunc(s.pending, func(tok []byte) bool {
		if bytes.Contains(b, tok) {
			s.seen = append(s.seen, string(tok))
			return true
		}
		return false
	})
}

// Seen returns the tokens seen so far, sorted and deduplicated.
func (s *CanaryScanner) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := slices.Clone(s.seen)
	slices.Sort(seen)
	return seen
}

// Sightings returns what Seen found as sightings of the scanner's canaries,
// each with the given where ("output", "junit"), sorted and deduplicated.
func (s *CanaryScanner) Sightings(where string) []CanarySighting {
	seen := s.Seen()
	var out []CanarySighting
	for _, c := range s.cs {
		if _, ok := slices.BinarySearch(seen, c.Token); ok {
			out = append(out, CanarySighting{HiddenFile: c.HiddenFile, Where: where})
		}
	}
	return sortSightings(out)
}

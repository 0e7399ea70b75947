package wrapper

import (
	"bytes"
	"slices"
)

// boundedScanner keeps the first limit bytes written to it, counts all of
// them, and looks for canary tokens across write boundaries in everything,
// also past the limit.
type boundedScanner struct {
	limit   int64
	kept    []byte
	total   int64
	tokens  [][]byte
	tail    []byte
	seen    map[string]bool
	maxTail int
}

func newBoundedScanner(limit int64, tokens []string) *boundedScanner {
	s := &boundedScanner{limit: limit, seen: map[string]bool{}}
	for _, t := range tokens {
		if t == "" {
			continue
		}
		s.tokens = append(s.tokens, []byte(t))
		s.maxTail = max(s.maxTail, len(t)-1)
	}
	return s
}

func (s *boundedScanner) Write(p []byte) (int, error) {
	s.total += int64(len(p))
	if room := s.limit - int64(len(s.kept)); room > 0 {
		s.kept = append(s.kept, p[:min(int64(len(p)), room)]...)
	}
	if len(s.tokens) > 0 {
		window := append(s.tail, p...)
		for _, t := range s.tokens {
			if bytes.Contains(window, t) {
				s.seen[string(t)] = true
			}
		}
		s.tail = append(s.tail[:0], window[max(0, len(window)-s.maxTail):]...)
	}
	return len(p), nil
}

// Seen returns the tokens seen so far, sorted.
func (s *boundedScanner) Seen() []string {
	out := make([]string, 0, len(s.seen))
	for t := range s.seen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

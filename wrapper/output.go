package wrapper

import "fmt"

// outputKeeper keeps what a run prints for the requester: all of it up to
// limit bytes, else its first and its last limit/2 bytes (the start of the
// run and pytest's summary of what failed and why) with a line between
// them that says how many bytes were cut. Its scanner looks for canary
// tokens in everything, the cut part too.
type outputKeeper struct {
	scan  *boundedScanner // keeps the head, counts and scans all
	limit int64
	// ring holds the last bytes written past the head, at most limit/2.
	ring  []byte
	start int // where the oldest byte of a full ring is
}

func newOutputKeeper(limit int64, tokens []string) *outputKeeper {
	head := limit - limit/2
	return &outputKeeper{scan: newBoundedScanner(head, tokens), limit: limit}
}

func (o *outputKeeper) Write(p []byte) (int, error) {
	room := o.scan.limit - int64(len(o.scan.kept))
	o.scan.Write(p)
	if room >= int64(len(p)) {
		return len(p), nil
	}
	rest := p[max(room, 0):]
	size := int(o.limit / 2)
	if size == 0 {
		return len(p), nil
	}
	if len(rest) >= size {
		o.ring = append(o.ring[:0], rest[len(rest)-size:]...)
		o.start = 0
		return len(p), nil
	}
	for len(rest) > 0 {
		if len(o.ring) < size {
			n := min(size-len(o.ring), len(rest))
			o.ring = append(o.ring, rest[:n]...)
			rest = rest[n:]
			continue
		}
		n := copy(o.ring[o.start:], rest)
		o.start = (o.start + n) % size
		rest = rest[n:]
	}
	return len(p), nil
}

// Kept returns what is kept, the count of all bytes written, and whether
// some were cut.
func (o *outputKeeper) Kept() ([]byte, int64, bool) {
	head := o.scan.kept
	total := o.scan.total
	tail := append(append([]byte(nil), o.ring[o.start:]...), o.ring[:o.start]...)
	cut := total - int64(len(head)) - int64(len(tail))
	if cut <= 0 {
		return append(head[:len(head):len(head)], tail...), total, false
	}
	marker := fmt.Sprintf("\n[testfirst: %d bytes of output cut here]\n", cut)
	out := make([]byte, 0, len(head)+len(marker)+len(tail))
	out = append(append(append(out, head...), marker...), tail...)
	return out, total, true
}

// Seen returns the canary tokens seen in all of the output, sorted.
func (o *outputKeeper) Seen() []string { return o.scan.Seen() }

package wrapper

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOutputKeepsHeadAndTail: past its limit, the kept output is its start
// and its end (where pytest prints which tests failed and why) with a line
// between them that says how much was cut; the canary scan covers all of
// it, the cut part too.
func TestOutputKeepsHeadAndTail(t *testing.T) {
	const token = "canaryXtoken0001"
	o := newOutputKeeper(100, []string{token})
	o.Write([]byte(strings.Repeat("h", 50)))
	for i := range 1000 {
		o.Write([]byte(fmt.Sprintf("middle %04d\n", i)))
	}
	o.Write([]byte("in the cut part " + token[:4]))
	o.Write([]byte(token[4:] + "\n"))
	o.Write([]byte(strings.Repeat("m", 60)))
	o.Write([]byte("=== 1 failed: summary at the end ==="))
	kept, total, truncated := o.Kept()
	s := string(kept)
	if !strings.HasPrefix(s, strings.Repeat("h", 50)) {
		t.Errorf("kept output lost its head: %q", s)
	}
	if !strings.HasSuffix(s, "=== 1 failed: summary at the end ===") {
		t.Errorf("kept output lost its tail: %q", s)
	}
	cut := total - int64(100)
	if want := fmt.Sprintf("[testfirst: %d bytes of output cut here]", cut); !strings.Contains(s, want) {
		t.Errorf("kept output %q does not say %q", s, want)
	}
	if !truncated || len(kept) > 100+80 {
		t.Errorf("truncated %v, %d bytes kept, want true and about 100", truncated, len(kept))
	}
	if diff := cmp.Diff([]string{token}, o.Seen()); diff != "" {
		t.Errorf("Seen (-want +got):\n%s", diff)
	}

	// Under the limit it is kept whole, without a marker.
	o = newOutputKeeper(100, nil)
	o.Write([]byte("short"))
	o.Write([]byte(" output"))
	if kept, total, truncated := o.Kept(); string(kept) != "short output" || total != 12 || truncated {
		t.Errorf("Kept = %q, %d, %v", kept, total, truncated)
	}
	// A write larger than the whole limit keeps its own end.
	o = newOutputKeeper(10, nil)
	o.Write([]byte("0123456789abcdefghijklmnopqrstuvwxyz"))
	if kept, _, _ := o.Kept(); !strings.HasPrefix(string(kept), "01234") || !strings.HasSuffix(string(kept), "vwxyz") {
		t.Errorf("Kept = %q", kept)
	}
}

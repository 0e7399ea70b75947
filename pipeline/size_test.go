package pipeline

import (
	"testing"

	"github.com/docker/go-units"
)

// TestParseMemory reads sizes as go-units' RAMInBytes does, which the
// repository config used before.
func TestParseMemory(t *testing.T) {
	for _, in := range []string{"64m", "1g", "1G", "1.5g", "512MiB", "2GB", "65536", "100b", "1 g", "8g", "", "g", "1x", "1mb2", "-1m", "1kib", "1kb", "1mbb", "1.5.5m", " 1m", "1e3m"} {
		want, wantErr := units.RAMInBytes(in)
		got, err := parseMemory(in)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("parseMemory(%q) = %d, %v; RAMInBytes says %d, %v", in, got, err, want, wantErr)
		}
	}
}

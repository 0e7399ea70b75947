package sandbox

import (
	"bytes"
	"io"
	"sync"
)

// LimitedBuffer keeps the first limit bytes of a sandbox's output written
// to it; limit 0 keeps nothing. Every engine adapter collects a run's
// stdout and stderr in one. An attach's copies may outlive the attach when
// it is cut, so it is locked, and Seal stops it taking more. The buffer is
// a field, not embedded: io.Copy would take an embedded bytes.Buffer's
// ReadFrom and keep everything.
type LimitedBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	limit     int64
	truncated bool
	sealed    bool
}

// NewLimitedBuffer returns a buffer that keeps the first limit bytes.
func NewLimitedBuffer(limit int64) *LimitedBuffer {
	return &LimitedBuffer{limit: limit}
}

// Write keeps what fits and drops the rest, reporting all of p written so
// that the copy feeding it goes on; once sealed it fails.
func (b *LimitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sealed {
		return 0, io.ErrClosedPipe
	}
	room := b.limit - int64(b.buf.Len())
	if int64(len(p)) > room {
		b.truncated = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Seal returns what was kept and whether more was cut; later writes fail.
func (b *LimitedBuffer) Seal() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sealed = true
	return b.buf.Bytes(), b.truncated
}

var _ io.Writer = (*LimitedBuffer)(nil)

package grader

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// baseMemoSize is how many base runs a grader keeps for reuse. A ticket's
// pull request is graded again at every push against the same base and
// the same approved tests: its base run is the same run each time. A kept
// run holds at most its output and JUnit bounds (outputLimit, junitLimit).
const baseMemoSize = 32

// baseMemo keeps the base runs of a grader's recent grades, by everything
// that decides what such a run does: the base tree, the hidden tests with
// their context, the image and its ID, the runtime, the job (but for its
// random uids and twin seed, which a base run does not report on), the
// budget and the limits. Only a run that ended with a report is kept: one
// that hung, crashed or was cut short for outlasting its grade says
// nothing about the next grade's time.
type baseMemo struct{ *lru[*run] }

func newBaseMemo() *baseMemo { return &baseMemo{newLRU[*run](baseMemoSize)} }

// lru keeps the last size values put, by key.
type lru[T any] struct {
	mu    sync.Mutex
	size  int
	vals  map[string]T
	order []string // oldest first
}

func newLRU[T any](size int) *lru[T] { return &lru[T]{size: size, vals: map[string]T{}} }

func (l *lru[T]) load(key string) (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.vals[key]
	return v, ok
}

func (l *lru[T]) store(key string, v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.vals[key]; !ok {
		l.order = append(l.order, key)
	}
	l.vals[key] = v
	for len(l.order) > l.size {
		delete(l.vals, l.order[0])
		l.order = l.order[1:]
	}
}

// baseMemoKey is the memo's key of a base run of job on base in g.
func (g *Grader) baseMemoKey(job wrapper.Job, hidden, base *tree.Tree, timeout time.Duration, limits sandbox.Limits) string {
	job.TestUID, job.GraderUID = 0, 0
	job.TwinSeed = ""
	b, err := json.Marshal(struct {
		Image, ImageID, Runtime string
		Base, Hidden            string
		Job                     wrapper.Job
		Timeout                 time.Duration
		Limits                  sandbox.Limits
	}{g.image, g.imageID, g.runtime, base.Digest(), hidden.Digest(), job, timeout, limits})
	if err != nil {
		return "" // not kept: a job that cannot be encoded cannot be told apart
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// get returns a copy of the run kept under key, marked reused.
func (m *baseMemo) get(key string) (*run, bool) {
	if m == nil || key == "" {
		return nil, false
	}
	r, ok := m.load(key)
	if !ok {
		return nil, false
	}
	c := *r
	c.ev = r.ev.Clone()
	c.reused = true
	return &c, true
}

// put keeps a copy of r under key, when r ended with a report.
func (m *baseMemo) put(key string, r *run) {
	if m == nil || key == "" || r == nil || r.crash() != "" || r.ev == nil {
		return
	}
	c := *r
	c.ev = r.ev.Clone()
	m.store(key, &c)
}

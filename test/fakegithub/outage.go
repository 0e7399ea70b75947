package fakegithub

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// FailNextN makes the next n requests that match method and pathPrefix
// fail with status, as FailNext does for one.
func (s *Server) FailNextN(n int, method, pathPrefix string, status int, header http.Header) {
	for range n {
		s.FailNext(method, pathPrefix, status, header)
	}
}

// FailNextWhere makes the next n requests that match method and
// pathPrefix and whose body contains bodyContains (e.g. a check-run update
// that completes the run: `"status":"completed"`) fail with status.
func (s *Server) FailNextWhere(n int, method, pathPrefix, bodyContains string, status int) {
	s.addFaults(fault{method: method, prefix: pathPrefix, status: status, body: bodyContains}, n)
}

// PendingFaults is how many injected faults have not been used yet.
func (s *Server) PendingFaults() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults)
}

// ClearFaults drops every injected fault not used yet.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// RequestCount is how many requests the fake received so far; with
// RequestsSince it counts what a service sent during a stretch of time.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// RequestsSince returns the requests received after the first mark (a
// RequestCount taken earlier).
func (s *Server) RequestsSince(mark int) []Request {
	all := s.Requests()
	if mark > len(all) {
		mark = len(all)
	}
	return all[mark:]
}

// CallsTo counts the requests in reqs whose method matches (any when "")
// and whose path starts with pathPrefix.
func CallsTo(reqs []Request, method, pathPrefix string) int {
	n := 0
	for _, r := range reqs {
		if (method == "" || strings.EqualFold(method, r.Method)) && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// CallsByRoute counts reqs by "METHOD path", for a test's failure message.
func CallsByRoute(reqs []Request) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		out[r.Method+" "+r.Path]++
	}
	return out
}

// Stop makes the fake unreachable: its listener is closed (a new
// connection is refused) and open connections are cut. Start brings it
// back on the same address.
func (s *Server) Stop() {
	s.listener.stop()
	s.ts.CloseClientConnections()
}

// StopOnNext makes the fake go away at the next request whose method
// matches (any when "") and whose path starts with pathPrefix: that
// request's connection is cut without an answer and the fake stops, as
// Stop does, until Start. The request is recorded with status 0.
func (s *Server) StopOnNext(method, pathPrefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopOn = append(s.stopOn, fault{method: method, prefix: pathPrefix})
}

// OnNextWhere calls fn (outside the fake's lock, before the answer) at the
// next request whose method matches (any when ""), whose path starts with
// pathPrefix and whose body contains bodyContains: a test's cue that the
// service reached a given step, e.g. a check run set in progress.
func (s *Server) OnNextWhere(method, pathPrefix, bodyContains string, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, hook{match: fault{method: method, prefix: pathPrefix, body: bodyContains}, fn: fn})
}

// hook is OnNextWhere's cue.
type hook struct {
	match fault
	fn    func()
}

// takeHook removes and returns the first hook r with body matches.
func (s *Server) takeHook(r *http.Request, body []byte) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, h := range s.hooks {
		if h.match.matches(r, body) {
			s.hooks = append(s.hooks[:i:i], s.hooks[i+1:]...)
			return h.fn
		}
	}
	return nil
}

// takeStop removes and reports the first stop trigger r matches.
func (s *Server) takeStop(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.stopOn {
		if f.matches(r, nil) {
			s.stopOn = append(s.stopOn[:i:i], s.stopOn[i+1:]...)
			s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), At: time.Now()})
			return true
		}
	}
	return false
}

// cut answers nothing: the connection is closed and the fake stops.
func (s *Server) cut(w http.ResponseWriter) {
	s.listener.stop()
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
	go s.ts.CloseClientConnections()
}

// Start makes a stopped fake reachable again, on the same address.
func (s *Server) Start() {
	if err := s.listener.start(); err != nil {
		s.t.Errorf("fakegithub: listen again on %s: %v", s.listener.addr, err)
	}
}

// outageListener is the fake's listener, which can be closed and opened
// again on the same address while the HTTP server keeps accepting from it.
type outageListener struct {
	addr string

	mu      sync.Mutex
	inner   net.Listener
	stopped bool
	closed  bool
	resumed chan struct{} // closed by start or Close
}

func newOutageListener() (*outageListener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &outageListener{addr: l.Addr().String(), inner: l, resumed: make(chan struct{})}, nil
}

// Accept implements net.Listener; while stopped it waits to be started.
func (l *outageListener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		inner, closed, resumed := l.inner, l.closed, l.resumed
		l.mu.Unlock()
		if closed {
			return nil, net.ErrClosed
		}
		c, err := inner.Accept()
		if err == nil {
			return c, nil
		}
		l.mu.Lock()
		stopped := l.stopped && l.inner == inner
		l.mu.Unlock()
		if !stopped && !errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if !stopped {
			continue // started again meanwhile, or closed for good
		}
		<-resumed
	}
}

func (l *outageListener) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || l.closed {
		return
	}
	l.stopped = true
	l.inner.Close()
}

func (l *outageListener) start() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped || l.closed {
		return nil
	}
	inner, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	l.inner, l.stopped = inner, false
	close(l.resumed)
	l.resumed = make(chan struct{})
	return nil
}

// Close implements net.Listener.
func (l *outageListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	close(l.resumed)
	return l.inner.Close()
}

// Addr implements net.Listener.
func (l *outageListener) Addr() net.Addr { return tcpAddr(l.addr) }

// tcpAddr is a listener's fixed address.
type tcpAddr string

func (a tcpAddr) Network() string { return "tcp" }
func (a tcpAddr) String() string  { return string(a) }

package egress

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Server is a Proxy served on a unix socket.
type Server struct {
	// Socket is the path of the unix socket.
	Socket string
	srv    *http.Server
	dir    string
	proxy  *Proxy
}

// Listen serves p on a unix socket in a fresh directory below dir (the
// system's temporary directory when empty) until Close. The socket may be
// opened by any uid, as the container's root, which holds no capability,
// must open it; the directory holds nothing else.
func (p *Proxy) Listen(dir string) (*Server, error) {
	d, err := os.MkdirTemp(dir, "testfirst-egress-")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: socket directory: %w", err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress proxy: socket directory: %w", err)
	}
	path := filepath.Join(d, "egress.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress proxy: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress proxy: socket mode: %w", err)
	}
	s := &Server{Socket: path, dir: d, proxy: p, srv: &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: maxHeaderBytes}}
	go s.srv.Serve(l)
	return s, nil
}

// closeWait bounds how long Close waits for requests in flight to be
// logged once their connections are closed.
const closeWait = 5 * time.Second

// Close stops serving, closes open connections, waits (briefly) until every
// request in flight is logged, and removes the socket.
func (s *Server) Close() error {
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	done := make(chan struct{})
	go func() { s.proxy.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// staleAfter is how old a socket directory must be before SweepStale
// takes it for a dead process's: younger ones may still be being made.
const staleAfter = time.Minute

// SweepStale removes the socket directories below dir (the system's
// temporary directory when empty) that a process which died left behind:
// those whose socket no process answers, or that hold no socket, made more
// than a minute ago. A live proxy's, of this process or another sharing
// dir, answers and stays. It returns how many it removed.
func SweepStale(dir string) (int, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	dirs, err := filepath.Glob(filepath.Join(dir, "testfirst-egress-*"))
	if err != nil {
		return 0, err
	}
	var n int
	var errs []error
	for _, d := range dirs {
		info, err := os.Lstat(d)
		if err != nil || !info.IsDir() || time.Since(info.ModTime()) < staleAfter {
			continue
		}
		if c, err := net.DialTimeout("unix", filepath.Join(d, "egress.sock"), time.Second); err == nil {
			c.Close()
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("egress proxy: remove stale socket directory: %w", err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

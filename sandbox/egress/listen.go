package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
// system's temporary directory when empty) until Close.
//
// Only the sandbox's uids (WithPeerUIDs) may use it. The directory is the
// service user's alone (0700): no other local user reaches the socket's
// path; the engine's daemon, which bind-mounts the socket into the
// container, is root. The socket is 0600 when the service runs as the one
// uid allowed (the container's root, with every capability dropped, opens
// it by the owner's bits); when another uid must connect its mode lets it,
// and the kernel's word on each connecting process (SO_PEERCRED) is what
// decides: a connection from any other uid is answered 403, logged, and
// never reaches a handler.
func (p *Proxy) Listen(dir string) (*Server, error) {
	d, err := os.MkdirTemp(dir, "testfirst-egress-")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: socket directory: %w", err)
	}
	if err := os.Chmod(d, 0o700); err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress proxy: socket directory: %w", err)
	}
	path := filepath.Join(d, "egress.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress proxy: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, p.socketMode()); err != nil {
		l.Close()
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress proxy: socket mode: %w", err)
	}
	s := &Server{Socket: path, dir: d, proxy: p, srv: &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: maxHeaderBytes}}
	go s.srv.Serve(&peerListener{Listener: l, p: p})
	return s, nil
}

// socketMode is 0600 when every uid allowed to connect is this process's
// (it owns the socket), 0666 otherwise: the peer check then decides.
func (p *Proxy) socketMode() os.FileMode {
	for _, u := range p.peerUIDs {
		if u != os.Geteuid() {
			return 0o666
		}
	}
	return 0o600
}

// peerListener hands the server only connections whose peer is of an
// allowed uid; it answers the others itself.
type peerListener struct {
	net.Listener
	p *Proxy
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && slices.Contains(l.p.peerUIDs, uid) {
			return c, nil
		}
		l.p.inflight.Add(1)
		go l.p.refusePeer(c, uid, err)
	}
}

// refusePeer answers a connection from a uid not allowed with 403 and
// closes it; nothing it sent is read as a request.
func (p *Proxy) refusePeer(c net.Conn, uid int, err error) {
	defer p.inflight.Done()
	defer c.Close()
	e := Entry{Status: http.StatusForbidden, Denied: fmt.Sprintf("peer uid %d not allowed", uid)}
	msg := fmt.Sprintf("egress proxy: uid %d may not use this proxy: it serves the sandbox only\n", uid)
	if err != nil {
		e.Denied = "peer credentials: " + err.Error()
		msg = "egress proxy: who connected cannot be told (" + err.Error() + "): refused\n"
	}
	p.log(e)
	c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
	// Let the answer arrive before the close: what the peer sent is
	// drained, unread, for a moment.
	if uc, ok := c.(*net.UnixConn); ok {
		uc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 1<<20))
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

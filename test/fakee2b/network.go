package fakee2b

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/docker/docker/api/types/container"
	"github.com/testfirst-app/testfirst/sandbox/e2b"
)

// The fake's internet is the loopback addresses a test exposes
// ([Server.Expose], "127.0.0.2:8080"): a sandbox's container has no network
// of its own (mode none), and a forwarder inside it (forward.py, root's,
// run at creation) listens at each address the sandbox may reach (on its
// own loopback, which holds all of 127.0.0.0/8) and joins every
// connection to a unix socket the fake serves on a directory mounted at
// socketDir, which dials the host's same address. Which addresses a
// sandbox reaches follows E2B's rules as its creation gave them: with
// allow_internet_access false, or denyOut covering 0.0.0.0/0, only those
// whose host allowOut names; otherwise all. Anything else, an address on
// the internet included, is unreachable.

//go:embed forward.py
var forwardPy string

// socketDir is where a sandbox sees the fake's sockets.
const socketDir = "/run/fakee2b"

// Expose puts the host's loopback address addr ("127.0.0.2:8080") on the
// fake's internet.
func (s *Server) Expose(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exposed = append(s.exposed, addr)
}

// reachable are the exposed addresses a sandbox created with n may reach.
func (s *Server) reachable(n e2b.NewSandbox) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	closed := n.AllowInternetAccess != nil && !*n.AllowInternetAccess
	var allow []string
	if n.Network != nil {
		closed = closed || slices.Contains(n.Network.DenyOut, "0.0.0.0/0")
		allow = n.Network.AllowOut
	}
	if !closed {
		return slices.Clone(s.exposed)
	}
	var out []string
	for _, a := range s.exposed {
		host, _, _ := net.SplitHostPort(a)
		if slices.Contains(allow, host) || slices.Contains(allow, host+"/32") {
			out = append(out, a)
		}
	}
	return out
}

// links are one sandbox's sockets.
type links struct {
	dir       string
	listeners []net.Listener
	forwarder io.Closer
	wg        sync.WaitGroup
}

// sockName is the socket of address a.
func sockName(a string) string { return strings.ReplaceAll(a, ":", "_") + ".sock" }

// listen makes a directory with a socket per address, each joined to the
// host's same address.
func listen(addrs []string) (*links, error) {
	dir, err := os.MkdirTemp("", "fakee2b-")
	if err != nil {
		return nil, err
	}
	l := &links{dir: dir}
	for _, a := range addrs {
		ln, err := net.Listen("unix", filepath.Join(dir, sockName(a)))
		if err != nil {
			l.close()
			return nil, err
		}
		l.listeners = append(l.listeners, ln)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go join(c, a)
			}
		}()
	}
	return l, nil
}

func join(c net.Conn, addr string) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.UnixConn).CloseWrite()
	<-done
}

func (l *links) close() {
	if l == nil {
		return
	}
	if l.forwarder != nil {
		l.forwarder.Close()
	}
	for _, ln := range l.listeners {
		ln.Close()
	}
	l.wg.Wait()
	os.RemoveAll(l.dir)
}

// startForwarder runs forward.py as root in the container for addrs and
// waits until it listens.
func (s *Server) startForwarder(ctx context.Context, id string, addrs []string) (io.Closer, error) {
	args := append([]string{"python3", "-c", forwardPy}, addrs...)
	ex, err := s.docker.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: args, User: "root", AttachStdout: true, AttachStderr: true})
	if err != nil {
		return nil, err
	}
	att, err := s.docker.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(att.Reader).ReadString('\n')
	if err != nil || !strings.Contains(line, "ready") {
		att.Close()
		return nil, fmt.Errorf("the sandbox's network forwarder did not start: %q %v", line, err)
	}
	return closerFunc(func() error { att.Close(); return nil }), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

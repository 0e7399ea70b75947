package wrapper

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Where the package index's proxy is reached inside a sandbox that may use
// it.
const (
	// ProxySocket is where the egress proxy's unix socket is mounted.
	ProxySocket = "/run/testfirst/egress.sock"
	// ProxyAddr is the loopback address the wrapper relays to ProxySocket;
	// pip and the tests name it as their proxy.
	ProxyAddr = "127.0.0.1:3128"
)

// A sandbox that cannot mount the proxy's socket (an E2B microVM) reaches
// the proxy over the network instead: the provider starts the wrapper with
// EnvEgressURL and EnvEgressToken, and the relay joins each connection to
// a fresh one to that URL, upgraded by an HTTP request that carries the
// token (Upgrade: EgressUpgrade; the gateway answers 101 and from then on
// the connection is the proxy's). The wrapper takes both variables out of
// its environment before anything else runs; the agent, another uid with
// an environment of its own, sees neither.
const (
	EnvEgressURL   = "TESTFIRST_EGRESS_URL"
	EnvEgressToken = "TESTFIRST_EGRESS_TOKEN"
	EgressUpgrade  = "testfirst-egress"
)

// dialer opens one connection to the egress proxy.
type dialer func() (net.Conn, error)

// upstream returns the dialer of the proxy: the URL of EnvEgressURL when
// set, the socket otherwise. It unsets both variables.
func upstream(socket string) (dialer, error) {
	raw, token := os.Getenv(EnvEgressURL), os.Getenv(EnvEgressToken)
	os.Unsetenv(EnvEgressURL)
	os.Unsetenv(EnvEgressToken)
	if raw == "" {
		return socketDialer(socket), nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || token == "" {
		return nil, fmt.Errorf("relay to the egress proxy: %s %q with a token: want an http(s) URL and a token", EnvEgressURL, raw)
	}
	return func() (net.Conn, error) { return dialUpgrade(u, token) }, nil
}

func socketDialer(socket string) dialer {
	return func() (net.Conn, error) { return net.Dial("unix", socket) }
}

// dialUpgrade connects to u and asks for the egress upgrade with token.
func dialUpgrade(u *url.URL, token string) (net.Conn, error) {
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	d := &net.Dialer{Timeout: 30 * time.Second}
	var c net.Conn
	var err error
	if u.Scheme == "https" {
		c, err = tls.DialWithDialer(d, "tcp", host, &tls.Config{ServerName: u.Hostname()})
	} else {
		c, err = d.Dial("tcp", host)
	}
	if err != nil {
		return nil, err
	}
	// The upgrade is written by hand: the wrapper, a domain package, keeps
	// net/http out (test/layout_test.go).
	path := u.RequestURI()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: %s\r\nAuthorization: Bearer %s\r\n\r\n",
		path, u.Host, EgressUpgrade, token); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	status, err := tp.ReadLine()
	if err != nil {
		c.Close()
		return nil, err
	}
	if _, err := tp.ReadMIMEHeader(); err != nil {
		c.Close()
		return nil, err
	}
	if proto, code, _ := strings.Cut(status, " "); !strings.HasPrefix(proto, "HTTP/1.") || !strings.HasPrefix(code, "101") {
		c.Close()
		return nil, fmt.Errorf("the egress gateway at %s answered %s", u.Redacted(), code)
	}
	c.SetDeadline(time.Time{})
	return &bufConn{Conn: c, r: br}, nil
}

// bufConn is a connection whose first bytes were read into r.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *bufConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// relay accepts connections on addr and joins each to a fresh connection
// to the egress proxy, until the wrapper exits. Nothing else of the
// container's network is used: it has only loopback (or, on E2B, a network
// that the provider's rules limit).
func relay(addr string, dial dialer) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("relay to the package index's proxy: listen on %s: %w", addr, err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go join(c, dial)
		}
	}()
	return l, nil
}

// join copies between c and a new connection to the proxy until both
// sides are done.
func join(c net.Conn, dial dialer) {
	defer c.Close()
	up, err := dial()
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\ntestfirst relay: the package index's proxy is not reachable: "+err.Error()+"\n")
		return
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, c)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	io.Copy(c, up)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	wg.Wait()
}

// proxyEnv is the environment that sends HTTP clients to the relay.
func proxyEnv() []string {
	u := "http://" + ProxyAddr
	return []string{"http_proxy=" + u, "https_proxy=" + u, "HTTP_PROXY=" + u, "HTTPS_PROXY=" + u}
}

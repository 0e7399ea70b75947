package e2b

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/testfirst-app/testfirst/wrapper"
)

// Gateway lets E2B sandboxes reach their runs' egress proxies, which
// listen on unix sockets of this host: the sandbox's relay asks URL for an
// upgrade (Upgrade: wrapper.EgressUpgrade) with its run's token, and the
// gateway joins the connection to that run's socket. A token is good for
// one run, until the run releases it; it reaches only that run's proxy,
// whose policy is the run's.
type Gateway struct {
	url *url.URL

	mu   sync.Mutex
	runs map[string]string // token → socket
}

// NewGateway returns a gateway reached from sandboxes at publicURL (http
// or https, through whatever routes it to this process's handler).
func NewGateway(publicURL string) (*Gateway, error) {
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("e2b.egress_url %q: want the absolute http(s) URL at which E2B's sandboxes reach this service's egress gateway", publicURL)
	}
	return &Gateway{url: u, runs: map[string]string{}}, nil
}

// URL is where sandboxes reach the gateway.
func (g *Gateway) URL() string { return g.url.String() }

// Host is the gateway's host name, the one destination a sandbox's
// network rules allow.
func (g *Gateway) Host() string { return g.url.Hostname() }

// Path is the URL's path, where the handler must be mounted.
func (g *Gateway) Path() string {
	if g.url.Path == "" {
		return "/"
	}
	return g.url.Path
}

// Register admits a sandbox to the proxy on socket; release ends it.
func (g *Gateway) Register(socket string) (token string, release func()) {
	b := make([]byte, 32)
	rand.Read(b)
	token = hex.EncodeToString(b)
	g.mu.Lock()
	g.runs[token] = socket
	g.mu.Unlock()
	return token, func() {
		g.mu.Lock()
		delete(g.runs, token)
		g.mu.Unlock()
	}
}

func (g *Gateway) socket(token string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for t, s := range g.runs {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return s, true
		}
	}
	return "", false
}

// ServeHTTP answers one sandbox's upgrade.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), wrapper.EgressUpgrade) {
		http.Error(w, "egress gateway: want Upgrade: "+wrapper.EgressUpgrade, http.StatusUpgradeRequired)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sock, known := g.socket(token)
	if !ok || !known {
		http.Error(w, "egress gateway: the token names no run in progress", http.StatusUnauthorized)
		return
	}
	up, err := net.Dial("unix", sock)
	if err != nil {
		http.Error(w, "egress gateway: the run's proxy is gone: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "egress gateway: this server cannot hand over connections", http.StatusInternalServerError)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+wrapper.EgressUpgrade+"\r\n\r\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// What the client sent past its request is in brw's buffer.
		io.Copy(up, brw.Reader)
		up.(*net.UnixConn).CloseWrite()
	}()
	io.Copy(c, up)
	// The proxy has answered and closed its side: so does the sandbox's.
	c.Close()
	<-done
}

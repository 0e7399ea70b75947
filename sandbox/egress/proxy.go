package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Entry is one logged request.
type Entry struct {
	// Host is the host:port the request was for.
	Host string
	// Method is the HTTP method, CONNECT for a tunnel.
	Method string
	// Path is the request's path and query; empty for CONNECT.
	Path string
	// Status is the status the proxy answered with (200 for an opened
	// tunnel).
	Status int
	// Bytes counts the response body sent back, or for a tunnel the bytes
	// carried both ways.
	Bytes int64
	// Denied says why the proxy refused the request; empty when it did
	// not.
	Denied string
}

// Proxy forwards requests to the allowed hosts only. It is an
// http.Handler; Listen serves it on a unix socket.
type Proxy struct {
	allowed  map[string]bool
	readOnly bool
	log      func(Entry)
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	rt       http.RoundTripper
}

// Option changes a Proxy.
type Option func(*Proxy)

// ReadOnly makes the proxy forward GET and HEAD only and refuse CONNECT.
func ReadOnly() Option { return func(p *Proxy) { p.readOnly = true } }

// WithLog sends every request's Entry to log, instead of slog's default
// logger.
func WithLog(log func(Entry)) Option { return func(p *Proxy) { p.log = log } }

// dialTimeout bounds the connection to an allowed host.
const dialTimeout = 30 * time.Second

// New returns a proxy to the hosts allowed lists, each "host:port".
func New(allowed []string, opts ...Option) (*Proxy, error) {
	if len(allowed) == 0 {
		return nil, errors.New("egress proxy: no host is allowed")
	}
	p := &Proxy{allowed: map[string]bool{}}
	for _, a := range allowed {
		h, port, err := net.SplitHostPort(a)
		if err != nil || h == "" || port == "" {
			return nil, fmt.Errorf("egress proxy: allowed host %q: want host:port", a)
		}
		p.allowed[strings.ToLower(net.JoinHostPort(h, port))] = true
	}
	for _, o := range opts {
		o(p)
	}
	if p.log == nil {
		p.log = func(e Entry) {
			slog.Info("egress", "host", e.Host, "method", e.Method, "path", e.Path, "status", e.Status, "bytes", e.Bytes, "denied", e.Denied)
		}
	}
	d := &net.Dialer{Timeout: dialTimeout}
	p.dial = d.DialContext
	p.rt = &http.Transport{
		Proxy:                 nil, // never another proxy
		DialContext:           p.dial,
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          16,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
	}
	return p, nil
}

// AllowedFor returns the hosts a proxy must allow for the package index at
// indexURL: its own host and port and, for the public index, the host its
// files are served from.
func AllowedFor(indexURL string) ([]string, error) {
	u, err := url.Parse(indexURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("package index %q: want an http or https URL such as https://pypi.org/simple", indexURL)
	}
	out := []string{hostPort(u)}
	if strings.EqualFold(u.Hostname(), "pypi.org") {
		out = append(out, "files.pythonhosted.org:443")
	}
	return out, nil
}

// hostPort is u's host with its port, the scheme's default when u names
// none, lower case.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}

// hopHeaders are the headers of one connection, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// ServeHTTP forwards r when its host is allowed (and, read-only, its method
// is GET or HEAD), and answers 403 otherwise.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	e := Entry{Method: r.Method}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		e.Host, e.Path, e.Status, e.Denied = r.Host, r.URL.RequestURI(), http.StatusBadRequest, "not a proxy request"
		p.refuse(w, e, "egress proxy: send proxy requests (an absolute URL)")
		return
	}
	e.Host, e.Path = hostPort(r.URL), r.URL.RequestURI()
	if !p.allowed[e.Host] {
		e.Status, e.Denied = http.StatusForbidden, "host not allowed"
		p.refuse(w, e, "egress proxy: "+e.Host+" is not the package index")
		return
	}
	if p.readOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
		e.Status, e.Denied = http.StatusForbidden, "read-only"
		p.refuse(w, e, "egress proxy: read-only, "+r.Method+" is not allowed")
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if p.readOnly {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		e.Status, e.Denied = http.StatusBadGateway, "upstream: "+err.Error()
		p.refuse(w, e, "egress proxy: "+err.Error())
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	e.Status = resp.StatusCode
	e.Bytes, _ = io.Copy(w, resp.Body)
	p.log(e)
}

// connect opens a tunnel to an allowed host, unless the proxy is
// read-only.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	e := Entry{Method: http.MethodConnect, Host: strings.ToLower(r.Host)}
	switch {
	case p.readOnly:
		e.Status, e.Denied = http.StatusForbidden, "read-only"
		p.refuse(w, e, "egress proxy: read-only, CONNECT is not allowed")
		return
	case !p.allowed[e.Host]:
		e.Status, e.Denied = http.StatusForbidden, "host not allowed"
		p.refuse(w, e, "egress proxy: "+e.Host+" is not the package index")
		return
	}
	up, err := p.dial(r.Context(), "tcp", e.Host)
	if err != nil {
		e.Status, e.Denied = http.StatusBadGateway, "upstream: "+err.Error()
		p.refuse(w, e, "egress proxy: "+err.Error())
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		e.Status, e.Denied = http.StatusInternalServerError, "cannot hijack"
		p.refuse(w, e, "egress proxy: cannot open a tunnel here")
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		e.Status, e.Denied = http.StatusInternalServerError, "hijack: "+err.Error()
		p.log(e)
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	e.Status = http.StatusOK
	var wg sync.WaitGroup
	var in, outN int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		in, _ = io.Copy(up, buf)
		if c, ok := up.(interface{ CloseWrite() error }); ok {
			c.CloseWrite()
		}
	}()
	outN, _ = io.Copy(conn, up)
	conn.Close()
	wg.Wait()
	e.Bytes = in + outN
	p.log(e)
}

func (p *Proxy) refuse(w http.ResponseWriter, e Entry, msg string) {
	p.log(e)
	http.Error(w, msg, e.Status)
}

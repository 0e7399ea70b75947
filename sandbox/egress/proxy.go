package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
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
	// BytesIn counts what the client sent: the request body, or for a
	// tunnel the bytes that went up. BytesOut counts what it got back: the
	// response body, or the bytes that came down a tunnel.
	BytesIn, BytesOut int64
	// Denied says why the proxy refused the request; empty when it did
	// not.
	Denied string
	// Model names the model route the request took (see WithModel); its
	// Host and Path are then the real API's.
	Model string
	// Body is the start of the request body, up to WithBodyKept's bound;
	// never a tunnel's, whose content the proxy cannot read.
	Body []byte
}

// Proxy forwards requests to the allowed hosts only, and requests for
// /model/<name> to a model API with its key added. GitHub's hosts are
// refused whatever is allowed. It is an http.Handler; Listen serves it on
// a unix socket.
type Proxy struct {
	allowed  []allowedHost
	readOnly bool
	log      func(Entry)
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	dialer   *net.Dialer
	resolve  func(ctx context.Context, host string) ([]netip.Addr, error)
	// internal are the internal addresses an allowed name may resolve to
	// (WithInternal), named the addresses written in the allowlist and
	// the model APIs' URLs, with their ports.
	internalSpec []string
	internal     []netip.Prefix
	named        map[netip.AddrPort]bool
	rt           http.RoundTripper
	models       map[string]model
	githubHost   string
	maxRequest   int64
	maxTunnel    int64
	bodyKept     int
	peerUIDs     []int
	// index is the package index whose credentials the proxy adds
	// (WithIndexCredentials); nil when it adds none.
	index *indexCredentials
	// failures are what went wrong upstream, newest last (Failures).
	failMu   sync.Mutex
	failures []failure
	// inflight counts requests being served, so that Close returns once
	// each is logged.
	inflight sync.WaitGroup
}

// allowedHost is one entry of the allowlist: a host name, or "*.domain"
// for any name below domain, and a port.
type allowedHost struct{ host, port string }

// model is a model API a sandbox reaches at /model/<name>.
type model struct {
	target *url.URL
	header string
	key    string
}

// Option changes a Proxy.
type Option func(*Proxy)

// ReadOnly makes the proxy forward GET and HEAD only and refuse CONNECT.
func ReadOnly() Option { return func(p *Proxy) { p.readOnly = true } }

// Header styles of a model API's key.
const (
	// HeaderAPIKey sends the key as "X-Api-Key: <key>".
	HeaderAPIKey = "x-api-key"
	// HeaderBearer sends it as "Authorization: Bearer <key>".
	HeaderBearer = "authorization-bearer"
)

// ModelPrefix is the path below which a sandbox reaches its model APIs:
// ModelPrefix + name + the API's own path.
const ModelPrefix = "/model/"

// WithModel routes requests for /model/<name>/... (sent to the proxy as
// origin-form requests, or to its relay address) to target's base URL
// plus the rest of the path, with key added in header's style (HeaderAPIKey
// or HeaderBearer) and any key the sandbox sent removed: the sandbox
// never holds the key. New fails on a bad target or header.
func WithModel(name, target, header, key string) Option {
	return func(p *Proxy) {
		if p.models == nil {
			p.models = map[string]model{}
		}
		u, _ := url.Parse(target)
		p.models[name] = model{target: u, header: header, key: key}
	}
}

// WithGitHubHost refuses host (a GitHub Enterprise host) and the names
// below it, as github.com is refused.
func WithGitHubHost(host string) Option {
	return func(p *Proxy) { p.githubHost = strings.TrimSuffix(strings.ToLower(host), ".") }
}

// Default bounds of what one request may send.
const (
	// DefaultMaxRequestBytes bounds a forwarded request's body.
	DefaultMaxRequestBytes = 32 << 20
	// DefaultMaxTunnelBytes bounds what goes up one CONNECT tunnel.
	DefaultMaxTunnelBytes = 64 << 20
	// maxHeaderBytes bounds a request's header.
	maxHeaderBytes = 64 << 10
)

// WithMaxRequestBytes bounds a forwarded request's body (answered 413
// beyond it) and what goes up one tunnel (cut beyond it).
func WithMaxRequestBytes(body, tunnel int64) Option {
	return func(p *Proxy) { p.maxRequest, p.maxTunnel = body, tunnel }
}

// WithBodyKept keeps up to n bytes of each forwarded request's body in its
// Entry, so what a sandbox sent can be scanned.
func WithBodyKept(n int) Option { return func(p *Proxy) { p.bodyKept = n } }

// DefaultPeerUIDs are the uids that may connect to a proxy's socket
// unless WithPeerUIDs says otherwise: 0, the sandbox container's root as
// the host's kernel sees it under Docker without user namespace remapping
// (runc); it is the wrapper's relay, running as that root, that connects.
var DefaultPeerUIDs = []int{0}

// WithPeerUIDs lets processes of these uids (as the host's kernel sees
// them, SO_PEERCRED) use the proxy's socket, and no other: the sandbox's
// uid, which is the container root's uid on the host (a subordinate uid
// under Docker's userns-remap, say). Anyone else who connects is answered
// 403 and logged. DefaultPeerUIDs when not given.
func WithPeerUIDs(uids ...int) Option {
	return func(p *Proxy) { p.peerUIDs = append([]int(nil), uids...) }
}

// indexCredentials are a package index's credentials and where they go:
// requests for hostPort, sent as plain http by the sandbox, go upstream
// with scheme and an Authorization header.
type indexCredentials struct {
	hostPort, scheme string
	authorization    string
	bad              error
}

// WithIndexCredentials adds the credentials of indexURL
// (http[s]://user:password@host/...) to the requests that reach its host
// and port, so that the sandbox, which is given the URL without them,
// never holds them. An https index is asked for as plain http at its
// port (http://host:443/...; the proxy goes upstream over TLS): the
// credentials go on requests the proxy can read, never into a tunnel. An
// index URL without credentials adds nothing. New fails on a URL that is
// not an http(s) URL.
func WithIndexCredentials(indexURL string) Option {
	return func(p *Proxy) {
		u, err := url.Parse(indexURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			p.index = &indexCredentials{bad: errors.New("egress proxy: package index: want an http or https URL")}
			return
		}
		if u.User == nil {
			p.index = nil
			return
		}
		pass, _ := u.User.Password()
		req := &http.Request{Header: http.Header{}}
		req.SetBasicAuth(u.User.Username(), pass)
		p.index = &indexCredentials{hostPort: hostPort(u), scheme: u.Scheme, authorization: req.Header.Get("Authorization")}
	}
}

// WithLog sends every request's Entry to log, instead of slog's default
// logger.
func WithLog(log func(Entry)) Option { return func(p *Proxy) { p.log = log } }

// dialTimeout bounds the connection to an allowed host.
const dialTimeout = 30 * time.Second

// New returns a proxy to the hosts allowed lists, each "host:port" or
// "*.domain:port" (any name below domain). GitHub's hosts are refused even
// when listed. A name is reached at the addresses it resolves to that are
// public: loopback, private, link-local, metadata and the like are refused
// unless the operator names them, by writing the address itself
// ("127.0.0.1:8080", as tests name their loopback upstreams) or with
// WithInternal; the same holds for a model API's URL. A CONNECT tunnel's
// TLS must name its host (the ClientHello's server name, when it carries
// one), or the tunnel is cut.
func New(allowed []string, opts ...Option) (*Proxy, error) {
	p := &Proxy{maxRequest: DefaultMaxRequestBytes, maxTunnel: DefaultMaxTunnelBytes, peerUIDs: DefaultPeerUIDs}
	for _, a := range allowed {
		h, port, err := net.SplitHostPort(a)
		name := strings.TrimPrefix(h, "*.")
		if err != nil || name == "" || port == "" || strings.ContainsAny(name, "*/@ ") {
			return nil, fmt.Errorf("egress proxy: allowed host %q: want host:port or *.domain:port", a)
		}
		p.allowed = append(p.allowed, allowedHost{host: strings.ToLower(h), port: port})
	}
	for _, o := range opts {
		o(p)
	}
	if len(p.allowed) == 0 && len(p.models) == 0 {
		return nil, errors.New("egress proxy: no host is allowed")
	}
	if p.index != nil && p.index.bad != nil {
		return nil, p.index.bad
	}
	if len(p.peerUIDs) == 0 {
		return nil, errors.New("egress proxy: no uid may connect: name the sandbox's uid (WithPeerUIDs)")
	}
	for _, u := range p.peerUIDs {
		if u < 0 {
			return nil, fmt.Errorf("egress proxy: peer uid %d: want a uid", u)
		}
	}
	for name, m := range p.models {
		switch {
		case name == "" || strings.ContainsAny(name, "/?#"):
			return nil, fmt.Errorf("egress proxy: model API name %q: want a name without /", name)
		case m.target == nil || m.target.Host == "" || (m.target.Scheme != "http" && m.target.Scheme != "https"):
			return nil, fmt.Errorf("egress proxy: model API %s: want an http or https URL", name)
		case m.header != HeaderAPIKey && m.header != HeaderBearer:
			return nil, fmt.Errorf("egress proxy: model API %s: header %q: want %s or %s", name, m.header, HeaderAPIKey, HeaderBearer)
		case m.key == "":
			return nil, fmt.Errorf("egress proxy: model API %s: no key", name)
		case p.isGitHub(m.target.Hostname()):
			return nil, fmt.Errorf("egress proxy: model API %s: %s is GitHub's, never reachable", name, m.target.Host)
		}
	}
	p.named = map[netip.AddrPort]bool{}
	for _, a := range p.allowed {
		if ap, err := netip.ParseAddrPort(a.host + ":" + a.port); err == nil {
			p.named[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
		} else if ap, err := netip.ParseAddrPort("[" + a.host + "]:" + a.port); err == nil {
			p.named[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
		}
	}
	for _, m := range p.models {
		if ap, err := netip.ParseAddrPort(hostPort(m.target)); err == nil {
			p.named[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
		}
	}
	for _, a := range p.internalSpec {
		pre, err := netip.ParsePrefix(a)
		if err != nil {
			addr, aerr := netip.ParseAddr(a)
			if aerr != nil {
				return nil, fmt.Errorf("egress proxy: internal address %q: want an address (10.1.2.3) or a prefix (10.0.0.0/8)", a)
			}
			pre = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		p.internal = append(p.internal, pre.Masked())
	}
	if p.log == nil {
		p.log = func(e Entry) {
			slog.Info("egress", "host", e.Host, "method", e.Method, "path", e.Path, "status", e.Status, "bytes_in", e.BytesIn, "bytes_out", e.BytesOut, "denied", e.Denied, "model", e.Model)
		}
	}
	p.dialer = &net.Dialer{Timeout: dialTimeout}
	if p.resolve == nil {
		p.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	p.dial = p.dialChecked
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

// allows reports whether hostPort ("host:port", lower case) is on the
// allowlist.
func (p *Proxy) allows(hostPort string) bool {
	h, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	for _, a := range p.allowed {
		if a.port != port {
			continue
		}
		if d, ok := strings.CutPrefix(a.host, "*."); ok {
			if strings.HasSuffix(h, "."+d) {
				return true
			}
		} else if a.host == h {
			return true
		}
	}
	return false
}

// isGitHub reports whether host (no port) is GitHub's: github.com,
// *.github.com, *.githubusercontent.com, or the configured Enterprise host
// and the names below it.
func (p *Proxy) isGitHub(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, g := range []string{"github.com", "githubusercontent.com", p.githubHost} {
		if g != "" && (h == g || strings.HasSuffix(h, "."+g)) {
			return true
		}
	}
	return false
}

// check says why a request for hostPort is refused, "" when it is not.
func (p *Proxy) check(hostPort string) (denied, msg string) {
	h, _, _ := net.SplitHostPort(hostPort)
	switch {
	case p.isGitHub(h):
		return "github", "egress proxy: " + hostPort + " is GitHub's: never reachable from a sandbox"
	case !p.allows(hostPort):
		return "host not allowed", "egress proxy: " + hostPort + " is not an allowed host"
	}
	return "", ""
}

// ServeHTTP forwards r when its host is allowed (and, read-only, its method
// is GET or HEAD), or to a model API when it asks for /model/<name>, and
// answers 403 otherwise.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.inflight.Add(1)
	defer p.inflight.Done()
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	e := Entry{Method: r.Method}
	if name, rest, ok := p.modelRoute(r); ok {
		p.forwardModel(w, r, e, name, rest)
		return
	}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		e.Host, e.Path, e.Status, e.Denied = r.Host, r.URL.RequestURI(), http.StatusBadRequest, "not a proxy request"
		p.refuse(w, e, "egress proxy: send proxy requests (an absolute URL), or "+ModelPrefix+"<name>/... for a model API")
		return
	}
	e.Host, e.Path = hostPort(r.URL), r.URL.RequestURI()
	if denied, msg := p.check(e.Host); denied != "" {
		e.Status, e.Denied = http.StatusForbidden, denied
		p.refuse(w, e, msg)
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
	if ix := p.index; ix != nil && r.URL.Scheme == "http" && e.Host == ix.hostPort {
		// The index's credentials are ours: whatever the sandbox sent in
		// their place is dropped.
		out.URL.Scheme = ix.scheme
		out.Header.Set("Authorization", ix.authorization)
	}
	if p.readOnly {
		out.Body, out.ContentLength = http.NoBody, 0
	} else if !p.readBody(w, r, out, &e) {
		return
	}
	p.roundTrip(w, out, e)
}

// readBody reads r's body, within the bound, into out and e; it answers
// 413 and returns false for a body past it.
func (p *Proxy) readBody(w http.ResponseWriter, r, out *http.Request, e *Entry) bool {
	if r.ContentLength > p.maxRequest {
		e.Status, e.Denied, e.BytesIn = http.StatusRequestEntityTooLarge, "request too large", r.ContentLength
		p.refuse(w, *e, fmt.Sprintf("egress proxy: a request body may hold %d bytes at most", p.maxRequest))
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, p.maxRequest+1))
	e.BytesIn = int64(len(body))
	switch {
	case int64(len(body)) > p.maxRequest:
		e.Status, e.Denied = http.StatusRequestEntityTooLarge, "request too large"
		p.refuse(w, *e, fmt.Sprintf("egress proxy: a request body may hold %d bytes at most", p.maxRequest))
		return false
	case err != nil:
		e.Status, e.Denied = http.StatusBadRequest, "request body: "+err.Error()
		p.refuse(w, *e, "egress proxy: reading the request body: "+err.Error())
		return false
	}
	if n := min(len(body), p.bodyKept); n > 0 {
		e.Body = bytes.Clone(body[:n])
	}
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	out.GetBody = nil
	out.Header.Del("Content-Length")
	return true
}

// roundTrip sends out upstream and copies the answer back, flushing as it
// comes (model APIs stream their answers).
func (p *Proxy) roundTrip(w http.ResponseWriter, out *http.Request, e Entry) {
	resp, err := p.rt.RoundTrip(out)
	if ie := (*InternalError)(nil); errors.As(err, &ie) {
		p.noteFailure(e.Host, ie, 0)
		e.Status, e.Denied = http.StatusForbidden, "internal address"
		p.refuse(w, e, "egress proxy: "+ie.Error())
		return
	}
	if err != nil {
		p.noteFailure(e.Host, err, 0)
		e.Status, e.Denied = http.StatusBadGateway, "upstream: "+err.Error()
		p.refuse(w, e, "egress proxy: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		p.noteFailure(e.Host, nil, resp.StatusCode)
	}
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
	e.Bytes, _ = io.Copy(flushWriter{w}, resp.Body)
	e.BytesOut = e.Bytes
	p.log(e)
}

// flushWriter flushes after every write.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// modelRoute reports whether r asks for a model API: a path below
// ModelPrefix, sent as an origin-form request (straight to the relay) or
// as a proxy request for the relay's own loopback address. It returns the
// model API's name and the rest of the path.
func (p *Proxy) modelRoute(r *http.Request) (name, rest string, ok bool) {
	if r.URL.Host != "" {
		h := r.URL.Hostname()
		if h != "127.0.0.1" && h != "localhost" && h != "::1" {
			return "", "", false
		}
	}
	after, ok := strings.CutPrefix(r.URL.Path, ModelPrefix)
	if !ok {
		return "", "", false
	}
	name, rest, _ = strings.Cut(after, "/")
	return name, "/" + rest, true
}

// endpoint is one request a model route forwards: a method and a path, in
// which "*" stands for one segment of modelIDChars.
type endpoint struct{ method, path string }

// modelEndpoints are the requests a model route forwards, by its key's
// style, which says whose API it is: what the agents' CLIs and SDKs need
// of it, nothing else (no files, batches, fine-tuning, admin or key
// endpoints, which the key would open too).
var modelEndpoints = map[string][]endpoint{
	// Anthropic's Messages API.
	HeaderAPIKey: {
		{http.MethodPost, "/v1/messages"},
		{http.MethodPost, "/v1/messages/count_tokens"},
		{http.MethodGet, "/v1/models"},
		{http.MethodGet, "/v1/models/*"},
	},
	// OpenAI's Responses and Chat Completions APIs.
	HeaderBearer: {
		{http.MethodPost, "/v1/responses"},
		{http.MethodPost, "/v1/chat/completions"},
		{http.MethodGet, "/v1/models"},
		{http.MethodGet, "/v1/models/*"},
	},
}

// modelIDChars are the bytes a model id in a path may hold.
const modelIDChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:@"

// ModelEndpoints lists what a model route of header's style forwards, as
// "METHOD /path" ("<id>" for a model id), for messages and docs.
func ModelEndpoints(header string) []string {
	var out []string
	for _, ep := range modelEndpoints[header] {
		out = append(out, ep.method+" "+strings.ReplaceAll(ep.path, "*", "<id>"))
	}
	return out
}

// modelEndpoint says why r, whose path below its model API's name is
// rest, is not a request the model API of header's style forwards; ""
// when it is. The path must be written plainly (no encoded byte, no
// backslash, no empty or dot segment) and then be one of modelEndpoints.
func modelEndpoint(r *http.Request, header, rest string) (denied, msg string) {
	switch {
	case strings.Contains(r.URL.EscapedPath(), "%"):
		return "model path not clean", "a path with an encoded byte (%2F, %2E, ...) is refused: write it plainly"
	case strings.Contains(r.URL.Path, "\\"):
		return "model path not clean", "a path with a backslash is refused"
	case strings.Contains(r.URL.Path, "//"):
		return "model path not clean", "a path with an empty segment (//) is refused"
	}
	for _, seg := range strings.Split(r.URL.Path, "/") {
		if seg == "." || seg == ".." {
			return "model path not clean", "a path with a dot segment (. or ..) is refused"
		}
	}
	for _, ep := range modelEndpoints[header] {
		if ep.method == r.Method && matchEndpoint(ep.path, rest) {
			return "", ""
		}
	}
	return "model endpoint not allowed", r.Method + " " + rest + " is not forwarded: only " + strings.Join(ModelEndpoints(header), ", ")
}

// matchEndpoint reports whether path is pattern, each "*" of it one
// non-empty segment of modelIDChars.
func matchEndpoint(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if p == "*" {
			if xs[i] == "" || strings.Trim(xs[i], modelIDChars) != "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}

// forwardModel sends r to the model API name, at its base URL plus rest,
// with the API's key in place of whatever key r carried.
func (p *Proxy) forwardModel(w http.ResponseWriter, r *http.Request, e Entry, name, rest string) {
	e.Model = name
	m, ok := p.models[name]
	if !ok {
		e.Host, e.Path, e.Status, e.Denied = r.Host, r.URL.RequestURI(), http.StatusForbidden, "model API not allowed"
		p.refuse(w, e, "egress proxy: no model API "+strconv.Quote(name)+" for this sandbox")
		return
	}
	if denied, msg := modelEndpoint(r, m.header, rest); denied != "" {
		e.Host, e.Path, e.Status, e.Denied = r.Host, r.URL.RequestURI(), http.StatusForbidden, denied
		p.refuse(w, e, "egress proxy: model API "+name+": "+msg)
		return
	}
	target := *m.target
	target.Path = strings.TrimSuffix(m.target.Path, "/") + rest
	target.RawPath = ""
	target.RawQuery = r.URL.RawQuery
	e.Host, e.Path = hostPort(&target), target.RequestURI()
	if p.readOnly {
		e.Status, e.Denied = http.StatusForbidden, "read-only"
		p.refuse(w, e, "egress proxy: read-only, no model API")
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI, out.URL, out.Host = "", &target, target.Host
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	// Whatever key the sandbox holds is a placeholder; only ours goes on.
	out.Header.Del("Authorization")
	out.Header.Del("X-Api-Key")
	if m.header == HeaderBearer {
		out.Header.Set("Authorization", "Bearer "+m.key)
	} else {
		out.Header.Set("X-Api-Key", m.key)
	}
	if !p.readBody(w, r, out, &e) {
		return
	}
	p.roundTrip(w, out, e)
}

// connect opens a tunnel to an allowed host, unless the proxy is
// read-only.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	e := Entry{Method: http.MethodConnect, Host: strings.ToLower(r.Host)}
	if p.readOnly {
		e.Status, e.Denied = http.StatusForbidden, "read-only"
		p.refuse(w, e, "egress proxy: read-only, CONNECT is not allowed")
		return
	}
	if denied, msg := p.check(e.Host); denied != "" {
		e.Status, e.Denied = http.StatusForbidden, denied
		p.refuse(w, e, msg)
		return
	}
	up, err := p.dial(r.Context(), "tcp", e.Host)
	if ie := (*InternalError)(nil); errors.As(err, &ie) {
		p.noteFailure(e.Host, ie, 0)
		e.Status, e.Denied = http.StatusForbidden, "internal address"
		p.refuse(w, e, "egress proxy: "+ie.Error())
		return
	}
	if err != nil {
		p.noteFailure(e.Host, err, 0)
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
	var denied string
	go func() {
		defer wg.Done()
		// TLS goes up only for the host the tunnel was opened to: the
		// ClientHello's server name, when it has one, must be it.
		name, hello, isTLS, err := sniffHello(conn, buf.Reader)
		switch {
		case isTLS && err != nil:
			denied = "tls client hello unreadable: " + err.Error()
		case name != "" && !sameHost(name, e.Host):
			denied = "tls server name " + strconv.Quote(name) + " is not the tunnel's host"
		}
		if denied != "" {
			in = int64(len(hello))
			up.Close()
			conn.Close()
			return
		}
		if len(hello) > 0 {
			n, err := up.Write(hello)
			in += int64(n)
			if err != nil {
				return
			}
		}
		n, _ := io.Copy(up, io.LimitReader(buf, p.maxTunnel+1-in))
		in += n
		if in > p.maxTunnel {
			// Past the bound: the tunnel is cut both ways.
			up.Close()
			conn.Close()
			return
		}
		if c, ok := up.(interface{ CloseWrite() error }); ok {
			c.CloseWrite()
		}
	}()
	outN, _ = io.Copy(conn, up)
	conn.Close()
	wg.Wait()
	e.Bytes, e.BytesIn, e.BytesOut = in+outN, in, outN
	if in > p.maxTunnel {
		e.Denied = "tunnel too large"
	}
	if denied != "" {
		e.Status, e.Denied = http.StatusForbidden, denied
	}
	p.log(e)
}

func (p *Proxy) refuse(w http.ResponseWriter, e Entry, msg string) {
	p.log(e)
	http.Error(w, msg, e.Status)
}

package agent

import (
	"net"
	"strings"
)

// EgressPolicy is what one run's egress proxy lets through.
type EgressPolicy struct {
	// Allow lists the hosts the agent may reach, each "host:port" or
	// "*.domain:port".
	Allow []string
	// Model, when set, is the model API the agent reaches at
	// http://127.0.0.1:3128/model/<Model.Name>.
	Model *ModelRoute
	// GitHubHost is the GitHub Enterprise host, refused like github.com.
	// GitHub's own hosts are always refused.
	GitHubHost string
	// MaxRequestBytes bounds a request body, MaxTunnelBytes what goes up
	// one CONNECT tunnel.
	MaxRequestBytes, MaxTunnelBytes int64
	// BodyKept is how much of each request body the records keep.
	BodyKept int
}

// ModelRoute is a model API as the proxy forwards to it.
type ModelRoute struct {
	// Name is the path segment after /model/.
	Name string
	// URL is the real API's base URL.
	URL string
	// Header is HeaderAPIKey or HeaderBearer.
	Header string
	// Key is the real API key. It stays in this process and the proxy's:
	// never in a sandbox.
	Key string
}

// EgressProxy serves one run's egress proxy; agent/egressproxy implements
// it with sandbox/egress.
type EgressProxy interface {
	// Serve starts a proxy with policy p on a fresh unix socket. It fails
	// when p is invalid or the socket cannot be made.
	Serve(p EgressPolicy) (EgressSession, error)
}

// EgressSession is one run's proxy.
type EgressSession interface {
	// Socket is the host path of the proxy's unix socket.
	Socket() string
	// Close stops the proxy, waits until every request in flight is
	// recorded and removes the socket.
	Close() error
	// Records lists the requests served so far, in the order they ended.
	Records() []EgressRecord
}

// DefaultIndexHosts are where the public package index (pypi.org) serves
// from.
var DefaultIndexHosts = []string{"pypi.org:443", "files.pythonhosted.org:443"}

// Bounds of an agent's requests.
const (
	maxRequestBytes = 32 << 20
	maxTunnelBytes  = 256 << 20
	bodyKept        = 256 << 10
)

// egressHosts turns a harness's egress entries into the proxy's
// "host:port" form: an entry without a port allows 443 and 80.
func egressHosts(entries []string) []string {
	var out []string
	for _, e := range entries {
		host, port, err := parseEgressHost(e)
		if err != nil {
			continue // Validate has said so
		}
		if port != "" {
			out = append(out, net.JoinHostPort(host, port))
			continue
		}
		out = append(out, net.JoinHostPort(host, "443"), net.JoinHostPort(host, "80"))
	}
	return out
}

// placeholderKey is the API key an agent's environment holds: any value
// the CLIs accept, worth nothing.
const placeholderKey = "testfirst-placeholder-no-key-here"

// modelEnv is the environment that points an agent's SDKs at the proxy's
// model route for m.
func modelEnv(m ModelAPI) []string {
	u := "http://127.0.0.1:3128/model/" + m.Name
	env := []string{"TESTFIRST_MODEL_URL=" + u}
	if m.Header == HeaderBearer {
		return append(env, "OPENAI_BASE_URL="+strings.TrimSuffix(u, "/")+"/v1", "OPENAI_API_KEY="+placeholderKey)
	}
	return append(env, "ANTHROPIC_BASE_URL="+u, "ANTHROPIC_API_KEY="+placeholderKey)
}

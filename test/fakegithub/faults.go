package fakegithub

import (
	"net"
	"net/http"
	"strings"
)

// fault is one injected failure, used once.
type fault struct {
	method string
	prefix string
	status int
	header http.Header
	// body, when set, must appear in the request's body.
	body string
}

// matches reports whether the request r with body is one f is for: its
// method (any when f's is ""), its path's prefix and its body.
func (f fault) matches(r *http.Request, body []byte) bool {
	return (f.method == "" || strings.EqualFold(f.method, r.Method)) && strings.HasPrefix(r.URL.Path, f.prefix) &&
		strings.Contains(string(body), f.body)
}

// addFaults adds n of f, its prefix made absolute.
func (s *Server) addFaults(f fault, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !strings.HasPrefix(f.prefix, "/") {
		f.prefix = "/" + f.prefix
	}
	for range n {
		s.faults = append(s.faults, f)
	}
}

// FailNext makes the next request whose method matches (any method when
// method is "") and whose path starts with pathPrefix (e.g.
// "/repos/o/r/check-runs") fail with status, before authentication, and
// then serve normally again. header is added to (and overrides) the usual
// headers. The body is GitHub's error JSON: a primary rate-limit message for
// 403/429 with "X-RateLimit-Remaining: 0", a secondary rate-limit message
// (which go-github maps to AbuseRateLimitError on 403) for other 403s with
// Retry-After and for every 429, and a generic message otherwise. Several
// pending faults are used in the order they were added.
func (s *Server) FailNext(method, pathPrefix string, status int, header http.Header) {
	s.addFaults(fault{method: method, prefix: pathPrefix, status: status, header: header.Clone()}, 1)
}

// takeFault removes and answers the first pending fault that matches the
// request, or returns nil. Callers hold s.mu.
func (s *Server) takeFault(r *http.Request, body []byte, rateKey string, base http.Header) *response {
	for i, f := range s.faults {
		if !f.matches(r, body) {
			continue
		}
		s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		remote, _, _ := net.SplitHostPort(r.RemoteAddr)
		msg, doc := faultMessage(f, rateKey, remote)
		resp := errorResponse(f.status, msg, doc)
		if base == nil {
			base = s.apiHeaders()
		}
		resp.header = mergeHeaders(base, s.rateHeaders(rateKey), f.header)
		return resp
	}
	return nil
}

// faultMessage picks GitHub's message and documentation URL for a fault.
func faultMessage(f fault, rateKey, remote string) (string, string) {
	limited := f.status == http.StatusForbidden || f.status == http.StatusTooManyRequests
	switch {
	case limited && f.header.Get("X-RateLimit-Remaining") == "0":
		return rateLimitMessage(rateKey, remote), rateDocs
	case f.status == http.StatusTooManyRequests || (limited && f.header.Get("Retry-After") != ""):
		return "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", secondaryRateDocs
	case f.status >= 500:
		return "Server Error", docsRoot
	case f.status == http.StatusUnauthorized:
		return msgBadCredentials, docsRoot
	case f.status == http.StatusUnprocessableEntity:
		return "Validation Failed", docsRoot
	}
	if text := http.StatusText(f.status); text != "" {
		return text, docsRoot
	}
	return "Error", docsRoot
}

package fakegithub

import (
	"net/http"
	"net/url"
	"time"
)

// Request is one request the fake received, with the status it answered.
type Request struct {
	Method string
	Path   string // unescaped, with a leading "/"
	Query  url.Values
	Header http.Header
	Body   []byte
	Status int
	// At is when the fake answered it.
	At time.Time
}

// Requests returns a copy of every request received so far, in order,
// including failed, unauthenticated and archive downloads.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Query = cloneValues(r.Query)
		r.Header = r.Header.Clone()
		r.Body = append([]byte(nil), r.Body...)
		out[i] = r
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

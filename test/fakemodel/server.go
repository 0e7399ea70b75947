package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Step is one answer of the script: a tool call, or, when Tool is empty,
// the final message.
type Step struct {
	// Tool is the name of the tool the model calls, as the CLI's request
	// lists it (claude-code's "Write", codex's "shell"); empty for the
	// final message.
	Tool string
	// Input is the tool call's input (its arguments, for OpenAI).
	Input map[string]any
	// Raw, when set, is the free-form input of a custom tool (OpenAI's
	// "custom" tools, such as codex's exec, take text, not JSON); the
	// call is then a custom tool call and Input is unused.
	Raw string
	// Text is what the model says with the step; for the final message,
	// all it says.
	Text string
}

// Request is one request the server received.
type Request struct {
	Method string
	// Path is the request's path and query.
	Path   string
	Header http.Header
	Body   []byte
	// Key is the credential the request carried: its x-api-key header, or
	// the token of its Authorization header.
	Key string
	// Step is the index of the script step it was answered with; -1 for
	// an answer outside the script (no tools, a token count, a refusal).
	Step int
}

// Server is the scripted model API.
type Server struct {
	*httptest.Server
	key    string
	script []Step

	mu       sync.Mutex
	requests []Request
	errs     []string
	addr     string
}

// Option changes a Server.
type Option func(*Server)

// WithKey makes the server answer 401 to any request that does not carry
// key, as the real service does with a wrong key.
func WithKey(key string) Option { return func(s *Server) { s.key = key } }

// WithAddr makes the server listen on addr (a loopback address and port,
// "127.0.0.2:0") rather than 127.0.0.1: a service whose fake GitHub is at
// 127.0.0.1 refuses a model API on GitHub's host.
func WithAddr(addr string) Option { return func(s *Server) { s.addr = addr } }

// New starts a server on 127.0.0.1 (or WithAddr's address) that answers
// with script. Close it when done.
func New(script []Step, opts ...Option) *Server {
	s := &Server{script: script}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.anthropicCountTokens)
	mux.HandleFunc("POST /v1/responses", s.openaiResponses)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail("no route for %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"error":{"type":"not_found_error","message":"fakemodel: no such route"}}`, http.StatusNotFound)
	})
	s.Server = httptest.NewUnstartedServer(s.record(mux))
	if s.addr != "" {
		l, err := net.Listen("tcp", s.addr)
		if err != nil {
			panic(fmt.Sprintf("fakemodel: listen on %s: %v", s.addr, err))
		}
		s.Server.Listener.Close()
		s.Server.Listener = l
	}
	s.Server.Start()
	return s
}

// requestKey is the credential r carries.
func requestKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// record keeps every request, and refuses those without the key.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req := Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Key: requestKey(r), Step: -1}
		rec := &stepRecorder{ResponseWriter: w, step: -1}
		if s.key != "" && req.Key != s.key {
			s.add(req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		next.ServeHTTP(rec, r)
		req.Step = rec.step
		s.add(req)
	})
}

// stepRecorder carries the step a handler answered with back to record.
type stepRecorder struct {
	http.ResponseWriter
	step int
}

// Flush passes a streamed answer's events on as they are written.
func (r *stepRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func answered(w http.ResponseWriter, step int) {
	if r, ok := w.(*stepRecorder); ok {
		r.step = step
	}
}

func (s *Server) add(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

func (s *Server) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Errors returns what the server could not answer as scripted: an
// unknown route, a step whose tool the request did not offer, a request
// past the script's end.
func (s *Server) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// step returns the script step for a conversation that holds results
// tool results and offers tools, or an error that says why there is none.
func (s *Server) step(results int, tools []string) (int, Step, error) {
	if results >= len(s.script) {
		return 0, Step{}, fmt.Errorf("the conversation holds %d tool results, past the script's %d steps", results, len(s.script))
	}
	st := s.script[results]
	if st.Tool == "" {
		return results, st, nil
	}
	for _, t := range tools {
		if t == st.Tool {
			return results, st, nil
		}
	}
	return 0, Step{}, fmt.Errorf("step %d calls tool %q, which the request does not offer (it offers %q)", results, st.Tool, tools)
}

// writeEvent writes one server-sent event and flushes it.
func writeEvent(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

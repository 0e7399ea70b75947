// Package egressproxy serves each agent run's egress proxy with
// sandbox/egress: the agent package's EgressProxy, kept apart so that
// package agent holds no HTTP.
package egressproxy

import (
	"sync"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/sandbox/egress"
)

// Proxies serves one proxy per run, on a fresh unix socket below a
// directory. It implements agent.EgressProxy.
type Proxies struct {
	dir  string
	log  func(egress.Entry)
	opts []egress.Option
}

var _ agent.EgressProxy = (*Proxies)(nil)

// New returns Proxies whose sockets are made below dir (the system's
// temporary directory when empty). log, when set, also gets every
// request's entry, as the service logs them. opts apply to every run's
// proxy before its policy: egress.WithPeerUIDs names the uid the agents'
// sandboxes connect as when it is not egress.DefaultPeerUIDs.
func New(dir string, log func(egress.Entry), opts ...egress.Option) *Proxies {
	return &Proxies{dir: dir, log: log, opts: opts}
}

// Serve starts a proxy with policy p. See agent.EgressProxy.
func (x *Proxies) Serve(p agent.EgressPolicy) (agent.EgressSession, error) {
	s := &session{}
	opts := append(append([]egress.Option(nil), x.opts...),
		egress.WithLog(s.record(x.log)),
		egress.WithGitHubHost(p.GitHubHost),
		egress.WithBodyKept(p.BodyKept),
	)
	if p.MaxRequestBytes > 0 && p.MaxTunnelBytes > 0 {
		opts = append(opts, egress.WithMaxRequestBytes(p.MaxRequestBytes, p.MaxTunnelBytes))
	}
	if m := p.Model; m != nil {
		opts = append(opts, egress.WithModel(m.Name, m.URL, m.Header, m.Key))
	}
	px, err := egress.New(p.Allow, opts...)
	if err != nil {
		return nil, err
	}
	if s.srv, err = px.Listen(x.dir); err != nil {
		return nil, err
	}
	return s, nil
}

// session is one run's proxy and its records.
type session struct {
	srv     *egress.Server
	mu      sync.Mutex
	records []agent.EgressRecord
}

func (s *session) record(also func(egress.Entry)) func(egress.Entry) {
	return func(e egress.Entry) {
		if also != nil {
			also(e)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.records = append(s.records, agent.EgressRecord{
			Host: e.Host, Method: e.Method, Path: e.Path, Status: e.Status,
			BytesIn: e.BytesIn, BytesOut: e.BytesOut, Allowed: e.Denied == "", Refused: e.Denied, Body: e.Body,
		})
	}
}

func (s *session) Socket() string { return s.srv.Socket }

func (s *session) Close() error { return s.srv.Close() }

func (s *session) Records() []agent.EgressRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]agent.EgressRecord(nil), s.records...)
}

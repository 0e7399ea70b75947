package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox/e2b"
)

// E2BConfig is the E2B account agents may run on (docs/e2b.md). Only
// harnesses with sandbox: e2b use it; the grader never runs there.
type E2BConfig struct {
	// APIKeyFile holds the team's API key (e2b.dev dashboard).
	APIKeyFile string `yaml:"api_key_file"`
	// Template is the template sandboxes are created from: the command
	// preset's image (git, python3) or one with the preset's CLI.
	Template string `yaml:"template"`
	// Domain is E2B's domain (its region or self-hosted cluster);
	// e2b.DefaultDomain when empty.
	Domain string `yaml:"domain"`
	// APIURL is the REST API's URL; https://api.<domain> when empty.
	APIURL string `yaml:"api_url"`
	// EgressURL is where sandboxes reach this service's egress gateway
	// (https://egress.example.com/egress): the one host their network
	// rules allow. EgressListen is the address the gateway listens on;
	// the operator routes EgressURL to it.
	EgressURL    string `yaml:"egress_url"`
	EgressListen string `yaml:"egress_listen"`
}

// used reports whether any harness runs on E2B.
func usesE2B(a agent.Config) bool {
	for _, h := range a.Harnesses {
		if h.OnE2B() {
			return true
		}
	}
	return false
}

func (c E2BConfig) validate(a agent.Config) []error {
	if !usesE2B(a) {
		return nil
	}
	var errs []error
	for _, s := range []struct{ name, v string }{{"api_key_file", c.APIKeyFile}, {"template", c.Template}, {"egress_url", c.EgressURL}, {"egress_listen", c.EgressListen}} {
		if s.v == "" {
			errs = append(errs, fmt.Errorf("e2b.%s: a harness has sandbox: e2b, so e2b needs api_key_file, template, egress_url and egress_listen (docs/e2b.md)", s.name))
		}
	}
	if c.EgressURL != "" {
		if _, err := e2b.NewGateway(c.EgressURL); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// openE2B returns the E2B engine agents run on and starts its egress
// gateway on EgressListen; stop closes the gateway.
func openE2B(c E2BConfig) (eng *e2b.Engine, stop func(), err error) {
	key, err := os.ReadFile(c.APIKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("e2b.api_key_file: %w", err)
	}
	if strings.TrimSpace(string(key)) == "" {
		return nil, nil, fmt.Errorf("e2b.api_key_file %s is empty: put the team's API key in it", c.APIKeyFile)
	}
	gw, err := e2b.NewGateway(c.EgressURL)
	if err != nil {
		return nil, nil, err
	}
	client := &e2b.Client{APIURL: c.APIURL, Domain: c.Domain, Key: strings.TrimSpace(string(key)), HTTP: &http.Client{Timeout: 0}}
	if eng, err = e2b.NewEngine(client, c.Template, gw); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", c.EgressListen)
	if err != nil {
		return nil, nil, fmt.Errorf("e2b.egress_listen %s: %w", c.EgressListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle(gw.Path(), gw)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return eng, func() { srv.Close() }, nil
}

// bothSandboxes is what the sweeper and a rescued job clear when agents
// also run on E2B: the grading engine's sandboxes and E2B's.
type bothSandboxes struct {
	grading jobs.Sandboxes
	e2b     *e2b.Engine
}

func (b bothSandboxes) Sweep(ctx context.Context, now time.Time) (int, error) {
	n, err := b.grading.Sweep(ctx, now)
	m, err2 := b.e2b.Sweep(ctx, now)
	return n + m, errors.Join(err, err2)
}

func (b bothSandboxes) RemoveLabelled(ctx context.Context, key, value string) (int, error) {
	n, err := b.grading.RemoveLabelled(ctx, key, value)
	m, err2 := b.e2b.RemoveLabelled(ctx, key, value)
	return n + m, errors.Join(err, err2)
}

func (b bothSandboxes) Running(ctx context.Context) (int, error) {
	n, err := b.grading.Running(ctx)
	m, err2 := b.e2b.Running(ctx)
	return n + m, errors.Join(err, err2)
}

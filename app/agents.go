package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox/e2b"
	"github.com/testfirst-app/testfirst/sandbox/egress"
)

// openAgents builds the runner of the harnesses the configuration names,
// on the grading's engine or, for a harness with sandbox: e2b, on E2B,
// each run with an egress proxy of its own on a socket below the egress
// directory: nil when no harness is configured. The E2B engine, when
// one is used, is returned for the sweep; stop closes its gateway.
func openAgents(ctx context.Context, svc Config, g *Grading, log *slog.Logger) (_ *jobs.Agents, _ *e2b.Engine, stop func(), err error) {
	stop = func() {}
	if len(svc.Agents.Harnesses) == 0 {
		return nil, nil, stop, nil
	}
	// The run's job must outlive the sandbox, which gets the agent's
	// timeout and a few minutes to set up and read the results.
	if limit := jobs.SandboxJobTimeout(svc.JobRescueAfter); svc.Agents.Limits.Timeout+5*time.Minute > limit {
		return nil, nil, stop, fmt.Errorf("agents.timeout %s: an agent run's job may take %s under job_rescue_after %s; lower agents.timeout or raise job_rescue_after",
			svc.Agents.Limits.Timeout, limit, svc.JobRescueAfter)
	}
	hosts, err := indexHosts(svc.PackageIndex)
	if err != nil {
		return nil, nil, stop, err
	}
	// The settings' peer uids and internal addresses hold for every run's
	// proxy: an index on a private network named by its name, or a
	// harness's egress entry, is reached only within egress_internal.
	proxies := egressproxy.New(svc.EgressDir, func(e egress.Entry) {
		log.InfoContext(ctx, "agent egress", "host", e.Host, "method", e.Method, "path", e.Path, "status", e.Status, "bytes", e.Bytes, "denied", e.Denied)
	}, svc.EgressOptions()...)
	var extraCA []byte
	if svc.AgentBuildCAFile != "" {
		if extraCA, err = os.ReadFile(svc.AgentBuildCAFile); err != nil {
			return nil, nil, stop, fmt.Errorf("agent_build_ca_file: %w", err)
		}
	}
	r, err := agent.NewSandboxRunner(g.Docker, proxies, svc.Agents, g.wrapper, agent.WithIndexHosts(hosts),
		agent.WithCLIs(g.Docker, proxies, extraCA, io.Discard))
	if err != nil {
		return nil, nil, stop, fmt.Errorf("agents: %w", err)
	}
	if !usesE2B(svc.Agents) {
		return &jobs.Agents{Config: svc.Agents, Runner: r}, nil, stop, nil
	}
	eng, stopGateway, err := openE2B(svc.E2B)
	if err != nil {
		return nil, nil, stop, err
	}
	// On E2B the relay reaches the proxy through the gateway, which
	// connects to the run's socket as this process's uid.
	e2bProxies := egressproxy.New(svc.EgressDir, func(e egress.Entry) {
		log.InfoContext(ctx, "agent egress", "provider", agent.SandboxE2B, "host", e.Host, "method", e.Method, "path", e.Path, "status", e.Status, "bytes", e.Bytes, "denied", e.Denied)
	}, append(svc.EgressOptions(), egress.WithPeerUIDs(os.Geteuid()))...)
	onE2B, err := agent.NewSandboxRunner(eng, e2bProxies, svc.Agents, g.wrapper, agent.WithIndexHosts(hosts))
	if err != nil {
		stopGateway()
		return nil, nil, stop, fmt.Errorf("agents on E2B: %w", err)
	}
	both, err := agent.NewProviderRunner(svc.Agents, r, onE2B)
	if err != nil {
		stopGateway()
		return nil, nil, stop, err
	}
	log.InfoContext(ctx, "agents on E2B", "template", svc.E2B.Template, "domain", svc.E2B.Domain, "egress_url", svc.E2B.EgressURL)
	return &jobs.Agents{Config: svc.Agents, Runner: both}, eng, stopGateway, nil
}

// indexHosts are the package index's hosts ("host:port") agents may
// reach: the operator's index, or the public one's.
func indexHosts(index string) ([]string, error) {
	if index == "" || index == environment.DefaultIndex {
		return agent.DefaultIndexHosts, nil
	}
	u, err := url.Parse(index)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("package_index %q: want the index's absolute URL", index)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return []string{net.JoinHostPort(u.Hostname(), port)}, nil
}

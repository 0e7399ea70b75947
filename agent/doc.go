// Package agent runs the writer and implementer agents of a ticket, each in
// a sealed sandbox of its own: the base tree as one commit in /workspace,
// the task in /task, the harness's files read-only in /agent, results in
// /out, no credential of any kind, and no way out but the egress proxy's
// unix socket, relayed to 127.0.0.1:3128 inside.
//
// It owns the agents' configuration (model APIs, harnesses, limits,
// independence), the task an agent is given, what it hands back, and the
// Runner that runs it on a sandbox engine. It holds no engine and no HTTP:
// the caller gives the runner the engine (sandbox/docker) and a way to
// serve one run's egress proxy (sandbox/egress, through agent/egressproxy).
package agent

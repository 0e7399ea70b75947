// Package e2b runs agent sandboxes on E2B (e2b.dev): Firecracker microVMs
// created from a template through E2B's sandboxes REST API, commands and
// files through the daemon inside each one (envd).
//
// No Go SDK of E2B exists; Client speaks the published descriptions
// itself: the REST API (E2B's spec/openapi.yml: POST /sandboxes, GET
// /v2/sandboxes with a metadata filter, POST /sandboxes/{id}/timeout,
// DELETE /sandboxes/{id}, authenticated by X-API-Key) and envd's (its
// spec/envd: the Connect RPC service process.Process, whose Start is a
// server stream of start, data, end and keepalive events, and the HTTP
// /files upload and download, authenticated by the sandbox's
// X-Access-Token, on the host 49983-<sandboxID>.<domain>). The Connect
// calls use Connect's JSON encoding with structs of this package: six
// messages do not warrant a protobuf toolchain and generated code, and the
// fake (test/fakee2b) speaks the same JSON.
//
// Engine implements what package agent asks of a sandbox engine, so that
// the writer and the implementer can run on E2B; the grader never does (a
// sealed sandbox cannot start there). A sandbox cannot mount the egress
// proxy's unix socket, so Gateway serves each run's proxy to it over an
// authenticated URL (an HTTP upgrade with a token that names one run), and
// the sandbox is created with network rules that let it reach only the
// gateway's host. Every sandbox carries metadata with its deadline and is
// killed when its run ends, and by E2B at its own timeout; Sweep kills
// what a dead process left.
package e2b

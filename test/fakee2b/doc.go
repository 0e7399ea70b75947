// Package fakee2b is a stateful fake of E2B for tests: its sandboxes REST
// API (POST /sandboxes, GET /v2/sandboxes with the metadata filter and
// pages, POST /sandboxes/{id}/timeout, DELETE /sandboxes/{id}, X-API-Key)
// and the daemon of each sandbox (envd: the Connect RPC
// /process.Process/Start stream in Connect's JSON encoding, and /files
// upload and download, X-Access-Token and Basic user), on one loopback
// listener that tells them apart by the Host header as E2B's hosts do
// (api.<domain>, 49983-<id>.<domain>).
//
// A sandbox is a real Docker container of the image its template names,
// so what runs in it really runs: created at POST /sandboxes, its commands
// are the engine's execs, its files copied in and out, removed at DELETE
// or when its timeout passes (as E2B kills a sandbox at its timeout). Its
// container has no network; the fake's internet is the host's loopback
// ports a test exposes ([Server.Expose]), which a sandbox reaches at
// 127.0.0.1 as its creation's network rules allow (network.go): with
// denyOut 0.0.0.0/0, only when allowOut names 127.0.0.1. The rules are
// also recorded ([Server.Created]).
//
// Every request is recorded ([Server.Requests]), with whether the
// sandbox's side could read it. [Server.FailNext] answers the next
// requests of a path with E2B-shaped errors (429 with Retry-After, 5xx);
// [Server.Die] kills a sandbox's container under a running command.
package fakee2b

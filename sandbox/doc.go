// Package sandbox runs one command in an isolated container and builds the
// images it runs in.
//
// A sandbox has no network, no credentials, no host mounts and no engine
// socket; its root filesystem is read-only, it runs with every capability
// dropped but the two the wrapper needs to drop to the test uid, and its
// pids, memory, CPU and wall clock are limited. Files go in as an
// uncompressed tar stream on the entrypoint's stdin and results come out on
// its stdout, both over the engine API's attach stream, so the engine may be
// remote. Every container is labelled, killed at its deadline and removed,
// also on errors and cancellation; Sweep removes leftovers after a crash.
package sandbox

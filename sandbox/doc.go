// Package sandbox runs one command in an isolated container and builds the
// images it runs in.
//
// A sandbox has no network, no credentials, no host mounts and no engine
// socket; its root filesystem is read-only, it runs with every capability
// dropped but the two the wrapper needs to drop to the test uid, and its
// pids, memory, CPU and wall clock are limited. Files go in as an
// uncompressed tar stream on the entrypoint's stdin and results come out on
// its stdout, both over the engine API's attach stream, so the engine may be
// remote. Every container is labelled (with its deadline, and by the
// service with the job it runs for), killed at its deadline and removed by
// the engine once it ends, even when the process that started it died;
// Sweep removes what a crash still left past its deadline.
package sandbox

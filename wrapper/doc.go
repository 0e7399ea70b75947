// Package wrapper is the program that runs as PID 1, root, inside every
// grading container, and the protocol the grader speaks with it.
//
// The grader streams one uncompressed tar archive to the wrapper's stdin:
// job.json first, then the hidden tests under hidden/ and the tree under test
// under repo/. The wrapper writes the hidden tests into a root-owned directory,
// the tree into a directory owned by the unprivileged test uid, adds sentinel
// tests, runs the test command as that uid with no capabilities, reads the
// JUnit XML and the exit code through pipes it created, kills every process of
// the test uid, and writes one JSON Result to its own stdout, a channel the
// code under test cannot reach. It imports nothing outside the standard
// library so the binary stays small and static.
package wrapper

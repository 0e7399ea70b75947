// Package detect holds the static scans of a tree: tamper signals, binary
// content, Python sources, the test files a change touched, bytecode, the
// source layout, setup.cfg values and the canary scan. It runs nothing.
package detect

// Package test holds testfirst's end-to-end tests: the sample project and
// the adversarial corpus graded against the real Docker engine and grader
// image, and the command-line contract.
package test

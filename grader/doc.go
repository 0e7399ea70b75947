// Package grader grades a pull request tree against hidden pytest tests in a
// sealed sandbox and reports the verdict, its trust level and the detectors.
//
// It owns the wrapper protocol (package wrapper runs inside the
// container), the detectors (tamper signals, touched tests, canaries), the
// Evaluation of the runner's evidence into a Report, and the base and
// reference checks. It never sees Docker types: it runs containers through the
// narrow Sandbox interface, which package sandbox implements.
package grader

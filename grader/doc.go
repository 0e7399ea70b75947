// Package grader grades a pull request tree against hidden pytest tests in a
// sealed sandbox and reports the verdict, its trust level and the detectors.
//
// A grade runs in four stages: scan (grader/detect's static scans of the
// trees, the canaries, the touched tests), run (the sandboxes: the tree
// under test, the base, the reference, twins and reruns), evaluate
// (grader/evaluate on the recorded runs) and judge (the verdict and its
// reasons). It never sees Docker types: it runs containers through the
// narrow Sandbox interface, which package sandbox implements.
package grader

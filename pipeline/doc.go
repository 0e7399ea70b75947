// Package pipeline holds the test-first pipeline's rules that need no I/O:
// which tickets a pull request links to, and how a grade reads on its check
// run.
package pipeline

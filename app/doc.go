// Package app is the composition root of testfirst: it turns configuration
// into connected parts (the sandbox engine, the grader image, the grader)
// and holds the jobs that use them.
package app

// Package app is the composition root of testfirst: configuration and
// keys, the connected parts (database, GitHub clients, hidden-test store,
// sandbox engine, grader image) and Serve, which wires them into the
// webhook intake, the card and the pipeline's job workers. The rules live
// in package pipeline and the work in packages jobs and card.
package app

// Package evaluate judges the recorded runs of a grade: a run's JUnit
// report against the hidden tests and sentinels, the runner's own
// evidence, hidden tests broken on the base, reruns and flaky tests, the
// twin comparison, the mutation judgement and the verdict with its
// reasons. It is pure: it starts no sandbox and takes no context.
package evaluate

package evaluate

import (
	"path"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
)

// SuiteOutcomes maps the cases of a JUnit report of a repository's own
// test suite, as pytest writes it with the tree's files at its root, to
// pytest node ids and their outcomes. pytest writes a case's node id
// mangled: "tests/test_x.py::TestC::test_y[a.b]" becomes classname
// "tests.test_x.TestC" and name "test_y[a.b]", and a module that fails to
// collect becomes a case named "tests.test_x" with no classname. The path
// is told from the classes by isFile, the tree's own files: the longest
// run of dotted names that is a file of the tree is the module. A name
// that no file explains keeps its dotted form, the same on every run of
// the suite. A case reported twice (a test's teardown that errors after a
// pass) keeps its worst outcome: error, failed, passed, skipped.
func SuiteOutcomes(cases []JUnitCase, isFile func(string) bool) map[string]report.Outcome {
	out := make(map[string]report.Outcome, len(cases))
	for _, c := range cases {
		id := suiteID(c, isFile)
		if prev, ok := out[id]; ok && outcomeRank(prev) >= outcomeRank(c.Outcome) {
			continue
		}
		out[id] = c.Outcome
	}
	return out
}

// suiteID is the node id of c (see SuiteOutcomes).
func suiteID(c JUnitCase, isFile func(string) bool) string {
	if c.ClassName == "" {
		// A module that failed to collect, named in dotted form.
		parts := strings.Split(c.Name, ".")
		if f := strings.Join(parts, "/") + ".py"; isFile(f) {
			return f
		}
		return c.Name
	}
	parts := strings.Split(c.ClassName, ".")
	for k := len(parts); k > 0; k-- {
		f := strings.Join(parts[:k], "/") + ".py"
		if !isFile(f) {
			continue
		}
		return strings.Join(append(append([]string{f}, parts[k:]...), c.Name), "::")
	}
	return c.ClassName + "::" + c.Name
}

// outcomeRank orders outcomes for SuiteOutcomes: the worse, the higher.
func outcomeRank(o report.Outcome) int {
	switch o {
	case report.OutcomeError:
		return 4
	case report.OutcomeFailed:
		return 3
	case report.OutcomePassed:
		return 2
	case report.OutcomeSkipped:
		return 1
	}
	return 0
}

// SuiteChange is what a pull request changed in the outcomes of a
// repository's own test suite: every list sorted.
type SuiteChange struct {
	// Regressed are the tests that passed on the base and fail, error or
	// are missing (their module no longer collects) with the pull request.
	Regressed []string
	// FailingOnBase are the tests that failed or errored on the base: not
	// counted against the pull request, whatever they do with it.
	FailingOnBase []string
	// Fixed are the tests of FailingOnBase that pass with the pull
	// request.
	Fixed []string
	// Missing are the tests of Regressed that the pull request's run did
	// not report at all.
	Missing []string
}

// CompareSuite compares the outcomes of the base's suite run on the base
// and on the pull request's code. Skipped tests on the base are not
// compared: a test that did not run there says nothing of the pull
// request.
func CompareSuite(base, pr map[string]report.Outcome) SuiteChange {
	var c SuiteChange
	for id, b := range base {
		p, ran := pr[id]
		switch b {
		case report.OutcomePassed:
			if !ran {
				c.Regressed = append(c.Regressed, id)
				c.Missing = append(c.Missing, id)
			} else if p == report.OutcomeFailed || p == report.OutcomeError {
				c.Regressed = append(c.Regressed, id)
			}
		case report.OutcomeFailed, report.OutcomeError:
			c.FailingOnBase = append(c.FailingOnBase, id)
			if p == report.OutcomePassed {
				c.Fixed = append(c.Fixed, id)
			}
		}
	}
	slices.Sort(c.Regressed)
	slices.Sort(c.FailingOnBase)
	slices.Sort(c.Fixed)
	slices.Sort(c.Missing)
	return c
}

// SplitFlaky moves out of c.Regressed the tests that passed when run once
// more, alone, on the pull request (rerun: that run's outcomes), and
// returns them: flaky, not regressions. A regressed test whose module
// failed to collect on the pull request is not flaky however the rerun
// went for it.
func SplitFlaky(c *SuiteChange, rerun map[string]report.Outcome) []string {
	var flaky, kept []string
	for _, id := range c.Regressed {
		if rerun[id] == report.OutcomePassed && !slices.Contains(c.Missing, id) {
			flaky = append(flaky, id)
			continue
		}
		kept = append(kept, id)
	}
	c.Regressed = kept
	return flaky
}

// SplitChanged moves out of c.Regressed the tests the pull request
// rewrote (changed, detect.ChangedTests.Changed) and returns them: a test
// that fails in its base form where the pull request rewrote it
// (cachetools' attribute test, its expectation changed with the code) is
// the pull request's stated change, for its reviewer to read in the
// diff, not a regression.
func SplitChanged(c *SuiteChange, changed func(id string) bool) []string {
	var out, kept []string
	for _, id := range c.Regressed {
		if changed(id) {
			out = append(out, id)
			continue
		}
		kept = append(kept, id)
	}
	c.Regressed = kept
	return out
}

// RerunArgs are pytest's arguments that run the tests ids again: their
// node ids, and for a module that failed to collect its path. Ids in
// dotted form, which no file of the tree explained, cannot be named to
// pytest and are left out.
func RerunArgs(ids []string) []string {
	var args []string
	for _, id := range ids {
		file, _, _ := strings.Cut(id, "::")
		if path.Ext(file) != ".py" {
			continue
		}
		args = append(args, id)
	}
	return args
}

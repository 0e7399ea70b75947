package grader

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Helpers for the grade tests: the wrapper's reports as pytest and its
// plugins write them (the same fixtures as grader/evaluate's tests).

// The wrapper's sentinels of the Evaluation fixtures.
const (
	evalSentinelModule = "test_5e471e1a"
	evalSentinelPass   = "test_0a55"
	evalSentinelFail   = "test_fa11"
)

var evalSentinels = []wrapper.Sentinel{
	{ClassName: evalSentinelModule, Name: evalSentinelPass, MustPass: true},
	{ClassName: evalSentinelModule, Name: evalSentinelFail, MustPass: false},
}

// junitReport wraps testcases in a report shaped as pytest's xunit2 writes it.
func junitReport(cases ...string) []byte {
	return []byte(`<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">` +
		`<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0.1" timestamp="2025-01-01T00:00:00" hostname="sandbox">` +
		strings.Join(cases, "") + `</testsuite></testsuites>`)
}

func passedCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001" />`
}

func failedCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001"><failure message="assert 1 == 2">tb</failure></testcase>`
}

func errorCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001"><error message="collection failure">ImportError: no module named calc</error></testcase>`
}

func skippedCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001"><skipped type="pytest.skip" message="not on this platform">skip</skipped></testcase>`
}

// checkMessages checks that got holds one message per want, each containing
// its want, in order.
func checkMessages(t *testing.T, what string, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(got[i], want[i])
	}
	if !ok {
		t.Errorf("%s = %q, want one each containing %q", what, got, want)
	}
}

// withEvidence gives r what an honest run's plugin reports about it: a
// start record, no events, and an end record that matches r's exit status
// and report, with pytest's summary line to match.
func withEvidence(r *wrapper.Result) *wrapper.Result {
	cases, _ := evaluate.ParseJUnit(r.JUnit)
	tallies := map[string]int{}
	for _, c := range cases {
		switch c.Outcome {
		case report.OutcomePassed:
			tallies["passed"]++
		case report.OutcomeFailed:
			tallies["failed"]++
		case report.OutcomeSkipped:
			tallies["skipped"]++
		default:
			tallies["error"]++
		}
	}
	sum := sha256.Sum256(r.JUnit)
	digest := hex.EncodeToString(sum[:])
	r.Evidence = &wrapper.RuntimeEvidence{
		Started:      true,
		Ends:         1,
		End:          &wrapper.EndRecord{ExitStatus: r.ExitCode, Cases: len(cases), Tallies: tallies, ReportSHA256: digest, ReportBytes: int64(len(r.JUnit))},
		ReportSHA256: digest,
		ReportBytes:  int64(len(r.JUnit)),
	}
	var parts []string
	for _, k := range []string{"passed", "failed", "error", "skipped", "xfailed", "xpassed"} { // pytest's summary categories, as grader/evaluate reads them
		if n := tallies[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no tests ran"}
	}
	r.Output = []byte("===== " + strings.Join(parts, ", ") + " in 0.10s =====\n")
	return r
}

// junitClass is the JUnit classname pytest gives a test in file and class.
func junitClass(file, class string) string {
	mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
	if class != "" {
		return mod + "." + class
	}
	return mod
}

// testID is a hidden test's node id relative to the hidden directory.
func testID(file, class, name string) string {
	if class != "" {
		return file + "::" + class + "::" + name
	}
	return file + "::" + name
}

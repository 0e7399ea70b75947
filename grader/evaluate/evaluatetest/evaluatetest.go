// Package evaluatetest holds the fixtures of the tests that judge recorded
// runs: the wrapper's results as pytest, its JUnit report and testfirst's
// evidence plugin write them for an honest run. Tests of grader and of
// grader/evaluate use it; no other code does (test/layout_test.go checks).
package evaluatetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/wrapper"
)

// The wrapper's sentinels of the fixtures: one must pass, one must fail,
// both in one generated module.
const (
	SentinelModule = "test_5e471e1a"
	SentinelPass   = "test_0a55"
	SentinelFail   = "test_fa11"
)

// Sentinels are the sentinels a fixture run's wrapper wrote.
var Sentinels = []wrapper.Sentinel{
	{ClassName: SentinelModule, Name: SentinelPass, MustPass: true},
	{ClassName: SentinelModule, Name: SentinelFail, MustPass: false},
}

// JUnitReport wraps testcases in a report shaped as pytest's xunit2 writes it.
func JUnitReport(cases ...string) []byte {
	return []byte(`<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">` +
		`<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0.1" timestamp="2025-01-01T00:00:00" hostname="sandbox">` +
		strings.Join(cases, "") + `</testsuite></testsuites>`)
}

// PassedCase is a passing testcase of a JUnit report.
func PassedCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001" />`
}

// FailedCase is a failing testcase.
func FailedCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001"><failure message="assert 1 == 2">tb</failure></testcase>`
}

// ErrorCase is a testcase that errored (here, at collection).
func ErrorCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001"><error message="collection failure">ImportError: no module named calc</error></testcase>`
}

// SkippedCase is a skipped testcase.
func SkippedCase(class, name string) string {
	return `<testcase classname="` + class + `" name="` + name + `" time="0.001"><skipped type="pytest.skip" message="not on this platform">skip</skipped></testcase>`
}

// CheckMessages checks that got holds one message per want, each containing
// its want, in order.
func CheckMessages(t *testing.T, what string, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(got[i], want[i])
	}
	if !ok {
		t.Errorf("%s = %q, want one each containing %q", what, got, want)
	}
}

// summaryCategories are the counts of pytest's summary line, in its order.
var summaryCategories = []string{"passed", "failed", "error", "skipped", "xfailed", "xpassed"}

// WithEvidence gives r what an honest run's plugin reports about it: a
// start record, no events, and an end record that matches r's exit status
// and report, with pytest's summary line to match. r's report is one of
// this package's.
func WithEvidence(r *wrapper.Result) *wrapper.Result {
	var doc struct {
		Cases []struct {
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(r.JUnit, &doc); err != nil {
		panic("evaluatetest: WithEvidence of a report it did not write: " + err.Error())
	}
	tallies := map[string]int{}
	for _, c := range doc.Cases {
		switch {
		case c.Failure != nil:
			tallies["failed"]++
		case c.Error != nil:
			tallies["error"]++
		case c.Skipped != nil:
			tallies["skipped"]++
		default:
			tallies["passed"]++
		}
	}
	sum := sha256.Sum256(r.JUnit)
	digest := hex.EncodeToString(sum[:])
	r.Evidence = &wrapper.RuntimeEvidence{
		Started:      true,
		Ends:         1,
		End:          &wrapper.EndRecord{ExitStatus: r.ExitCode, Cases: len(doc.Cases), Tallies: tallies, ReportSHA256: digest, ReportBytes: int64(len(r.JUnit))},
		ReportSHA256: digest,
		ReportBytes:  int64(len(r.JUnit)),
	}
	var parts []string
	for _, k := range summaryCategories {
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

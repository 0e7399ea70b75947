package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// secretOutput is what the runner printed: for the requester only, never in
// the text.
const secretOutput = "RUNNER-OUTPUT-MUST-NOT-APPEAR: def test_hidden(): assert add(1, 2) == 3"

// textReport is a report with every field the text shows filled in.
func textReport() *Report {
	return &Report{
		Verdict: VerdictFail,
		Trust:   TrustIsolated,
		Reasons: []string{"2 of 5 hidden tests did not pass", "1 process(es) of the code under test outlived the runner and were killed"},
		Counts:  Counts{Passed: 3, Failed: 1, Errors: 1, Skipped: 0, Total: 5},
		Tests: []TestResult{
			{ID: "tests/test_calc.py::test_add", Outcome: OutcomePassed},
			{ID: "tests/test_calc.py::test_div", Outcome: OutcomeFailed},
			{ID: "tests/test_io.py::test_read", Outcome: OutcomeError},
		},
		Failed: []string{"tests/test_calc.py::test_div", "tests/test_io.py::test_read"},
		TamperSignals: []TamperSignal{
			{Path: "conftest.py", Reason: "conftest.py can hook the test run"},
			{Path: "pkg/hook.py", Reason: "source mentions os._exit (can end the runner early)"},
		},
		TouchedTests: []string{"tests/test_old.py"},
		Contaminated: true,
		Contamination: []CanarySighting{
			{HiddenFile: "tests/test_calc.py", Where: "repo:notes.txt"},
		},
		BaseCheck: &BaseCheck{
			GuardTests: []string{"tests/test_calc.py::test_add"},
			Counts:     Counts{Passed: 1, Failed: 4, Total: 5},
			Error:      "the runner was killed by SIGKILL",
		},
		ReferenceCheck: &ReferenceCheck{
			AllPass: true,
			Failed:  []string{},
			Counts:  Counts{Passed: 5, Total: 5},
		},
		Sentinels:       SentinelsOK,
		Isolation:       Isolation{UIDSplit: true, UID: 1000, GID: 1000, NoNewPrivs: true},
		Image:           "sha256:0123456789abcdef",
		TestsDigest:     "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		RepoDigest:      "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		Runner:          []string{"/usr/bin/python3", "-I", "-m", "pytest"},
		ExitCode:        1,
		DurationSeconds: 12.345,
		Output:          secretOutput,
		OutputTruncated: true,
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, textReport()); err != nil {
		t.Fatalf("WriteText: %v", err)
	}
	golden := filepath.Join("testdata", "report.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("WriteText (-%s +got):\n%s", golden, diff)
	}
}

func TestWriteTextNeverShowsOutput(t *testing.T) {
	minimal := &Report{
		Verdict:   VerdictError,
		Trust:     TrustBestEffort,
		Reasons:   []string{"the sandbox ended without a report (exit 137, out of memory)"},
		Sentinels: SentinelsAbsent,
		Output:    secretOutput,
	}
	for name, r := range map[string]*Report{"full": textReport(), "minimal": minimal} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteText(&buf, r); err != nil {
				t.Fatalf("WriteText: %v", err)
			}
			text := buf.String()
			for _, part := range []string{secretOutput, "RUNNER-OUTPUT", "test_hidden"} {
				if strings.Contains(text, part) {
					t.Errorf("WriteText shows the runner output (%q):\n%s", part, text)
				}
			}
			if !strings.HasPrefix(text, "verdict") {
				t.Errorf("WriteText does not start with the verdict:\n%s", text)
			}
		})
	}
}

func TestWriteTextLeavesOutAbsentChecks(t *testing.T) {
	r := &Report{Verdict: VerdictPass, Trust: TrustIsolated, Sentinels: SentinelsOK}
	var buf bytes.Buffer
	if err := WriteText(&buf, r); err != nil {
		t.Fatalf("WriteText: %v", err)
	}
	for _, row := range []string{"base check", "reference check", "not passed", "tamper signals", "touched tests", "contaminated", "why"} {
		if strings.Contains(buf.String(), row) {
			t.Errorf("WriteText of a report without %s shows the row:\n%s", row, buf.String())
		}
	}
}

// TestWriteTextGroupsSignals: 49,000 decoys that each raise a signal make
// one line with their count; the real signal keeps its own line, every path
// is escaped, and the totals are always shown.
func TestWriteTextGroupsSignals(t *testing.T) {
	r := textReport()
	r.TamperSignals = nil
	for i := range 49_000 {
		r.TamperSignals = append(r.TamperSignals, TamperSignal{Path: fmt.Sprintf("decoys/d%05d/conftest.py", i), Reason: "conftest.py can hook the test run"})
	}
	r.TamperSignals = append(r.TamperSignals, TamperSignal{Path: "wordstats/\u202estats.py", Reason: "source mentions sys._getframe (can reach the caller's frames)"})
	r.Evidence = []Evidence{{Reason: "frame_access", Strength: StrengthWeak, Count: 2, Examples: []string{"sys._getframe"}}}
	var buf bytes.Buffer
	if err := WriteText(&buf, r); err != nil {
		t.Fatalf("WriteText: %v", err)
	}
	text := buf.String()
	if n := strings.Count(text, "\n"); n > 40 {
		t.Errorf("WriteText printed %d lines for 49,001 signals", n)
	}
	for _, want := range []string{
		"49001 in total, 2 kinds",
		"49000× conftest.py can hook the test run: decoys/d00000/conftest.py, ",
		"1× source mentions sys._getframe (can reach the caller's frames): wordstats/\\u202estats.py",
		"evidence         2 in total (0 strong, 2 weak)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("WriteText does not show %q:\n%s", want, text)
		}
	}
	if strings.ContainsRune(text, '\u202e') {
		t.Error("a bidirectional override reached the text unescaped")
	}
}

func TestEnvironmentLine(t *testing.T) {
	for _, tt := range []struct {
		env     *Environment
		network string
		want    string
	}{
		{nil, "", ""},
		{nil, NetworkMirror, "network: mirror"},
		{&Environment{Image: "testfirst-env:ab", Python: "3.11", Packages: []string{"attrs==23.1"}, BuiltFrom: []string{"requirements.txt"}, Cached: true}, NetworkNone,
			"python 3.11 · image testfirst-env:ab (cached) · 1 package(s): attrs==23.1 · built from requirements.txt of the base · network: none"},
		{&Environment{Image: "testfirst-env:cd", Python: "3.13", BuildSeconds: 12.34, IgnoredChanges: []string{"setup.cfg"}}, NetworkMirror,
			"python 3.13 · image testfirst-env:cd (built in 12.3s) · no packages · changes to setup.cfg not used · network: mirror"},
		{&Environment{Image: "testfirst-env:ef", Python: "3.11", Error: "x"}, NetworkNone, "python 3.11 · image testfirst-env:ef (not built) · no packages · network: none"},
		{&Environment{Image: "testfirst-env:ab", Python: "3.11", Cached: true, SetAside: []string{"pytest>=8 (the grader's own pytest runs the hidden tests)"}}, NetworkNone,
			"python 3.11 · image testfirst-env:ab (cached) · no packages · set aside: pytest>=8 (the grader's own pytest runs the hidden tests) · network: none"},
	} {
		if got := EnvironmentLine(tt.env, tt.network); got != tt.want {
			t.Errorf("EnvironmentLine = %q\nwant %q", got, tt.want)
		}
	}
}

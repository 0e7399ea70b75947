package pipeline

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
)

var update = flag.Bool("update", false, "rewrite golden files")

func report() *grader.Report {
	return &grader.Report{
		Verdict: grader.VerdictFail,
		Trust:   grader.TrustIsolated,
		Reasons: []string{"2 of 14 hidden tests did not pass"},
		Counts:  grader.Counts{Passed: 12, Failed: 1, Errors: 1, Total: 14},
		Tests: []grader.TestResult{
			{ID: "tests/test_spin.py::test_fast", Outcome: grader.OutcomePassed},
			{ID: "tests/test_spin.py::test_slow", Outcome: grader.OutcomeFailed},
			{ID: "tests/test_spin.py::test_p[@octocat `x` <b>]", Outcome: grader.OutcomeError},
		},
		Failed:        []string{"tests/test_spin.py::test_slow", "tests/test_spin.py::test_p[@octocat `x` <b>]"},
		TamperSignals: []grader.TamperSignal{{Path: "conftest.py", Reason: "conftest.py can hook the test run"}, {Path: "[click](https://evil.example)/x.pth", Reason: ".pth files run at start-up"}},
		TouchedTests:  []string{"tests/test_existing.py"},
		Image:         "sha256:aaaa", RepoDigest: "sha256:bbbb", TestsDigest: "sha256:cccc",
		Output: "SECRET RUNNER OUTPUT def test_slow(): assert spin() == 2",
	}
}

func TestCompletedCheckRunGolden(t *testing.T) {
	g := Graded{Report: fromGrader(t, report()), Version: 3, Digest: "sha256:cccc", DetailsURL: "https://tf.example.com/grades/9",
		Criteria: map[string][]string{"spins fast": {"tests/test_spin.py::test_fast"}, "spins slow": {"tests/test_spin.py::test_slow"}}}
	cr := CompletedCheckRun("abc123", g)
	if cr.Conclusion != github.ConclusionFailure || cr.Status != github.StatusCompleted || cr.Title != "12/14 hidden tests passed · trust: isolated" {
		t.Errorf("check run %+v", cr)
	}
	if strings.Contains(cr.Summary, "SECRET RUNNER OUTPUT") {
		t.Error("the summary shows runner output")
	}
	golden := filepath.Join("testdata", "summary.md")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(cr.Summary), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if cr.Summary != string(want) {
		t.Errorf("summary differs from %s (go test -update to accept):\n%s", golden, cr.Summary)
	}
}

// TestSummaryEscapes: ids and paths come from the tree under test; none may
// mention someone, link, or inject HTML or markdown.
func TestSummaryEscapes(t *testing.T) {
	s := Summary(Graded{Report: fromGrader(t, report()), Version: 1, Digest: "sha256:cccc"})
	for _, line := range strings.Split(s, "\n") {
		for _, bad := range []string{"@octocat", "[click]", "<b>"} {
			if i := strings.Index(line, bad); i >= 0 && !insideCodeSpan(line, i) {
				t.Errorf("%q outside a code span: %s", bad, line)
			}
		}
	}
	if got := code("a `b` c"); got != "`` a `b` c ``" {
		t.Errorf("code = %q", got)
	}
	if got := code("x\ny"); got != "`x y`" {
		t.Errorf("code = %q", got)
	}
}

func TestSummaryFitsGitHub(t *testing.T) {
	r := report()
	r.Failed = nil
	for i := range 5000 {
		r.Failed = append(r.Failed, "tests/test_a_very_long_module_name_for_size.py::test_case_number_"+strings.Repeat("é", 10)+string(rune('a'+i%26)))
	}
	s := Summary(Graded{Report: fromGrader(t, r), Version: 1, Digest: "sha256:cccc"})
	if len(s) > github.MaxSummary || !utf8.ValidString(s) {
		t.Fatalf("summary is %d bytes (valid UTF-8: %v)", len(s), utf8.ValidString(s))
	}
	if !strings.Contains(s, "more\n") || !strings.Contains(s, "### Reproduce") {
		t.Error("a long summary must say how many ids it left out and keep the reproduce section")
	}
}

func TestConclusions(t *testing.T) {
	for v, want := range map[grader.Verdict]string{
		grader.VerdictPass: "success", grader.VerdictFail: "failure", grader.VerdictError: "failure",
		grader.VerdictTampered: "failure", grader.VerdictContaminated: "failure", grader.VerdictInvalidTask: "action_required",
	} {
		r := report()
		r.Verdict = v
		cr := CompletedCheckRun("abc", Graded{Report: fromGrader(t, r)})
		if cr.Conclusion != want {
			t.Errorf("%s -> %s, want %s", v, cr.Conclusion, want)
		}
		if v == grader.VerdictTampered && !strings.HasPrefix(cr.Title, "tampered · ") {
			t.Errorf("title %q does not say tampered", cr.Title)
		}
	}
}

// insideCodeSpan reports whether byte i of line lies inside a CommonMark
// code span: a run of n backticks up to the next run of exactly n.
func insideCodeSpan(line string, i int) bool {
	run := func(at int) int {
		n := 0
		for at+n < len(line) && line[at+n] == '`' {
			n++
		}
		return n
	}
	at := 0
	for at < len(line) {
		n := run(at)
		if n == 0 {
			at++
			continue
		}
		end := at + n
		for end < len(line) && run(end) != n {
			end += max(run(end), 1)
		}
		if end >= len(line) {
			return false // an unclosed run is literal backticks
		}
		if i > at && i < end {
			return true
		}
		at = end + n
	}
	return false
}

// fromGrader reads a grader report through its JSON contract, as the grade
// job hands it to the check run.
func fromGrader(t *testing.T, r *grader.Report) *Report {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseReport(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

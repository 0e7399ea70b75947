package pipeline

import (
	"encoding/json"
	"fmt"
)

// The pipeline reads the grader's reports and base checks through their
// JSON contract (grader.Report, grader.BaseCheck, grader.ReferenceCheck):
// the types below hold the fields the check run, the issue comments and
// the approval policy use, with the grader's names and JSON keys. Reading
// the contract, rather than importing the grader, keeps the sandbox engine
// and its clients out of the domain.

// Verdict is the outcome of a grade, as the grader names it.
type Verdict string

// Verdicts. Only VerdictPass is a pass.
const (
	// VerdictInvalidTask: the hidden tests pass on base, or the reference
	// patch fails them.
	VerdictInvalidTask Verdict = "invalid_task"
	// VerdictTampered: a sentinel came out wrong: the runner was bent.
	VerdictTampered Verdict = "tampered"
	// VerdictContaminated: the version's canary was seen where it must not be.
	VerdictContaminated Verdict = "contaminated"
	// VerdictError: the tests could not be run or read.
	VerdictError Verdict = "error"
	// VerdictFail: a hidden test did not pass.
	VerdictFail Verdict = "fail"
	// VerdictPass: every hidden test passed.
	VerdictPass Verdict = "pass"
)

// Trust says how far a grade can be believed (docs/security.md).
type Trust string

// Outcome is what happened to one hidden test.
type Outcome string

// OutcomePassed is the one outcome that counts for a grade.
const OutcomePassed Outcome = "passed"

// Counts tallies hidden test outcomes.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
	Total   int `json:"total"`
}

// TestResult is the outcome of one hidden test, by its id.
type TestResult struct {
	ID      string  `json:"id"`
	Outcome Outcome `json:"outcome"`
}

// TamperSignal is a file or pattern in the tree under test that could hook
// the test run.
type TamperSignal struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// CanarySighting says where the canary of one hidden file was seen.
type CanarySighting struct {
	HiddenFile string `json:"hidden_file"`
	Where      string `json:"where"`
}

// Report is a finished grade as its check run shows it.
type Report struct {
	Verdict       Verdict          `json:"verdict"`
	Trust         Trust            `json:"trust"`
	Reasons       []string         `json:"reasons"`
	Counts        Counts           `json:"counts"`
	Tests         []TestResult     `json:"tests"`
	Failed        []string         `json:"failed"`
	TamperSignals []TamperSignal   `json:"tamper_signals"`
	TouchedTests  []string         `json:"touched_tests"`
	Contaminated  bool             `json:"contaminated"`
	Contamination []CanarySighting `json:"contamination"`
	Image         string           `json:"image"`
	TestsDigest   string           `json:"tests_digest"`
	RepoDigest    string           `json:"repo_digest"`
}

// ParseReport reads a grader report in its JSON contract.
func ParseReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read the grader's report: %w", err)
	}
	return &r, nil
}

// BaseCheck is the run of the hidden tests on the base commit.
type BaseCheck struct {
	// GuardTests are the hidden tests that already pass on the base.
	GuardTests []string `json:"guard_tests"`
	// AllPass is true when every hidden test passes on the base.
	AllPass bool   `json:"all_pass"`
	Counts  Counts `json:"counts"`
	Error   string `json:"error,omitempty"`
}

// ReferenceCheck is the run of the hidden tests on the base with the
// writer's reference patch applied.
type ReferenceCheck struct {
	AllPass bool     `json:"all_pass"`
	Failed  []string `json:"failed"`
	Counts  Counts   `json:"counts"`
	Error   string   `json:"error,omitempty"`
}

package report

// Regressions is the report of a regression run: the base commit's own
// test suite (its test files from the base, never the pull request's
// edits) run on the base and on the pull request's code, in the grade's
// sealed conditions. It judges only what the repository's tests say of
// the pull request; no hidden test is in it. The pull request's code runs
// in the process of the suite that judges it, as in any CI: a regression
// run says what honest code broke, it does not hold against code that
// wants to hide what it broke (the grade's hidden tests do).
type Regressions struct {
	// Verdict is VerdictPass (no test that passed on the base fails with
	// the pull request), VerdictFail (Regressed names them) or
	// VerdictError (the suite could not be compared: it did not run on the
	// base, or its environment could not be built; Reasons say why).
	Verdict Verdict  `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`
	// Paths are the suite's paths given to pytest; empty: pytest's own
	// discovery under the repository's configuration.
	Paths []string `json:"paths,omitempty"`
	// Base and PR count the outcomes of the two runs.
	Base SuiteCounts `json:"base"`
	PR   SuiteCounts `json:"pr"`
	// Regressed are the node ids of the tests that passed on the base and
	// fail, error or are missing with the pull request, twice: the first
	// time and again alone.
	Regressed []string `json:"regressed"`
	// Changed are the tests that fail in their base form where the pull
	// request rewrote them (their function or class, or the data, conftest
	// or helpers beside them; see detect.ChangedTests): its stated change, for its
	// reviewer to read in the diff, not counted as regressions.
	Changed []string `json:"changed,omitempty"`
	// Flaky are the tests that failed with the pull request but passed
	// when run once more: not regressions.
	Flaky []string `json:"flaky,omitempty"`
	// FailingOnBase counts the tests that failed or errored on the base:
	// not counted against the pull request. Fixed are those of them that
	// pass with it.
	FailingOnBase int      `json:"failing_on_base"`
	Fixed         []string `json:"fixed,omitempty"`
	// Truncated says the id lists were cut at MaxRegressionIDs; the counts
	// are whole.
	Truncated bool `json:"truncated,omitempty"`
	// RegressedCount is the whole number of regressions, when Regressed
	// was cut.
	RegressedCount int `json:"regressed_count"`
	// BaseSeconds and PRSeconds are the runs' own times; TimedOut names
	// the runs ("base", "pr") that were killed at the end of the budget.
	BaseSeconds float64 `json:"base_seconds"`
	// BaseReused says the base's run is one kept from an earlier
	// regression run against the same base (a push before this one).
	BaseReused bool     `json:"base_reused,omitempty"`
	PRSeconds  float64  `json:"pr_seconds"`
	TimedOut   []string `json:"timed_out,omitempty"`
	// Budget is each run's time budget, in seconds.
	Budget float64 `json:"budget_seconds"`
	// RepoDigest and BaseDigest name the trees; Image and Runtime the
	// sandbox, as a grade's report does.
	RepoDigest string `json:"repo_digest"`
	BaseDigest string `json:"base_digest"`
	Image      string `json:"image"`
	Runtime    string `json:"runtime"`
	// Environment is the dependency environment both runs used.
	Environment *Environment `json:"environment,omitempty"`
	// Output is the pull request's run's output (requester only, as a
	// grade's: it is the repository's own suite's, but the service keeps
	// one policy for outputs).
	Output          string  `json:"output,omitempty"`
	OutputTruncated bool    `json:"output_truncated,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// MaxRegressionIDs bounds each id list of a Regressions report.
const MaxRegressionIDs = 200

// SuiteCounts are the outcomes of one run of a repository's suite.
type SuiteCounts struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
}

// CountSuite counts outcomes.
func CountSuite(outcomes map[string]Outcome) SuiteCounts {
	var c SuiteCounts
	for _, o := range outcomes {
		c.Total++
		switch o {
		case OutcomePassed:
			c.Passed++
		case OutcomeFailed:
			c.Failed++
		case OutcomeError:
			c.Errors++
		case OutcomeSkipped:
			c.Skipped++
		}
	}
	return c
}

// Cut bounds r's id lists at MaxRegressionIDs, keeping RegressedCount
// whole.
func (r *Regressions) Cut() {
	r.RegressedCount = len(r.Regressed)
	for _, l := range []*[]string{&r.Regressed, &r.Changed, &r.Flaky, &r.Fixed} {
		if len(*l) > MaxRegressionIDs {
			*l = (*l)[:MaxRegressionIDs]
			r.Truncated = true
		}
	}
	if r.Regressed == nil {
		r.Regressed = []string{}
	}
}

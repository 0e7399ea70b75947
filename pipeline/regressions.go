package pipeline

import (
	"fmt"
	"strings"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
)

// RegressionsCheckRunName is the check run of a pull request's regression
// run, apart from the grade's, so that branch protection can require
// either or both.
const RegressionsCheckRunName = "testfirst / regressions"

// RegressionsExternalID is the external id of grade's regression check
// run: a retried job finds the run it made by it.
func RegressionsExternalID(grade int64) string { return fmt.Sprintf("regressions:%d", grade) }

// RunningRegressionsCheckRun is the check run of a regression run under
// way.
func RunningRegressionsCheckRun(headSHA string, grade int64, detailsURL string) checkrun.Run {
	return checkrun.Run{Name: RegressionsCheckRunName, HeadSHA: headSHA, Status: checkrun.StatusInProgress, DetailsURL: detailsURL,
		ExternalID: RegressionsExternalID(grade), Title: "running the base's own tests on this pull request",
		Summary: "The base commit's own test suite runs on the base and on this pull request's code, in a sealed sandbox. " +
			"Tests that pass on the base and fail here will be listed."}
}

// FailedRegressionsCheckRun is the check run of a regression run that
// could not be made (why); its conclusion is neutral: nothing was learnt
// of the pull request.
func FailedRegressionsCheckRun(headSHA string, grade int64, why, detailsURL string) checkrun.Run {
	return checkrun.Run{Name: RegressionsCheckRunName, HeadSHA: headSHA, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionNeutral,
		DetailsURL: detailsURL, ExternalID: RegressionsExternalID(grade), Title: "the regression run could not be made", Summary: why}
}

// RegressionsCheckRun is the completed check run of a regression run's
// report r: counts and test ids, never output. A regression fails it; a
// suite that could not be compared (it did not run on the base) is
// neutral, since it says nothing of the pull request.
func RegressionsCheckRun(headSHA string, grade int64, r *report.Regressions, detailsURL string) checkrun.Run {
	cr := checkrun.Run{Name: RegressionsCheckRunName, HeadSHA: headSHA, Status: checkrun.StatusCompleted, DetailsURL: detailsURL,
		ExternalID: RegressionsExternalID(grade)}
	var b strings.Builder
	passedOnBase := r.Base.Passed
	switch {
	case r.Verdict == report.VerdictPass && len(r.Changed) > 0:
		// The pull request rewrote tests that fail in their base form:
		// its stated change, which only its reviewer can confirm.
		cr.Conclusion = checkrun.ConclusionNeutral
		cr.Title = fmt.Sprintf("no regressions; %s this pull request changed %s in %s base form: confirm the change is meant",
			plural(len(r.Changed), "test", "tests"), pick(len(r.Changed) == 1, "fails", "fail"), pick(len(r.Changed) == 1, "its", "their"))
	case r.Verdict == report.VerdictPass:
		cr.Conclusion = checkrun.ConclusionSuccess
		cr.Title = fmt.Sprintf("no regressions: the %s that passed on the base pass", plural(passedOnBase, "test", "tests"))
	case r.Verdict == report.VerdictFail:
		cr.Conclusion = checkrun.ConclusionFailure
		n := max(r.RegressedCount, len(r.Regressed))
		cr.Title = fmt.Sprintf("%s: %d of the %s that passed on the base fail", plural(n, "regression", "regressions"), n, plural(passedOnBase, "test", "tests"))
	default:
		cr.Conclusion = checkrun.ConclusionNeutral
		cr.Title = "the suite could not be compared"
	}
	for _, why := range r.Reasons {
		fmt.Fprintf(&b, "- %s\n", why)
	}
	fmt.Fprintf(&b, "\n| run | tests | passed | failed | errors | skipped | seconds |\n|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| base | %d | %d | %d | %d | %d | %.0f |\n", r.Base.Total, r.Base.Passed, r.Base.Failed, r.Base.Errors, r.Base.Skipped, r.BaseSeconds)
	fmt.Fprintf(&b, "| this pull request | %d | %d | %d | %d | %d | %.0f |\n", r.PR.Total, r.PR.Passed, r.PR.Failed, r.PR.Errors, r.PR.Skipped, r.PRSeconds)
	list := func(title string, ids []string) {
		if len(ids) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n**%s**\n\n", title)
		for _, id := range ids {
			fmt.Fprintf(&b, "- `%s`\n", strings.ReplaceAll(id, "`", "'"))
		}
	}
	list("Regressions (passed on the base, fail with this pull request, and again when run alone)", r.Regressed)
	list("Changed by this pull request (fail in their base form; the pull request rewrote them or their data): not counted, read them in the diff", r.Changed)
	list("Flaky (failed with this pull request, passed when run again alone): not counted", r.Flaky)
	list("Fixed (failed on the base, pass with this pull request)", r.Fixed)
	if r.Truncated {
		fmt.Fprintf(&b, "\nThe lists are cut at %d ids each; the counts are whole.\n", report.MaxRegressionIDs)
	}
	if r.FailingOnBase > 0 {
		fmt.Fprintf(&b, "\n%s failed on the base already: not counted against this pull request.\n", plural(r.FailingOnBase, "test", "tests"))
	}
	if r.BaseReused {
		b.WriteString("\nThe base's run is the one of an earlier push against the same base.\n")
	}
	where := "pytest's own discovery under the base's configuration"
	if len(r.Paths) > 0 {
		where = "`" + strings.Join(r.Paths, "`, `") + "`"
	}
	fmt.Fprintf(&b, "\nThe suite: the base's test files and pytest configuration (%s), never this pull request's edits to them; each run within %.0fs. "+
		"The code under test runs in the suite's own process: this check says what honest code broke, the grade's hidden tests are the check that holds against code that hides it.\n",
		where, r.Budget)
	cr.Summary = b.String()
	return cr
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

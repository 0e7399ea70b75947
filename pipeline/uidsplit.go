package pipeline

import (
	"fmt"
	"strings"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
)

// The values of grading.uid_split (repository) and TESTFIRST_UID_SPLIT
// (service).
const (
	// UIDSplitAllowed posts a grade whose uid split was not proven with
	// trust best_effort: the default.
	UIDSplitAllowed = "allowed"
	// UIDSplitRequired refuses such a grade: its check run says why and
	// carries no verdict.
	UIDSplitRequired = "required"
)

// The values of grading.split (RepoConfig.Split) and the service's
// TESTFIRST_SPLIT.
const (
	// SplitOff grades in-process: the default.
	SplitOff = "off"
	// SplitOn grades split (grader.Request.Split).
	SplitOn = "on"
)

// unproven reports whether r ran tests without the uid split proven (an
// error that ran nothing claims nothing, and is posted as it is).
func unproven(r *report.Report) bool {
	return r.Verdict != report.VerdictError && (!r.Isolation.UIDSplit || r.Trust != report.TrustIsolated)
}

// RefusedCheckRun is the check run of a grade refused because its uid
// split was not proven while requiredBy (the setting that asks for it)
// requires one: action_required, no verdict, no counts, and the wrapper's
// evidence about the test process. ok is false when the grade may be
// posted (nothing requires the split, or it was proven).
func RefusedCheckRun(headSHA string, g Graded, requiredBy string) (cr checkrun.Run, ok bool) {
	r := g.Report
	if requiredBy == "" || !unproven(r) {
		return checkrun.Run{}, false
	}
	iso := r.Isolation
	var b strings.Builder
	fmt.Fprintf(&b, "This grade is refused: %s requires the uid split, and the sandbox did not prove it, so the tests may have run with the power to rewrite the hidden tests or forge the report (trust would be %s). No verdict is posted.\n\n", code(requiredBy), code(string(r.Trust)))
	fmt.Fprintf(&b, "What the wrapper read of the test process: uid %d, gid %d, CapEff %s, CapPrm %s, CapAmb %s, no_new_privs %v (runtime %s).\n\n",
		iso.UID, iso.GID, code(iso.CapEff), code(iso.CapPrm), code(iso.CapAmb), iso.NoNewPrivs, code(r.Runtime))
	if iso.Inferred != "" {
		b.WriteString(iso.Inferred + ".\n\n")
	}
	b.WriteString("The uid split needs SETUID and SETGID for the sandbox's wrapper and no-new-privileges (docs/security.md, the wrapper and the uid split). The operator of this installation must fix the sandbox; then use `/testfirst regrade` on this pull request.")
	return checkrun.Run{Name: CheckRunName, HeadSHA: headSHA, Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionActionRequired,
		Title:      "not graded: the uid split was not proven (" + requiredBy + ")",
		Summary:    b.String(),
		DetailsURL: g.DetailsURL,
		Actions:    []checkrun.Action{RegradeAction}}, true
}

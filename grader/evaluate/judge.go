package evaluate

import (
	"fmt"
	"slices"

	"github.com/testfirst-app/testfirst/report"
)

// VerdictInputs is what a verdict is decided from.
type VerdictInputs struct {
	Invalid      []string // why the task itself is invalid
	Tampered     []string // why the runner was bent (sentinels, report checks)
	Evidence     []report.Evidence
	Contaminated []report.CanarySighting
	Problems     []string // why the run cannot say pass or fail
	Failed       int
	Total        int
	AllPassed    bool
}

// Judge decides the verdict and its reasons, most severe first: an invalid
// task, then a bent runner (wrong sentinels or strong evidence), then
// contamination, then a run that could not be judged, then the outcomes.
// Weak evidence never changes the verdict; it is counted in the reasons.
func Judge(in VerdictInputs) (report.Verdict, []string) {
	var v report.Verdict
	var reasons []string
	switch {
	case len(in.Invalid) > 0:
		v, reasons = report.VerdictInvalidTask, slices.Clone(in.Invalid)
	case len(in.Tampered) > 0 || report.StrongSignals(in.Evidence) > 0:
		v, reasons = report.VerdictTampered, slices.Clone(in.Tampered)
		reasons = append(reasons, DescribeStrong(in.Evidence)...)
	case len(in.Contaminated) > 0:
		v = report.VerdictContaminated
		for _, s := range in.Contaminated {
			reasons = append(reasons, fmt.Sprintf("the canary of %s appears in %s", s.HiddenFile, s.Where))
		}
	case len(in.Problems) > 0:
		v, reasons = report.VerdictError, slices.Clone(in.Problems)
	case !in.AllPassed:
		v, reasons = report.VerdictFail, []string{fmt.Sprintf("%d of %d hidden tests did not pass", in.Failed, in.Total)}
	default:
		v, reasons = report.VerdictPass, []string{fmt.Sprintf("all %d hidden tests passed", in.Total)}
	}
	if n := report.WeakSignals(in.Evidence); n > 0 {
		reasons = append(reasons, fmt.Sprintf("runtime signals: %d", n))
	}
	return v, reasons
}

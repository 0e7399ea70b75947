package evaluate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// TwinRun is a twin sandbox's run, or why there is none. A twin run that
// fails is a gap in the evidence, never a reason to fail the grade.
type TwinRun struct {
	// Result and Eval are the twin run's, when it ran.
	Result *wrapper.Result
	Eval   *Evaluation
	// Err is why it did not.
	Err error
}

// TwinInput is one grade's runs as the twin comparison needs them.
type TwinInput struct {
	PR      *Evaluation
	Twin    *TwinRun
	Ref     *Evaluation // nil without a reference patch
	RefTwin *TwinRun    // nil without a reference patch
	Exclude []string
}

// CompareTwins compares the grade's run with its twin run and, when there
// is a reference patch, drops the twins the reference passed. It records a
// twin_contradiction for each hidden test that passed beside its twin, and
// a twin_run_tampered when the twin run's sentinels came out wrong.
func CompareTwins(in TwinInput, evidence *EvidenceSet) *report.Twins {
	tw := &report.Twins{Of: len(in.PR.Tests)}
	twin, m, why := twinEvaluation(in.Twin)
	if why != "" {
		tw.NotRun = why
		tw.Untwinnable = tw.Of
		for _, t := range in.PR.Tests {
			tw.Untwinned = append(tw.Untwinned, report.TwinGap{ID: t.ID, Why: "twins not run"})
		}
		return tw
	}
	for _, reason := range twin.Tampered {
		evidence.add("twin_run_tampered", report.StrengthStrong, reason)
	}
	var refTwin *Evaluation
	if in.RefTwin != nil {
		var refMap *wrapper.TwinMap
		var refWhy string
		refTwin, refMap, refWhy = twinEvaluation(in.RefTwin)
		switch {
		case refWhy != "":
			tw.NotRun = "not validated on the reference patch: " + refWhy
			refTwin = nil
		case !sameTwins(m, refMap):
			tw.NotRun = "not validated on the reference patch: its twins differ from the grade's"
			refTwin = nil
		case len(refTwin.Tampered) > 0 || len(refTwin.Problems) > 0:
			tw.NotRun = "not validated on the reference patch: " + strings.Join(slices.Concat(refTwin.Tampered, refTwin.Problems), "; ")
			refTwin = nil
		default:
			tw.Validated = true
		}
	}
	twins := map[string]wrapper.Twin{}
	for _, t := range m.Twins {
		twins[t.ID] = t
	}
	untwinnable := map[string]string{}
	for _, u := range m.Untwinnable {
		untwinnable[u.ID] = u.Why
	}
	gap := func(id, why string) {
		tw.Untwinned = append(tw.Untwinned, report.TwinGap{ID: id, Why: why})
	}
	change := func(id string, t wrapper.Twin) {
		tw.Changes = append(tw.Changes, report.TwinChange{ID: id, File: t.File, Line: t.Line, Kind: t.Kind, Change: t.Change})
	}
	for _, base := range sortedKeys(in.PR.cases) {
		cases := in.PR.cases[base]
		t, ok := twins[base]
		if !ok {
			why := cmp.Or(untwinnable[base], "not in the twin map")
			for _, c := range cases {
				gap(c.ID, why)
			}
			continue
		}
		twinCases := twin.cases[base]
		var refTwinCases []report.TestResult
		if refTwin != nil {
			refTwinCases = refTwin.cases[base]
		}
		for k, c := range cases {
			switch {
			case slices.Contains(in.Exclude, c.ID) || slices.Contains(in.Exclude, base):
				gap(c.ID, "excluded")
			case len(twinCases) != len(cases):
				gap(c.ID, fmt.Sprintf("the twin run reported %d case(s) of %d", len(twinCases), len(cases)))
			case refTwin != nil && len(refTwinCases) != len(cases):
				gap(c.ID, fmt.Sprintf("the reference's twin run reported %d case(s) of %d", len(refTwinCases), len(cases)))
			case refTwin != nil && refTwinCases[k].Outcome == report.OutcomePassed:
				tw.InvalidTwins = append(tw.InvalidTwins, c.ID)
				change(c.ID, t)
				gap(c.ID, "invalid: the reference patch passed its twin")
			default:
				tw.Twinned++
				if c.Outcome == report.OutcomePassed && twinCases[k].Outcome == report.OutcomePassed {
					tw.Contradictions = append(tw.Contradictions, c.ID)
					change(c.ID, t)
					evidence.add("twin_contradiction", report.StrengthStrong, c.ID)
				}
			}
		}
	}
	tw.Untwinnable = tw.Of - tw.Twinned
	return tw
}

// twinEvaluation returns a twin run's Evaluation and map, or why there is
// none to compare.
func twinEvaluation(tr *TwinRun) (*Evaluation, *wrapper.TwinMap, string) {
	switch {
	case tr == nil:
		return nil, nil, "no twin run"
	case tr.Err != nil:
		return nil, nil, tr.Err.Error()
	case tr.Result.Twins == nil && tr.Result.Error != "":
		return nil, nil, tr.Result.Error
	case tr.Result.Twins == nil:
		return nil, nil, "the wrapper made no twins"
	case tr.Result.Twins.Error != "":
		return nil, nil, tr.Result.Twins.Error
	case len(tr.Eval.Tests) == 0:
		return nil, nil, "the twin run reported no tests: " + strings.Join(tr.Eval.Problems, "; ")
	}
	return tr.Eval, tr.Result.Twins, ""
}

// sameTwins reports whether two runs got the same twins.
func sameTwins(a, b *wrapper.TwinMap) bool {
	return slices.Equal(a.Twins, b.Twins)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

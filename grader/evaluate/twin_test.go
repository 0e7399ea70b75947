package evaluate

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

const (
	twA = "tests/test_x.py::test_a"
	twB = "tests/test_x.py::test_b"
	twP = "tests/test_x.py::test_p"
)

// evalOf is an Evaluation of a run whose hidden tests came out as given,
// by case id in report order.
func evalOf(outcomes ...string) *Evaluation {
	ev := &Evaluation{cases: map[string][]report.TestResult{}, Sentinels: report.SentinelsOK}
	for i := 0; i+1 < len(outcomes); i += 2 {
		id, outcome := outcomes[i], report.Outcome(outcomes[i+1])
		base := id
		if j := strings.IndexByte(id, '['); j > 0 {
			base = id[:j]
		}
		ev.Tests = append(ev.Tests, report.TestResult{ID: id, Outcome: outcome})
		ev.cases[base] = append(ev.cases[base], report.TestResult{ID: id, Outcome: outcome})
	}
	return ev
}

// twinRunOf is a twin run with the Evaluation and map given.
func twinRunOf(ev *Evaluation, m *wrapper.TwinMap) *TwinRun {
	return &TwinRun{Result: &wrapper.Result{Twins: m}, Eval: ev}
}

func twinMapOf(ids ...string) *wrapper.TwinMap {
	m := &wrapper.TwinMap{}
	for _, id := range ids {
		file, _, _ := strings.Cut(id, "::")
		m.Twins = append(m.Twins, wrapper.Twin{ID: id, File: file, Line: 3, Kind: "literal", Change: "literal: 1 -> 2"})
	}
	return m
}

func TestCompareTwins(t *testing.T) {
	P, F := string(report.OutcomePassed), string(report.OutcomeFailed)
	all := twinMapOf(twA, twB, twP)
	pr := evalOf(twA, P, twB, P, twP+"[1-1]", P, twP+"[3-3]", P)
	tests := []struct {
		name string
		in   TwinInput
		want report.Twins
		// evidence is the reasons and counts of the evidence recorded.
		evidence map[string]int
	}{
		{
			name: "honest: every twin fails",
			in:   TwinInput{PR: pr, Twin: twinRunOf(evalOf(twA, F, twB, F, twP+"[1-2]", F, twP+"[3-5]", F), all)},
			want: report.Twins{Twinned: 4, Of: 4},
		},
		{
			name:     "a twin that passes beside its test is a contradiction",
			in:       TwinInput{PR: pr, Twin: twinRunOf(evalOf(twA, P, twB, F, twP+"[1-2]", F, twP+"[3-5]", F), all)},
			want:     report.Twins{Twinned: 4, Of: 4, Contradictions: []string{twA}, Changes: []report.TwinChange{{ID: twA, File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"}}},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "a failed test whose twin passes is no contradiction",
			in:   TwinInput{PR: evalOf(twA, F), Twin: twinRunOf(evalOf(twA, P), twinMapOf(twA))},
			want: report.Twins{Twinned: 1, Of: 1},
		},
		{
			name:     "parametrized cases pair by position, whatever their ids",
			in:       TwinInput{PR: pr, Twin: twinRunOf(evalOf(twA, F, twB, F, twP+"[1-2]", F, twP+"[3-5]", P), all)},
			want:     report.Twins{Twinned: 4, Of: 4, Contradictions: []string{twP + "[3-3]"}, Changes: []report.TwinChange{{ID: twP + "[3-3]", File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"}}},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "untwinnable tests say why; excluded tests are not compared",
			in: TwinInput{
				PR: pr,
				Twin: twinRunOf(evalOf(twA, P, twB, P, twP+"[1-2]", P, twP+"[3-5]", F), &wrapper.TwinMap{
					Twins:       twinMapOf(twB, twP).Twins,
					Untwinnable: []wrapper.Untwinnable{{ID: twA, Why: "no assertion certain to run that can be changed"}},
				}),
				Exclude: []string{twB, twP + "[1-1]"},
			},
			want: report.Twins{Twinned: 1, Of: 4, Untwinnable: 3, Untwinned: []report.TwinGap{
				{ID: twA, Why: "no assertion certain to run that can be changed"},
				{ID: twB, Why: "excluded"},
				{ID: twP + "[1-1]", Why: "excluded"},
			}},
		},
		{
			name: "a twin run that reports another number of cases is not compared",
			in:   TwinInput{PR: pr, Twin: twinRunOf(evalOf(twA, F, twB, F, twP+"[1-2]", P), all)},
			want: report.Twins{Twinned: 2, Of: 4, Untwinnable: 2, Untwinned: []report.TwinGap{
				{ID: twP + "[1-1]", Why: "the twin run reported 1 case(s) of 2"},
				{ID: twP + "[3-3]", Why: "the twin run reported 1 case(s) of 2"},
			}},
		},
		{
			name: "twins the reference passes are invalid and dropped",
			in: TwinInput{
				PR:      pr,
				Twin:    twinRunOf(evalOf(twA, P, twB, P, twP+"[1-2]", F, twP+"[3-5]", F), all),
				Ref:     evalOf(twA, P, twB, P, twP+"[1-1]", P, twP+"[3-3]", P),
				RefTwin: twinRunOf(evalOf(twA, P, twB, F, twP+"[1-2]", F, twP+"[3-5]", F), all),
			},
			want: report.Twins{Twinned: 3, Of: 4, Untwinnable: 1, Validated: true,
				Untwinned:      []report.TwinGap{{ID: twA, Why: "invalid: the reference patch passed its twin"}},
				Contradictions: []string{twB},
				InvalidTwins:   []string{twA},
				Changes: []report.TwinChange{
					{ID: twA, File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"},
					{ID: twB, File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"},
				},
			},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "a reference twin run that failed leaves the twins unvalidated",
			in: TwinInput{
				PR:      evalOf(twA, P),
				Twin:    twinRunOf(evalOf(twA, P), twinMapOf(twA)),
				Ref:     evalOf(twA, P),
				RefTwin: &TwinRun{Err: errors.New("run sandbox: engine down")},
			},
			want: report.Twins{Twinned: 1, Of: 1, Contradictions: []string{twA}, NotRun: "not validated on the reference patch: run sandbox: engine down",
				Changes: []report.TwinChange{{ID: twA, File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"}}},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "a twin sandbox that failed is a gap, not evidence",
			in:   TwinInput{PR: evalOf(twA, P), Twin: &TwinRun{Err: errors.New("run sandbox: engine down")}},
			want: report.Twins{Of: 1, Untwinnable: 1, NotRun: "run sandbox: engine down", Untwinned: []report.TwinGap{{ID: twA, Why: "twins not run"}}},
		},
		{
			name: "a generator that failed is a gap",
			in:   TwinInput{PR: evalOf(twA, P), Twin: twinRunOf(evalOf(twA, P), &wrapper.TwinMap{Error: "twin generator: exit 1: MemoryError"})},
			want: report.Twins{Of: 1, Untwinnable: 1, NotRun: "twin generator: exit 1: MemoryError", Untwinned: []report.TwinGap{{ID: twA, Why: "twins not run"}}},
		},
		{
			name: "a wrapper without twins is a gap",
			in:   TwinInput{PR: evalOf(twA, P), Twin: twinRunOf(evalOf(twA, P), nil)},
			want: report.Twins{Of: 1, Untwinnable: 1, NotRun: "the wrapper made no twins", Untwinned: []report.TwinGap{{ID: twA, Why: "twins not run"}}},
		},
		{
			name: "wrong sentinels in the twin run are strong evidence",
			in: TwinInput{PR: evalOf(twA, P), Twin: twinRunOf(func() *Evaluation {
				ev := evalOf(twA, F)
				ev.Tampered = []string{"a sentinel test that must fail came out passed: the runner was bent"}
				return ev
			}(), twinMapOf(twA))},
			want:     report.Twins{Twinned: 1, Of: 1},
			evidence: map[string]int{"twin_run_tampered": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev EvidenceSet
			got := CompareTwins(tt.in, &ev)
			got.Normalize()
			want := tt.want
			want.Normalize()
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("Twins (-want +got):\n%s", diff)
			}
			gotEv := map[string]int{}
			for _, e := range ev.List() {
				if e.Strength != report.StrengthStrong {
					t.Errorf("evidence %s is %s, want strong", e.Reason, e.Strength)
				}
				gotEv[e.Reason] = e.Count
			}
			if diff := cmp.Diff(tt.evidence, gotEv, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

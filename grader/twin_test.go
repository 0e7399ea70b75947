package grader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/wrapper"
)

// twinKind marks the fake sandbox's twin runs: "pr" + twinKind.
const twinKind = "+twin"

// honestTwinResult is what an honest twin run of the run that reported
// res reports: every hidden test twinned, and every twin failed.
func honestTwinResult(res sandbox.Result) sandbox.Result {
	var r wrapper.Result
	if err := json.Unmarshal(res.Stdout, &r); err != nil {
		return res
	}
	r.Twins = &wrapper.TwinMap{}
	sentinels := map[string]bool{}
	for _, s := range r.Sentinels {
		sentinels[s.ClassName+"::"+s.Name] = true
	}
	for _, e := range r.Expected {
		r.Twins.Twins = append(r.Twins.Twins, wrapper.Twin{ID: testID(e.File, e.Class, e.Name), File: e.File, Line: 1, Kind: "literal", Change: "literal: 1 -> 2"})
		class := junitClass(e.File, e.Class)
		r.JUnit = []byte(strings.Replace(string(r.JUnit), passedCase(class, e.Name), failedCase(class, e.Name), 1))
	}
	return stdout(&r)
}

// evalOf is an evaluation of a run whose hidden tests came out as given,
// by case id in report order.
func evalOf(outcomes ...string) *evaluation {
	ev := &evaluation{cases: map[string][]report.TestResult{}, sentinels: report.SentinelsOK}
	for i := 0; i+1 < len(outcomes); i += 2 {
		id, outcome := outcomes[i], report.Outcome(outcomes[i+1])
		base := id
		if j := strings.IndexByte(id, '['); j > 0 {
			base = id[:j]
		}
		ev.tests = append(ev.tests, report.TestResult{ID: id, Outcome: outcome})
		ev.cases[base] = append(ev.cases[base], report.TestResult{ID: id, Outcome: outcome})
	}
	return ev
}

// twinRunOf is a twin run with the evaluation and map given.
func twinRunOf(ev *evaluation, m *wrapper.TwinMap) *twinRun {
	return &twinRun{r: &run{res: &wrapper.Result{Twins: m}, ev: ev}}
}

func twinMapOf(ids ...string) *wrapper.TwinMap {
	m := &wrapper.TwinMap{}
	for _, id := range ids {
		file, _, _ := strings.Cut(id, "::")
		m.Twins = append(m.Twins, wrapper.Twin{ID: id, File: file, Line: 3, Kind: "literal", Change: "literal: 1 -> 2"})
	}
	return m
}

const (
	twA = "tests/test_x.py::test_a"
	twB = "tests/test_x.py::test_b"
	twP = "tests/test_x.py::test_p"
)

func TestCompareTwins(t *testing.T) {
	P, F := string(report.OutcomePassed), string(report.OutcomeFailed)
	all := twinMapOf(twA, twB, twP)
	pr := evalOf(twA, P, twB, P, twP+"[1-1]", P, twP+"[3-3]", P)
	tests := []struct {
		name string
		in   twinInput
		want report.Twins
		// evidence is the reasons and counts of the evidence recorded.
		evidence map[string]int
	}{
		{
			name: "honest: every twin fails",
			in:   twinInput{pr: pr, twin: twinRunOf(evalOf(twA, F, twB, F, twP+"[1-2]", F, twP+"[3-5]", F), all)},
			want: report.Twins{Twinned: 4, Of: 4},
		},
		{
			name:     "a twin that passes beside its test is a contradiction",
			in:       twinInput{pr: pr, twin: twinRunOf(evalOf(twA, P, twB, F, twP+"[1-2]", F, twP+"[3-5]", F), all)},
			want:     report.Twins{Twinned: 4, Of: 4, Contradictions: []string{twA}, Changes: []report.TwinChange{{ID: twA, File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"}}},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "a failed test whose twin passes is no contradiction",
			in:   twinInput{pr: evalOf(twA, F), twin: twinRunOf(evalOf(twA, P), twinMapOf(twA))},
			want: report.Twins{Twinned: 1, Of: 1},
		},
		{
			name:     "parametrized cases pair by position, whatever their ids",
			in:       twinInput{pr: pr, twin: twinRunOf(evalOf(twA, F, twB, F, twP+"[1-2]", F, twP+"[3-5]", P), all)},
			want:     report.Twins{Twinned: 4, Of: 4, Contradictions: []string{twP + "[3-3]"}, Changes: []report.TwinChange{{ID: twP + "[3-3]", File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"}}},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "untwinnable tests say why; excluded tests are not compared",
			in: twinInput{
				pr: pr,
				twin: twinRunOf(evalOf(twA, P, twB, P, twP+"[1-2]", P, twP+"[3-5]", F), &wrapper.TwinMap{
					Twins:       twinMapOf(twB, twP).Twins,
					Untwinnable: []wrapper.Untwinnable{{ID: twA, Why: "no assertion certain to run that can be changed"}},
				}),
				exclude: []string{twB, twP + "[1-1]"},
			},
			want: report.Twins{Twinned: 1, Of: 4, Untwinnable: 3, Untwinned: []report.TwinGap{
				{ID: twA, Why: "no assertion certain to run that can be changed"},
				{ID: twB, Why: "excluded"},
				{ID: twP + "[1-1]", Why: "excluded"},
			}},
		},
		{
			name: "a twin run that reports another number of cases is not compared",
			in:   twinInput{pr: pr, twin: twinRunOf(evalOf(twA, F, twB, F, twP+"[1-2]", P), all)},
			want: report.Twins{Twinned: 2, Of: 4, Untwinnable: 2, Untwinned: []report.TwinGap{
				{ID: twP + "[1-1]", Why: "the twin run reported 1 case(s) of 2"},
				{ID: twP + "[3-3]", Why: "the twin run reported 1 case(s) of 2"},
			}},
		},
		{
			name: "twins the reference passes are invalid and dropped",
			in: twinInput{
				pr:      pr,
				twin:    twinRunOf(evalOf(twA, P, twB, P, twP+"[1-2]", F, twP+"[3-5]", F), all),
				ref:     evalOf(twA, P, twB, P, twP+"[1-1]", P, twP+"[3-3]", P),
				refTwin: twinRunOf(evalOf(twA, P, twB, F, twP+"[1-2]", F, twP+"[3-5]", F), all),
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
			in: twinInput{
				pr:      evalOf(twA, P),
				twin:    twinRunOf(evalOf(twA, P), twinMapOf(twA)),
				ref:     evalOf(twA, P),
				refTwin: &twinRun{err: errors.New("run sandbox: engine down")},
			},
			want: report.Twins{Twinned: 1, Of: 1, Contradictions: []string{twA}, NotRun: "not validated on the reference patch: run sandbox: engine down",
				Changes: []report.TwinChange{{ID: twA, File: "tests/test_x.py", Line: 3, Kind: "literal", Change: "literal: 1 -> 2"}}},
			evidence: map[string]int{"twin_contradiction": 1},
		},
		{
			name: "a twin sandbox that failed is a gap, not evidence",
			in:   twinInput{pr: evalOf(twA, P), twin: &twinRun{err: errors.New("run sandbox: engine down")}},
			want: report.Twins{Of: 1, Untwinnable: 1, NotRun: "run sandbox: engine down", Untwinned: []report.TwinGap{{ID: twA, Why: "twins not run"}}},
		},
		{
			name: "a generator that failed is a gap",
			in:   twinInput{pr: evalOf(twA, P), twin: twinRunOf(evalOf(twA, P), &wrapper.TwinMap{Error: "twin generator: exit 1: MemoryError"})},
			want: report.Twins{Of: 1, Untwinnable: 1, NotRun: "twin generator: exit 1: MemoryError", Untwinned: []report.TwinGap{{ID: twA, Why: "twins not run"}}},
		},
		{
			name: "a wrapper without twins is a gap",
			in:   twinInput{pr: evalOf(twA, P), twin: twinRunOf(evalOf(twA, P), nil)},
			want: report.Twins{Of: 1, Untwinnable: 1, NotRun: "the wrapper made no twins", Untwinned: []report.TwinGap{{ID: twA, Why: "twins not run"}}},
		},
		{
			name: "wrong sentinels in the twin run are strong evidence",
			in: twinInput{pr: evalOf(twA, P), twin: twinRunOf(func() *evaluation {
				ev := evalOf(twA, F)
				ev.tampered = []string{"a sentinel test that must fail came out passed: the runner was bent"}
				return ev
			}(), twinMapOf(twA))},
			want:     report.Twins{Twinned: 1, Of: 1},
			evidence: map[string]int{"twin_run_tampered": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev evidenceSet
			got := compareTwins(tt.in, &ev)
			got.Normalize()
			want := tt.want
			want.Normalize()
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("Twins (-want +got):\n%s", diff)
			}
			gotEv := map[string]int{}
			for _, e := range ev.list() {
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

// bentTwinResult is the twin run of a bent runner: every hidden test
// passed, twin or not.
func bentTwinResult() sandbox.Result {
	var r wrapper.Result
	honest := honestTwinResult(stdout(gradeRun()))
	if err := json.Unmarshal(honest.Stdout, &r); err != nil {
		panic(err)
	}
	r.JUnit = gradeRun().JUnit
	return stdout(&r)
}

func TestGradeTwins(t *testing.T) {
	engineDown := errors.New("cannot connect to the Docker daemon")
	tests := []struct {
		name      string
		results   map[string]sandbox.Result
		kindErr   map[string]error
		exclude   []string
		command   []string
		want      report.Verdict
		reasons   []string
		twins     bool
		contradic []string
	}{
		{
			name:    "honest twins keep the pass",
			results: results(map[string]*wrapper.Result{"pr": gradeRun()}),
			want:    report.VerdictPass,
			reasons: []string{"all 3 hidden tests passed"},
			twins:   true,
		},
		{
			name:      "twins that pass make a pass tampered",
			results:   map[string]sandbox.Result{"pr": stdout(gradeRun()), "pr" + twinKind: bentTwinResult()},
			want:      report.VerdictTampered,
			reasons:   []string{"strong evidence: twin_contradiction (3×): tests/test_x.py::test_a, tests/test_x.py::test_b, tests/test_y.py::test_c"},
			twins:     true,
			contradic: []string{"tests/test_x.py::test_a", "tests/test_x.py::test_b", "tests/test_y.py::test_c"},
		},
		{
			name:      "excluded tests are not compared",
			results:   map[string]sandbox.Result{"pr": stdout(gradeRun()), "pr" + twinKind: bentTwinResult()},
			exclude:   []string{"tests/test_x.py::test_a", "tests/test_x.py::test_b"},
			want:      report.VerdictTampered,
			reasons:   []string{"strong evidence: twin_contradiction (1×): tests/test_y.py::test_c"},
			twins:     true,
			contradic: []string{"tests/test_y.py::test_c"},
		},
		{
			name:    "a twin sandbox that fails keeps the verdict, with a note",
			results: results(map[string]*wrapper.Result{"pr": gradeRun("test_b")}),
			kindErr: map[string]error{"pr" + twinKind: engineDown},
			want:    report.VerdictFail,
			reasons: []string{"1 of 3 hidden tests did not pass", "twins: not run (run sandbox: cannot connect to the Docker daemon)"},
			twins:   true,
		},
		{
			name:    "a twin sandbox without a report keeps the pass, with a note",
			results: map[string]sandbox.Result{"pr": stdout(gradeRun()), "pr" + twinKind: {ExitCode: 137, OOMKilled: true}},
			want:    report.VerdictPass,
			reasons: []string{"all 3 hidden tests passed", "twins: not run (the sandbox ended without a report (exit 137, out of memory))"},
			twins:   true,
		},
		{
			name:    "a command has no twins",
			results: results(map[string]*wrapper.Result{"pr": {Runner: []string{"/usr/bin/make", "test"}, Isolation: gradeRun().Isolation}}),
			command: []string{"make", "test"},
			want:    report.VerdictPass,
			reasons: []string{"all 1 hidden tests passed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := &fakeSandbox{results: tt.results, kindErr: tt.kindErr}
			req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), TwinExclude: tt.exclude, Command: tt.command}
			rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			if rep.Verdict != tt.want {
				t.Errorf("Verdict = %q, want %q (reasons %q)", rep.Verdict, tt.want, rep.Reasons)
			}
			checkMessages(t, "reasons", rep.Reasons, tt.reasons)
			if (rep.Twins != nil) != tt.twins {
				t.Fatalf("Twins = %+v, want twins %v", rep.Twins, tt.twins)
			}
			var kinds []string
			for _, c := range sb.Calls() {
				if len(c.Job.Select) > 0 {
					continue // the rerun of failing tests (flaky_test.go)
				}
				kinds = append(kinds, c.Kind)
				if c.Job.Mode == wrapper.ModePytest && !slices.Equal(c.Job.TwinExclude, tt.exclude) {
					t.Errorf("%s job TwinExclude = %q, want %q", c.Kind, c.Job.TwinExclude, tt.exclude)
				}
			}
			wantKinds := []string{"pr"}
			if tt.twins {
				wantKinds = append(wantKinds, "pr"+twinKind)
			}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Errorf("sandbox runs (-want +got):\n%s", diff)
			}
			if rep.Twins == nil {
				return
			}
			if diff := cmp.Diff(tt.contradic, rep.Twins.Contradictions, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Contradictions (-want +got):\n%s", diff)
			}
			var text bytes.Buffer
			if err := report.WriteText(&text, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "\ntwins ") {
				t.Errorf("text has no twins line:\n%s", text.String())
			}
		})
	}
}

func TestTwinsLine(t *testing.T) {
	tests := []struct {
		tw   report.Twins
		want string
	}{
		{report.Twins{Twinned: 9, Of: 10, Untwinnable: 1, Validated: true}, "9/10 twinned, 1 untwinnable, validated on the reference; no contradiction"},
		{report.Twins{Twinned: 3, Of: 3, Contradictions: []string{"t::a", "t::b"}, InvalidTwins: []string{"t::c"}}, "3/3 twinned, 0 untwinnable, 1 invalid (the reference passed them); contradictions: t::a, t::b"},
		{report.Twins{Of: 3, Untwinnable: 3, NotRun: "run sandbox: engine down"}, "not run (run sandbox: engine down)"},
		{report.Twins{Twinned: 1, Of: 1, NotRun: "not validated on the reference patch: x\u202e"}, `1/1 twinned, 0 untwinnable; no contradiction; not validated on the reference patch: x\u202e`},
	}
	for _, tt := range tests {
		if got := report.TwinsLine(&tt.tw); got != tt.want {
			t.Errorf("TwinsLine(%+v) = %q, want %q", tt.tw, got, tt.want)
		}
	}
}

// TestGradeReferenceIsRepo: a tree under test that is the reference patch
// applied (the version's own check) runs once, twin included, and every twin
// it passes is invalid, not a contradiction.
func TestGradeReferenceIsRepo(t *testing.T) {
	sb := &fakeSandbox{results: map[string]sandbox.Result{
		"ref":            stdout(gradeRun()),
		"ref" + twinKind: bentTwinResult(),
		"base":           stdout(gradeRun("test_a", "test_b")),
	}}
	req := Request{Repo: gradeRepo(t, "ref"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base"), Reference: []byte(gradeReference)}
	rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), req)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if rep.Verdict != report.VerdictPass {
		t.Errorf("Verdict = %q (%q), want pass", rep.Verdict, rep.Reasons)
	}
	var kinds []string
	for _, c := range sb.Calls() {
		kinds = append(kinds, c.Kind)
	}
	if diff := cmp.Diff([]string{"base", "ref", "ref" + twinKind}, kinds); diff != "" {
		t.Errorf("sandbox runs (-want +got):\n%s", diff)
	}
	want := []string{"tests/test_x.py::test_a", "tests/test_x.py::test_b", "tests/test_y.py::test_c"}
	if tw := rep.Twins; tw == nil || !tw.Validated || len(tw.Contradictions) != 0 || !slices.Equal(tw.InvalidTwins, want) {
		t.Errorf("Twins = %+v, want validated with every twin invalid", rep.Twins)
	}
	if rep.ReferenceCheck == nil || !rep.ReferenceCheck.AllPass {
		t.Errorf("ReferenceCheck = %+v, want all pass", rep.ReferenceCheck)
	}
}

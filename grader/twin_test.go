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

	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/grader/evaluate/evaluatetest"
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
		r.Twins.Twins = append(r.Twins.Twins, wrapper.Twin{ID: evaluate.TestID(e.File, e.Class, e.Name), File: e.File, Line: 1, Kind: "literal", Change: "literal: 1 -> 2"})
		class := evaluate.JUnitClass(e.File, e.Class)
		r.JUnit = []byte(strings.Replace(string(r.JUnit), evaluatetest.PassedCase(class, e.Name), evaluatetest.FailedCase(class, e.Name), 1))
	}
	return stdout(&r)
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
			evaluatetest.CheckMessages(t, "reasons", rep.Reasons, tt.reasons)
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

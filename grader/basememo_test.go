package grader

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// baseRunsOf counts the base runs among sb's calls.
func baseRunsOf(sb *fakeSandbox) int {
	n := 0
	for _, c := range sb.Calls() {
		if c.Kind == "base" {
			n++
		}
	}
	return n
}

// TestBaseRunReused: a pull request graded again against the same base and
// tests (a push to it) reuses the base run of its first grade, and says
// so; anything that decides the base run (the tests, the base, the limits)
// runs the base again; a base run that ended without a report is never
// kept.
func TestBaseRunReused(t *testing.T) {
	ctx := context.Background()
	sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun(), "base": gradeRun("test_a", "test_b")})}
	g := New(sb, gradeImage, gradeImageID)
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), Base: gradeRepo(t, "base")}

	first, err := g.Grade(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.BaseCheck == nil || first.BaseCheck.Reused {
		t.Fatalf("first grade's base check: %+v; want a base run of its own", first.BaseCheck)
	}
	// A push: the tree under test changes, the base and tests do not.
	again := req
	again.Repo = gradeRepo(t, "pr", tree.File{Path: "notes.txt", Mode: 0o644, Data: []byte("second push\n")})
	second, err := g.Grade(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if n := baseRunsOf(sb); n != 1 {
		t.Errorf("the base ran %d times for two grades of one base and one set of tests; want once", n)
	}
	if !second.BaseCheck.Reused {
		t.Errorf("second grade's base check does not say it was reused: %+v", second.BaseCheck)
	}
	firstCheck, secondCheck := *first.BaseCheck, *second.BaseCheck
	secondCheck.Reused = false
	if diff := cmp.Diff(firstCheck, secondCheck); diff != "" {
		t.Errorf("the reused base check differs from the one it reuses (-first +second):\n%s", diff)
	}
	if first.Verdict != second.Verdict {
		t.Errorf("verdicts %s then %s", first.Verdict, second.Verdict)
	}

	// What decides the base run runs it again.
	for _, c := range []struct {
		name   string
		change func(*Request)
	}{
		{"other tests", func(r *Request) {
			r.Hidden = mustTree(t, append(gradeHidden(t).Files, tree.File{Path: "tests/test_z.py", Mode: 0o644, Data: []byte("def test_z():\n    pass\n")})...)
		}},
		{"another base", func(r *Request) {
			r.Base = gradeRepo(t, "base", tree.File{Path: "README", Mode: 0o644, Data: []byte("moved on\n")})
		}},
		{"other limits", func(r *Request) { r.Limits = sandbox.DefaultLimits; r.Limits.Memory /= 2 }},
	} {
		before := baseRunsOf(sb)
		r := req
		c.change(&r)
		rep, err := g.Grade(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if baseRunsOf(sb) != before+1 || rep.BaseCheck.Reused {
			t.Errorf("%s: the base did not run again (reused %v)", c.name, rep.BaseCheck.Reused)
		}
	}

	// A base run without a report (the sandbox died) is not kept.
	dying := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
	dying.results["base"] = sandbox.Result{ExitCode: 137, Stderr: []byte("Killed\n")}
	g = New(dying, gradeImage, gradeImageID)
	for i := range 2 {
		rep, err := g.Grade(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if rep.BaseCheck == nil || rep.BaseCheck.Reused || rep.BaseCheck.Note == "" {
			t.Errorf("grade %d: base check %+v; want a crashed base run of its own", i+1, rep.BaseCheck)
		}
	}
	if n := baseRunsOf(dying); n != 2 {
		t.Errorf("a base run that crashed was reused: %d base runs for two grades", n)
	}
}

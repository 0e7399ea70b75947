package grader

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

func TestReproduce(t *testing.T) {
	grade := func(t *testing.T, pr *wrapper.Result) *report.Report {
		t.Helper()
		sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": pr})}
		rep, err := New(sb, gradeImage, gradeImageID).Grade(context.Background(), Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	recorded := grade(t, gradeRun())
	req := Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t)}

	t.Run("same", func(t *testing.T) {
		sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
		rp, err := New(sb, gradeImage, gradeImageID).Reproduce(context.Background(), req, recorded)
		if err != nil {
			t.Fatal(err)
		}
		if !rp.Same || len(rp.Differences) != 0 {
			t.Errorf("same inputs and outcomes not reproduced: %q", rp.Differences)
		}
		var out strings.Builder
		if err := report.WriteSideBySide(&out, rp); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"recorded", "again", "verdict                  pass", "reproduced: the same verdict"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("side by side lacks %q:\n%s", want, out.String())
			}
		}
		if strings.Contains(out.String(), "≠") {
			t.Errorf("a row is marked as differing:\n%s", out.String())
		}
	})
	t.Run("different outcome", func(t *testing.T) {
		sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun("test_b")})}
		rp, err := New(sb, gradeImage, gradeImageID).Reproduce(context.Background(), req, recorded)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"verdict: pass | fail", "hidden tests: 3/3 passed (0 failed, 0 errors, 0 skipped) | 2/3 passed (1 failed, 0 errors, 0 skipped)",
			"tests/test_x.py::test_b: passed | failed"}
		if diff := cmp.Diff(want, rp.Differences); rp.Same || diff != "" {
			t.Errorf("differences (-want +got):\n%s", diff)
		}
		var out strings.Builder
		if err := report.WriteSideBySide(&out, rp); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "≠  tests/test_x.py::test_b  passed") || !strings.Contains(out.String(), "not reproduced: 3 difference(s)") {
			t.Errorf("side by side:\n%s", out.String())
		}
	})
	t.Run("with the recorded limits", func(t *testing.T) {
		rec := *recorded
		rec.Settings = &report.Settings{TimeoutSeconds: 90, Memory: 256 << 20, NanoCPUs: 5e8, Pids: 99}
		sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
		rp, err := New(sb, gradeImage, gradeImageID).Reproduce(context.Background(), req, &rec)
		if err != nil {
			t.Fatal(err)
		}
		l := sb.Calls()[0].Spec.Limits
		if l.Memory != 256<<20 || l.NanoCPUs != 5e8 || l.Pids != 99 || *rp.Again.Settings != *rec.Settings || len(rp.Notes) != 0 {
			t.Errorf("limits %+v, settings %+v, notes %q: want the recorded ones", l, rp.Again.Settings, rp.Notes)
		}
	})
	// A split grade is graded split again, whatever the configuration
	// says now: its settings say so, or, recorded before they did, its
	// sealing.
	for name, rec := range map[string]report.Report{
		"a split grade": func() report.Report {
			r := *recorded
			r.Settings = &report.Settings{TimeoutSeconds: 90, Memory: 256 << 20, NanoCPUs: 5e8, Pids: 99, Split: true}
			return r
		}(),
		"a split grade recorded before its settings said so": func() report.Report {
			r := *recorded
			r.Settings = &report.Settings{TimeoutSeconds: 90, Memory: 256 << 20, NanoCPUs: 5e8, Pids: 99}
			r.Sealing = &report.Sealing{Passing: 1, Sealed: 1}
			return r
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
			if _, err := New(sb, gradeImage, gradeImageID).Reproduce(context.Background(), req, &rec); err != nil {
				t.Fatal(err)
			}
			if c := sb.Calls()[0]; !c.Job.Split {
				t.Errorf("the reproduction of %s did not run split", name)
			}
		})
	}
	t.Run("an in-process grade", func(t *testing.T) {
		rec := *recorded
		sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
		if _, err := New(sb, gradeImage, gradeImageID).Reproduce(context.Background(), req, &rec); err != nil {
			t.Fatal(err)
		}
		if c := sb.Calls()[0]; c.Job.Split {
			t.Errorf("the reproduction of an in-process grade ran split")
		}
	})
	t.Run("a report that does not name its limits", func(t *testing.T) {
		rec := *recorded
		rec.Settings = nil
		sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
		rp, err := New(sb, gradeImage, gradeImageID).Reproduce(context.Background(), req, &rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(rp.Notes) != 1 || !strings.Contains(rp.Notes[0], "does not say which timeout") {
			t.Errorf("notes %q", rp.Notes)
		}
	})
	for name, tc := range map[string]struct {
		req     Request
		imageID string
	}{
		"another tree":         {req: Request{Repo: gradeRepo(t, "base"), Hidden: gradeHidden(t)}, imageID: gradeImageID},
		"other hidden tests":   {req: Request{Repo: gradeRepo(t, "pr"), Hidden: gradeHidden(t), TestsDigest: "sha256:other"}, imageID: gradeImageID},
		"another grader image": {req: req, imageID: "sha256:fedcba9876543210"},
	} {
		t.Run(name, func(t *testing.T) {
			sb := &fakeSandbox{results: results(map[string]*wrapper.Result{"pr": gradeRun()})}
			_, err := New(sb, gradeImage, tc.imageID).Reproduce(context.Background(), tc.req, recorded)
			if !errors.Is(err, ErrNotReproducible) {
				t.Errorf("err %v, want ErrNotReproducible", err)
			}
			if n := len(sb.Calls()); n != 0 {
				t.Errorf("%d sandbox runs for inputs that are not the recorded ones", n)
			}
		})
	}
}

package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

const evidenceAttacks = "testdata/evidence"

// evidenceRequest builds the grade of one attack of testdata/evidence: its
// files/ over the sample's base against the sample's hidden tests, or its
// own repo/ and hidden/.
func evidenceRequest(t *testing.T, dir string) grader.Request {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "repo")); err == nil {
		repo, err := tree.Load(filepath.Join(dir, "repo"))
		if err != nil {
			t.Fatal(err)
		}
		hidden, err := tree.Load(filepath.Join(dir, "hidden"))
		if err != nil {
			t.Fatal(err)
		}
		return grader.Request{Repo: repo, Hidden: hidden}
	}
	base, err := tree.Load(filepath.Join(sampleDir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := tree.Load(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]tree.File{}
	for _, f := range base.Files {
		files[f.Path] = f
	}
	for _, f := range overlay.Files {
		files[f.Path] = f
	}
	var list []tree.File
	for _, f := range files {
		list = append(list, f)
	}
	repo, err := tree.New(list)
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := tree.Load(filepath.Join(sampleDir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	return grader.Request{Repo: repo, Hidden: hidden}
}

// TestRuntimeEvidenceAttacks grades attacks that spare the sentinels, so
// that only runtime evidence can tell: each must be tampered, with the
// strong evidence its want.txt names.
func TestRuntimeEvidenceAttacks(t *testing.T) {
	entries, err := os.ReadDir(evidenceAttacks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(evidenceAttacks, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(dir, "want.txt"))
			if err != nil {
				t.Fatal(err)
			}
			rep := grade(t, evidenceRequest(t, dir))
			reason := strings.TrimSpace(string(want))
			if rep.Verdict != report.VerdictTampered {
				t.Errorf("verdict %s, want tampered (reasons %q, evidence %+v)", rep.Verdict, rep.Reasons, rep.Evidence)
			}
			found := false
			for _, ev := range rep.Evidence {
				if ev.Reason == reason && ev.Strength == report.StrengthStrong {
					found = true
				}
			}
			if !found {
				t.Errorf("no strong evidence %s among %+v", reason, rep.Evidence)
			}
			t.Logf("%s -> %s: %q", e.Name(), rep.Verdict, rep.Reasons)
		})
	}
	t.Cleanup(func() { testenv.CheckSandboxes(t) })
}

// TestRuntimeEvidenceHonest: an honest, correct implementation shows no
// runtime evidence at all, strong or weak.
func TestRuntimeEvidenceHonest(t *testing.T) {
	req := sampleRequest(t, "correct")
	req.Base = nil
	rep := grade(t, req)
	if rep.Verdict != report.VerdictPass {
		t.Errorf("verdict %s, want pass (%q)", rep.Verdict, rep.Reasons)
	}
	if len(rep.Evidence) > 0 {
		t.Errorf("an honest run shows evidence: %+v", rep.Evidence)
	}
	testenv.CheckSandboxes(t)
}

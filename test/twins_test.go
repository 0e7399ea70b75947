package test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestTwinAttacks grades attacks that the sentinels cannot see, since they
// bend only the tests that call the code under test or read their answers
// from the test: each must grade tampered on a twin contradiction.
func TestTwinAttacks(t *testing.T) {
	dirs, err := filepath.Glob("testdata/twins/attacks/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no twin attacks: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			c, rep := gradeCase(t, dir)
			checkExpect(t, c, rep)
			if !hasEvidence(rep, "twin_contradiction") {
				t.Errorf("no twin_contradiction evidence: verdict %s, reasons %q, evidence %+v", rep.Verdict, rep.Reasons, rep.Evidence)
			}
			t.Logf("%s -> %s (%s)", filepath.Base(dir), rep.Verdict, strings.Join(rep.Reasons, "; "))
		})
	}
	t.Cleanup(func() { testenv.CheckSandboxes(t) })
}

func hasEvidence(rep *grader.Report, reason string) bool {
	return slices.ContainsFunc(rep.Evidence, func(e grader.Evidence) bool { return e.Reason == reason && e.Strength == grader.StrengthStrong })
}

// checkHonestTwins holds for every honest grade: no strong evidence, no
// twin contradiction, and the twins of the sample's hidden tests ran.
func checkHonestTwins(t *testing.T, rep *grader.Report) {
	t.Helper()
	if strong := grader.StrongEvidence(rep.Evidence); len(strong) > 0 {
		t.Errorf("an honest grade has strong evidence: %+v", strong)
	}
	tw := rep.Twins
	if tw == nil {
		t.Fatalf("a pytest grade has no twins")
	}
	if len(tw.Contradictions) > 0 {
		t.Errorf("twin contradictions on an honest grade: %v (%+v)", tw.Contradictions, tw.Changes)
	}
	if tw.Of > 0 && tw.NotRun == "" && tw.Twinned+tw.Untwinnable != tw.Of {
		t.Errorf("twins %d + untwinnable %d != %d", tw.Twinned, tw.Untwinnable, tw.Of)
	}
	t.Logf("twins: %d/%d twinned, not run %q, invalid %v", tw.Twinned, tw.Of, tw.NotRun, tw.InvalidTwins)
}

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

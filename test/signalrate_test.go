package test

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// maxHonestFlagged is the largest share of honest real pull requests that
// may raise a tamper signal: above it, reviewers learn to ignore signals.
const maxHonestFlagged = 0.10

// TestRealReposSignalRate measures, on the commits of TestRealRepos (or
// TESTFIRST_REAL_REPOS_LIST), how many honest pull requests raise tamper
// signals: every signal of the commit's tree ("all signals", what the
// grader flagged before signals were ranked), and those about what the
// commit adds or changes against its parent (what the check run now
// counts; the rest is context). Tamper signals are static, so no sandbox
// runs. It fails when more than maxHonestFlagged of the commits are
// flagged.
func TestRealReposSignalRate(t *testing.T) {
	list := loadRealCommits(t)
	root := cmp.Or(os.Getenv("TESTFIRST_REAL_REPOS"), defaultRealRepos)
	var cases, allFlagged, flagged int
	reasons := map[string]int{}
	for _, c := range list.Commits {
		gitDir := realRepoGitDir(root, c.Repo)
		if gitDir == "" || len(c.Hidden) == 0 {
			continue
		}
		trees, err := realTrees(gitDir, c)
		if err != nil {
			t.Logf("%s %s: %v", c.Repo, c.Commit[:10], err)
			continue
		}
		all := detect.TamperSignals(trees.commit, trees.hidden)
		signals, context := detect.RankTamperSignals(all, trees.parent, trees.commit)
		cases++
		if len(all) > 0 {
			allFlagged++
		}
		if len(signals) > 0 {
			flagged++
		}
		var said []string
		for _, s := range signals {
			said = append(said, s.Path+": "+s.Reason)
			reasons[s.Reason]++
		}
		t.Logf("%-28s %s: %d signals before, %d after (%d context) %v", c.Repo, c.Commit[:10], len(all), len(signals), len(context), said)
	}
	if cases == 0 {
		t.Skipf("no git directory of the listed projects under %s (TESTFIRST_REAL_REPOS)", root)
	}
	var kinds []string
	for r, n := range reasons {
		kinds = append(kinds, fmt.Sprintf("%s×%d", r, n))
	}
	slices.Sort(kinds)
	t.Logf("honest pull requests flagged: %d of %d (%.1f %%) with all signals, %d of %d (%.1f %%) with signals about what they add or change; signals left: %s",
		allFlagged, cases, 100*float64(allFlagged)/float64(cases), flagged, cases, 100*float64(flagged)/float64(cases), strings.Join(kinds, ", "))
	if float64(flagged) > maxHonestFlagged*float64(cases) {
		t.Errorf("%d of %d honest pull requests raise tamper signals, more than %.0f %%", flagged, cases, 100*maxHonestFlagged)
	}
}

// TestAttackSignalsAreNotContext: ranking signals must not turn what an
// attack adds into context. Every path an attack of the corpus expects
// among its tamper signals stays a signal against the sample's base; no
// sandbox runs (TestAttacks grades them).
func TestAttackSignalsAreNotContext(t *testing.T) {
	hidden, err := tree.Load(sampleDir + "/hidden")
	if err != nil {
		t.Fatal(err)
	}
	var before, after, n int
	for _, dir := range caseDirs(t, "attacks") {
		c, pr, base := loadCase(t, dir)
		all := detect.TamperSignals(pr, hidden)
		signals, context := detect.RankTamperSignals(all, base, pr)
		n++
		if len(all) > 0 {
			before++
		}
		if len(signals) > 0 {
			after++
		} else if len(all) > 0 {
			t.Logf("%s: its %d signals are all context now; its grade must catch it", dir, len(all))
		}
		for _, p := range c.Expect.TamperSignals {
			if !slices.ContainsFunc(signals, func(s report.TamperSignal) bool { return s.Path == p }) {
				t.Errorf("%s: %s is not among the signals %v (context %v)", dir, p, signals, context)
			}
		}
	}
	t.Logf("attacks with tamper signals: %d of %d with all signals, %d of %d with signals about what they add or change", before, n, after, n)
}

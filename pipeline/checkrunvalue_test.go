package pipeline

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/checkrun"
)

// TestWithdrawnCheckRun: a withdrawn ticket's run names who removed the
// label and stays blocking unless the repository chose neutral, and says
// which it is.
func TestWithdrawnCheckRun(t *testing.T) {
	block := WithdrawnCheckRun(7, "test-first", "passed", "maria", DefaultRepoConfig().WithdrawnCheck)
	if block.Conclusion != checkrun.ConclusionActionRequired || !strings.Contains(block.Summary, "removed from #7 by `maria`") ||
		!strings.Contains(block.Summary, "cannot merge on this check while the ticket is withdrawn") {
		t.Errorf("default: %+v", block)
	}
	open := WithdrawnCheckRun(7, "test-first", "passed", "", checkrun.ConclusionNeutral)
	if open.Conclusion != checkrun.ConclusionNeutral || strings.Contains(open.Summary, " by ") ||
		!strings.Contains(open.Summary, "this check no longer blocks the pull request") {
		t.Errorf("withdrawn_check neutral: %+v", open)
	}
}

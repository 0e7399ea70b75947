package grader

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/testfirst-app/testfirst/grader/evaluate"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Bounds of a mutation run, unless TestStrength sets others.
const (
	// DefaultMaxMutants bounds the mutants of one reference patch.
	DefaultMaxMutants = 40
	// DefaultMutationBudget is how long after their sandboxes start new
	// mutants may start; the rest are counted as not run.
	DefaultMutationBudget = time.Minute
	// DefaultMutationSandboxes is how many sandboxes share the mutants.
	// Each runs its share one after another in a single container, so the
	// cost is one container start per sandbox, not per mutant.
	DefaultMutationSandboxes = 2
	// minMutantTimeout and maxMutantTimeout clamp one mutant's test run
	// (a quarter of the budget): a mutant that loops forever is killed
	// there, and counts as killed.
	minMutantTimeout = 5 * time.Second
	maxMutantTimeout = 30 * time.Second
	// mutationMargin is the time past the budget a mutation sandbox gets to
	// finish its last mutant and report.
	mutationMargin = 30 * time.Second
)

// TestStrength asks a grade to measure the hidden tests themselves, as the
// base check of a new version does: the base tree (and the reference, with
// a reference patch) runs a second time with the tests in reverse order,
// and tests whose outcome differs are reported flaky in BaseCheck.Flaky;
// with a reference patch, mutants of the lines it adds are graded too
// (ReferenceCheck.Mutation).
type TestStrength struct {
	// MaxMutants bounds the mutants; DefaultMaxMutants when 0, none when
	// negative.
	MaxMutants int
	// MutationBudget bounds the mutation run's wall time;
	// DefaultMutationBudget when 0.
	MutationBudget time.Duration
	// MutationSandboxes is how many sandboxes share the mutants;
	// DefaultMutationSandboxes when 0.
	MutationSandboxes int
}

func (s TestStrength) withDefaults() TestStrength {
	if s.MaxMutants == 0 {
		s.MaxMutants = DefaultMaxMutants
	}
	if s.MutationBudget <= 0 {
		s.MutationBudget = DefaultMutationBudget
	}
	if s.MutationSandboxes <= 0 {
		s.MutationSandboxes = DefaultMutationSandboxes
	}
	return s
}

// AddedLines returns, per file a unified diff creates or changes, the
// 1-based line numbers (in the patched file) of the lines it adds.
func AddedLines(patch []byte) (map[string][]int, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, fmt.Errorf("parse patch: %w", err)
	}
	out := map[string][]int{}
	for _, f := range files {
		if f.IsDelete || f.IsBinary {
			continue
		}
		for _, frag := range f.TextFragments {
			n := int(frag.NewPosition)
			for _, l := range frag.Lines {
				switch l.Op {
				case gitdiff.OpAdd:
					out[f.NewName] = append(out[f.NewName], n)
					n++
				case gitdiff.OpContext:
					n++
				}
			}
		}
	}
	return out, nil
}

// mutantsJob is the job of mutation sandbox shard of shards.
func mutantsJob(added map[string][]int, s TestStrength, shard int) func(*wrapper.Job) {
	per := min(max(s.MutationBudget/4, minMutantTimeout), maxMutantTimeout)
	return func(j *wrapper.Job) {
		j.Mode = wrapper.ModeMutants
		j.Mutants = &wrapper.MutantsJob{Added: added, Max: s.MaxMutants, Shard: shard, Shards: s.MutationSandboxes,
			BudgetMillis: s.MutationBudget.Milliseconds(), MutantMillis: per.Milliseconds()}
	}
}

// strengthRuns are the extra runs of a grade with TestStrength.
type strengthRuns struct {
	baseAgain, refAgain *run
	shards              []*run
}

// startStrength starts, through start, the extra runs req.TestStrength
// asks for: the base and the reference again, tests reversed, and the
// mutation shards. Without it, it starts nothing.
func (g *Grader) startStrength(req Request, refTree *tree.Tree, start func(**run, *tree.Tree, ...func(*wrapper.Job))) *strengthRuns {
	sr := &strengthRuns{}
	if req.TestStrength == nil || req.Base == nil || req.Command != nil {
		return sr
	}
	s := req.TestStrength.withDefaults()
	start(&sr.baseAgain, req.Base, reverseTests)
	if refTree == nil {
		return sr
	}
	start(&sr.refAgain, refTree, reverseTests)
	added, err := AddedLines(req.Reference)
	if err != nil || len(added) == 0 || s.MaxMutants < 0 {
		return sr
	}
	sr.shards = make([]*run, s.MutationSandboxes)
	for i := range sr.shards {
		start(&sr.shards[i], refTree, mutantsJob(added, s, i))
	}
	return sr
}

// flaky lists the tests whose outcome differed between a tree's two runs.
func (sr *strengthRuns) flaky(base, ref *run) []string {
	ids := slices.Concat(evaluate.FlakyBetween(evalOf(base), evalOf(sr.baseAgain)), evaluate.FlakyBetween(evalOf(ref), evalOf(sr.refAgain)))
	slices.Sort(ids)
	return slices.Compact(ids)
}

// evalOf is r's Evaluation, nil without a run.
func evalOf(r *run) *evaluate.Evaluation {
	if r == nil {
		return nil
	}
	return r.ev
}

// mutation judges the mutation shards; nil when there were none.
func (sr *strengthRuns) mutation(refPassed bool) *report.Mutation {
	if len(sr.shards) == 0 {
		return nil
	}
	var wall time.Duration
	for _, sh := range sr.shards {
		wall = max(wall, sh.wall)
	}
	shards := make([]*wrapper.Result, len(sr.shards))
	for i, sh := range sr.shards {
		shards[i] = sh.res
	}
	return evaluate.Mutation(shards, refPassed, wall.Seconds())
}

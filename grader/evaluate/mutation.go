package evaluate

import (
	"cmp"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/wrapper"
)

// Mutation counts the mutants of the shards' runs. refPassed says
// whether the reference itself passed every hidden test: if not, killing
// a mutant means nothing.
func Mutation(shards []*wrapper.Result, refPassed bool, seconds float64) *report.Mutation {
	m := &report.Mutation{Sandboxes: len(shards), Seconds: seconds, Survivors: []report.Survivor{}}
	if !refPassed {
		m.Error = "not measured: the reference patch does not pass every hidden test"
		return m
	}
	var errs []string
	for _, sh := range shards {
		res := sh
		if res.Error != "" && len(res.Mutants) == 0 {
			errs = append(errs, res.Error)
			continue
		}
		m.Candidates = max(m.Candidates, res.MutantCandidates)
		for _, mr := range res.Mutants {
			switch judgeMutant(res, mr) {
			case mutantKilled:
				m.Mutants++
				m.Killed++
			case mutantSurvived:
				m.Mutants++
				m.Survivors = append(m.Survivors, report.Survivor{File: mr.File, Line: mr.Line, Change: mr.Change, Before: mr.Before, After: mr.After})
			case mutantInvalid:
				m.Invalid++
			default:
				m.NotRun++
			}
		}
	}
	slices.SortFunc(m.Survivors, func(a, b report.Survivor) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line, strings.Compare(a.Change, b.Change))
	})
	if len(errs) > 0 {
		m.Error = strings.Join(errs, "; ")
	}
	return m
}

type mutantOutcome int

const (
	mutantNotRun mutantOutcome = iota
	mutantInvalid
	mutantKilled
	mutantSurvived
)

// judgeMutant judges one mutant's run with the same Evaluation as any run,
// so a report that is not the runner's own (wrong sentinels, missing
// tests) never counts as a kill or a survivor.
func judgeMutant(shard *wrapper.Result, mr wrapper.MutantRun) mutantOutcome {
	if mr.Skipped != "" || mr.Error != "" {
		return mutantNotRun
	}
	if mr.TimedOut {
		return mutantKilled // the tests hung on it: noticed
	}
	cases, err := ParseJUnit(mr.JUnit)
	if err == nil && slices.ContainsFunc(cases, func(c JUnitCase) bool { return c.ClassName == "" && c.Outcome == report.OutcomeError }) {
		return mutantInvalid // a hidden module could not import it
	}
	ev := evaluatePytest(&wrapper.Result{Expected: shard.Expected, Sentinels: shard.Sentinels, Runner: shard.Runner,
		ExitCode: mr.ExitCode, Signal: mr.Signal, JUnit: mr.JUnit, JUnitTruncated: mr.JUnitTruncated})
	switch {
	case len(ev.Tampered) > 0 || len(ev.Problems) > 0:
		return mutantNotRun
	case ev.AllPassed(nil):
		return mutantSurvived
	default:
		return mutantKilled
	}
}

package wrapper

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

//go:embed python/mutate.py
var mutateScript string

// mutateOutputLimit bounds what the mutant generator may print: the
// mutated files, at most MutantsJob.Max of them.
const mutateOutputLimit = 64 << 20

// MutantsJob is a mutation job: the wrapper makes mutants of the lines
// Added of the tree (operators swapped, constants moved by one, booleans
// flipped, returned strings changed, statements replaced by pass), keeps
// at most Max of them spread over all, and runs the hidden tests once per
// mutant whose index modulo Shards is Shard, each with the one mutated file
// in place of the original. Every shard makes the same list, so shards in
// separate sandboxes split the work without talking to each other.
type MutantsJob struct {
	// Added lists, per file of the tree, the 1-based lines to mutate.
	Added map[string][]int `json:"added"`
	// Max bounds the mutants over all shards.
	Max    int `json:"max"`
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// BudgetMillis is how long after the wrapper started new mutants may
	// start; the rest are reported skipped.
	BudgetMillis int64 `json:"budget_ms"`
	// MutantMillis bounds one mutant's test run; a run killed at it counts
	// as a killed mutant.
	MutantMillis int64 `json:"mutant_ms"`
}

// MutantRun is one mutant and, unless it was skipped, the run of the
// hidden tests against it.
type MutantRun struct {
	// Index is the mutant's place in the list every shard makes.
	Index int `json:"index"`
	// File and Line say where the change is; Before and After are that
	// line before and after it; Change says what changed ("< -> <=").
	File   string `json:"file"`
	Line   int    `json:"line"`
	Change string `json:"change"`
	Before string `json:"before"`
	After  string `json:"after"`
	// Skipped says why the mutant was not run.
	Skipped        string  `json:"skipped,omitempty"`
	ExitCode       int     `json:"exit_code"`
	Signal         string  `json:"signal,omitempty"`
	TimedOut       bool    `json:"timed_out"`
	JUnit          []byte  `json:"junit"`
	JUnitTruncated bool    `json:"junit_truncated"`
	Seconds        float64 `json:"seconds"`
	// Error says why the mutant's run could not be made.
	Error string `json:"error,omitempty"`
}

// mutant is one mutant as the generator prints it.
type mutant struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Change string `json:"change"`
	Before string `json:"before"`
	After  string `json:"after"`
	Source string `json:"source"`
}

// makeMutants runs the generator as the test identity over the tree.
func makeMutants(rp *reaper, id identity, mj *MutantsJob, timeout time.Duration) (int, []mutant, error) {
	arg, err := json.Marshal(map[string]any{"root": RepoDir, "added": mj.Added, "max": mj.Max})
	if err != nil {
		return 0, nil, err
	}
	out := newBoundedScanner(mutateOutputLimit, nil)
	p, err := start(rp, id, []string{python, "-I", "-c", mutateScript, string(arg)}, baseEnv(), "/", out, nil, nil, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("make mutants: %w", err)
	}
	st := p.finish(timeout)
	if st.err != nil {
		return 0, nil, fmt.Errorf("make mutants: %w", st.err)
	}
	var made struct {
		Candidates int      `json:"candidates"`
		Mutants    []mutant `json:"mutants"`
	}
	if st.timedOut || st.ws.ExitStatus() != 0 || out.total > int64(len(out.kept)) || json.Unmarshal(out.kept, &made) != nil {
		return 0, nil, fmt.Errorf("make mutants: exit %d: %s", st.ws.ExitStatus(), truncate(out.kept, 2000))
	}
	return made.Candidates, made.Mutants, nil
}

// runMutants runs the hidden tests against each of this shard's mutants in
// turn, restoring the original file after each.
func runMutants(rp *reaper, id identity, job Job, began, deadline time.Time, res *Result) error {
	mj := job.Mutants
	if mj == nil || mj.Shards <= 0 || mj.Shard < 0 || mj.Shard >= mj.Shards || mj.Max <= 0 {
		return fmt.Errorf("mutants job: want max > 0 and 0 <= shard < shards, got %+v", mj)
	}
	budgetEnd := began.Add(time.Duration(mj.BudgetMillis) * time.Millisecond)
	n, list, err := makeMutants(rp, id, mj, min(listTimeout, time.Until(deadline)))
	if err != nil {
		return err
	}
	res.MutantCandidates = n
	for i, m := range list {
		if i%mj.Shards != mj.Shard {
			continue
		}
		run := MutantRun{Index: i, File: m.File, Line: m.Line, Change: m.Change, Before: m.Before, After: m.After}
		left := time.Until(deadline)
		if time.Now().After(budgetEnd) || left < time.Second {
			run.Skipped = "the mutation budget ran out"
			res.Mutants = append(res.Mutants, run)
			continue
		}
		path := filepath.Join(RepoDir, filepath.FromSlash(m.File))
		if !strings.HasPrefix(path, RepoDir+"/") {
			return fmt.Errorf("mutant of %q: not a path in the tree", m.File)
		}
		original, mtime, err := readAs(id, path)
		if err != nil {
			return err
		}
		// A modification time of its own per mutant: a .pyc of the
		// original or of another mutant never passes the mtime+size check,
		// even for a same-size edit within the same second.
		if err := writeAs(id, path, []byte(m.Source), time.Unix(int64(1_000_000+i), 0)); err != nil {
			return err
		}
		// The same run as any pytest job, so every check of a run applies.
		one := &Result{}
		pj := job
		pj.Mode, pj.Mutants = ModePytest, nil
		if err := runTests(rp, id, pj, nil, time.Now().Add(min(time.Duration(mj.MutantMillis)*time.Millisecond, left)), one); err != nil {
			run.Error = err.Error()
		}
		if res.Runner == nil {
			res.Runner, res.Isolation = one.Runner, one.Isolation
		}
		run.ExitCode, run.Signal, run.TimedOut, run.Seconds = one.ExitCode, one.Signal, one.TimedOut, one.Seconds
		run.JUnit, run.JUnitTruncated = one.JUnit, one.JUnitTruncated
		res.Mutants = append(res.Mutants, run)
		if err := writeAs(id, path, original, mtime); err != nil {
			return err
		}
	}
	return nil
}

// readAs reads a regular file of the tree and its modification time as
// the test identity, never through a symlink.
func readAs(id identity, path string) ([]byte, time.Time, error) {
	var data []byte
	var mtime time.Time
	err := id.as(func() error {
		f, err := os.OpenFile(path, os.O_RDONLY|syscallNoFollow, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		mtime = st.ModTime()
		data, err = io.ReadAll(io.LimitReader(f, maxEntryBytes))
		return err
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	return data, mtime, nil
}

// writeAs replaces the content of a file of the tree and sets its
// modification time as the test identity, never through a symlink.
func writeAs(id identity, path string, data []byte, mtime time.Time) error {
	err := id.as(func() error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscallNoFollow, 0)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		// No process of the test uid runs between the runs, so nothing
		// can have swapped the file for a symlink since it was opened.
		return os.Chtimes(path, mtime, mtime)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

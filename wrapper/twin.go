package wrapper

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

//go:embed python/twin.py
var twinScript string

// twinTimeout bounds the twin generator.
const twinTimeout = 30 * time.Second

// TwinJob asks a pytest job for twins of its hidden tests. Every pytest
// sandbox of a grade runs the twin generator with the same seed, so the
// runs leave the same traces; only a job with Twins set has its hidden
// files replaced by their twins, and only its Result carries the map.
type TwinJob struct {
	// Twins replaces the hidden tests with their twins before any code of
	// the tree under test runs.
	Twins bool `json:"twins"`
	// TwinSeed seeds the generator's choices: the sandboxes of one grade
	// that share a seed get the same twins.
	TwinSeed string `json:"twin_seed,omitempty"`
	// TwinExclude lists hidden test ids (file::name or file::Class::name)
	// never to twin.
	TwinExclude []string `json:"twin_exclude,omitempty"`
}

// Twin is one hidden test's twin: the test with one expectation changed so
// that a correct, deterministic implementation must fail it. The twin has
// the test's id; a parametrized test's cases keep their order.
type Twin struct {
	// ID is the hidden test's id, without parametrization.
	ID   string `json:"id"`
	File string `json:"file"`
	// Line is the line of the change.
	Line int `json:"line"`
	// Kind is "literal", "parametrize", "raises" or "negation".
	Kind string `json:"kind"`
	// Change says what was changed, e.g. `literal: 3 -> 5`.
	Change string `json:"change"`
}

// Untwinnable is a hidden test without a twin and why.
type Untwinnable struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// TwinMap is what the twin generator made.
type TwinMap struct {
	Twins       []Twin        `json:"twins"`
	Untwinnable []Untwinnable `json:"untwinnable"`
	// Errors are hidden files the generator could not read.
	Errors []string `json:"errors,omitempty"`
	// Error says why no twins were made, if none were.
	Error string `json:"error,omitempty"`
}

// makeTwins runs the twin generator as root on the hidden directory. It
// runs before any code of the tree under test, with python's isolated mode
// and without site, so nothing of the tree can reach it. Without job.Twins
// the generator rewrites every hidden file with its own bytes, so a run
// with twins and one without cannot be told apart by their files.
func makeTwins(rp *reaper, job Job, timeout time.Duration) *TwinMap {
	in, err := json.Marshal(map[string]any{
		"root":    HiddenDir,
		"apply":   job.Twins,
		"seed":    job.TwinSeed,
		"exclude": job.TwinExclude,
	})
	if err != nil {
		return &TwinMap{Error: "encode the twin job: " + err.Error()}
	}
	stdin, err := os.CreateTemp("", "twin-job-")
	if err != nil {
		return &TwinMap{Error: "twin job: " + err.Error()}
	}
	os.Remove(stdin.Name())
	defer stdin.Close()
	if _, err := stdin.Write(in); err != nil {
		return &TwinMap{Error: "twin job: " + err.Error()}
	}
	if _, err := stdin.Seek(0, 0); err != nil {
		return &TwinMap{Error: "twin job: " + err.Error()}
	}
	out := newBoundedScanner(16<<20, nil)
	var stderr bytes.Buffer
	st, err := runAsRoot(rp, []string{python, "-I", "-S", "-c", twinScript}, stdin, out, &stderr, timeout)
	if err != nil {
		return &TwinMap{Error: "twin generator: " + err.Error()}
	}
	if st.timedOut || st.ws.ExitStatus() != 0 {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return &TwinMap{Error: fmt.Sprintf("twin generator: exit %d%s: %s", st.ws.ExitStatus(), map[bool]string{true: ", timed out"}[st.timedOut], msg)}
	}
	m := &TwinMap{}
	if err := json.Unmarshal(out.kept, m); err != nil {
		return &TwinMap{Error: "twin generator: " + err.Error()}
	}
	return m
}

// runAsRoot runs argv as the wrapper's own uid, in /, with stdin given and
// stdout and stderr copied to out and errOut; it waits up to timeout and
// kills the process after.
func runAsRoot(rp *reaper, argv []string, stdin *os.File, out, errOut io.Writer, timeout time.Duration) (finished, error) {
	var f finished
	or, ow, err := os.Pipe()
	if err != nil {
		return f, fmt.Errorf("create pipe: %w", err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		or.Close()
		ow.Close()
		return f, fmt.Errorf("create pipe: %w", err)
	}
	var wg sync.WaitGroup
	for _, c := range []struct {
		dst io.Writer
		src *os.File
	}{{out, or}, {errOut, er}} {
		wg.Add(1)
		go func() { defer wg.Done(); io.Copy(c.dst, c.src); c.src.Close() }()
	}
	pid, err := spawn(argv, baseEnv(), "/", []*os.File{stdin, ow, ew}, identity{})
	ow.Close()
	ew.Close()
	if err != nil {
		wg.Wait()
		return f, err
	}
	exited := rp.wait(pid)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case f.ws = <-exited:
	case <-t.C:
		f.timedOut = true
		syscall.Kill(-pid, syscall.SIGKILL)
		f.ws = <-exited
	}
	wg.Wait()
	return f, nil
}

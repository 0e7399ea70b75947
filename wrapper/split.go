package wrapper

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Split grading: the hidden tests, pytest and every assertion run in one
// interpreter as the grader uid (Job.GraderUID), which alone can read
// HiddenDir; every module of the tree runs in a second interpreter as the
// test uid, which can reach nothing of the first but a socket. See
// python/testfirst_split.py for the protocol.

// The modules of split grading, installed in the grader image beside the
// other plugins.
const (
	SplitModule = "testfirst_split"
	TreeModule  = "testfirst_tree"
)

var (
	// SplitPlugin is the trusted side: the pytest plugin that imports the
	// tree's modules as proxies.
	//
	//go:embed python/testfirst_split.py
	SplitPlugin []byte

	// TreeServer is the tree's side: the program that imports the tree's
	// modules and answers the trusted side.
	//
	//go:embed python/testfirst_tree.py
	TreeServer []byte
)

// splitReportMargin is the part of a split run's time kept for pytest to
// finish its report once the tree stopped answering.
const splitReportMargin = 20 * time.Second

// distPackages is where the grader image keeps the runner and its plugins.
const distPackages = "/usr/lib/python3/dist-packages"

// SplitReport is what the trusted side reports of a split run.
type SplitReport struct {
	// Requests counts what the trusted side asked of the tree.
	Requests int `json:"requests"`
	// Broken, when set, says how the tree broke the protocol: every test
	// from then on failed closed.
	Broken string `json:"broken,omitempty"`
	// Tests maps each hidden test's pytest node id to what the tree
	// decided for it, in a sentence ("__eq__ of wordstats.Point, a class
	// of the code under test"), to how many times. A test without any was
	// decided outside the tree.
	Tests map[string]map[string]int `json:"tests"`
	// Refused maps a hidden test's pytest node id to what the split could
	// not do for it, in short sentences ("the code under test asked for
	// `__globals__` of a function of the tests"): the tree asked an object
	// of the tests for what it has and a handle does not give, or the
	// tests handed the tree a frame, traceback or module. The grader's
	// per-test fallback reads it on the base and reference runs.
	Refused map[string][]string `json:"refused,omitempty"`
}

// SplitCommand is the trusted side's command line: Debian's python with
// neither the site directory nor /usr/local (where a grade's dependency
// environment lives) on sys.path, only the standard library and the
// image's own packages. fd 3 takes the JUnit report, fd 4 the split
// report, fd 5 is the socket to the tree.
func SplitCommand() []string {
	return []string{
		python, "-I", "-S", "-c",
		"import sys; sys.path.append(" + strconv.Quote(distPackages) + "); import pytest; raise SystemExit(pytest.console_main())",
		"--noconftest", "-c", "/dev/null", "--rootdir", HiddenDir,
		"-p", "no:cacheprovider", "-p", SplitModule, "-p", PluginModule,
		"--junitxml=/dev/fd/3", "-o", "junit_family=xunit1",
		"--continue-on-collection-errors", "-s", "-ra",
		HiddenDir,
	}
}

// TreeCommand is the tree's side's command line; fd 3 is its socket.
func TreeCommand(sourceDir string) []string {
	return []string{python, "-I", distPackages + "/" + TreeModule + ".py", "3", sourceDir, RepoDir}
}

// sealHiddenForGrader makes HiddenDir readable by the grader uid alone:
// group grader, mode 0750. Without CAP_CHOWN, the owner (root) may give
// a file to a group it is a member of, so the wrapper joins the grader's
// group first. The test uid cannot so much as list HiddenDir then.
func sealHiddenForGrader(grader int) error {
	if err := syscall.Setgroups([]int{grader}); err != nil {
		return fmt.Errorf("split grading: join group %d: %w", grader, err)
	}
	if err := syscall.Chown(HiddenDir, -1, grader); err != nil {
		return fmt.Errorf("split grading: give %s to group %d: %w", HiddenDir, grader, err)
	}
	return chmodChecked(HiddenDir, 0o750)
}

// lockedWriter serialises the writes of two processes' output copies.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runSplit runs a pytest job split: the tree's process first, as the test
// uid, then pytest as the grader uid; when pytest ends, every process of
// both uids is killed.
func runSplit(rp *reaper, id identity, job Job, targets []string, deadline time.Time, res *Result) error {
	grader := identity{split: true, uid: job.GraderUID}
	if err := sealHiddenForGrader(grader.uid); err != nil {
		return err
	}
	source := ""
	if job.SourceDir != "" {
		dir, err := sourceDir(job.SourceDir)
		if err != nil {
			return err
		}
		source = dir
	}
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("split grading: socket pair: %w", err)
	}
	trustedEnd := os.NewFile(uintptr(pair[0]), "split-trusted")
	treeEnd := os.NewFile(uintptr(pair[1]), "split-tree")
	defer trustedEnd.Close()
	defer treeEnd.Close()

	out := newOutputKeeper(job.OutputLimit, job.Canaries)
	shared := &lockedWriter{w: out}
	env := baseEnv()
	if job.Proxy {
		env = append(env, proxyEnv()...)
	}
	tree, err := startWithSocket(rp, id, TreeCommand(source), env, RepoDir, shared, nil, []*os.File{treeEnd}, &res.Isolation)
	if err != nil {
		return fmt.Errorf("split grading: start the tree's process: %w", err)
	}
	treeEnd.Close()

	argv := SplitCommand()
	if targets != nil {
		argv = append(argv[:len(argv)-1], targets...)
	}
	res.Runner = argv
	junit := newBoundedScanner(job.JUnitLimit, nil)
	report := newBoundedScanner(16<<20, nil)
	genv := append(baseEnv(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "TESTFIRST_SPLIT_FD=5", "TESTFIRST_SPLIT_REPORT_FD=4")
	// A tree that stops answering breaks the channel while pytest still
	// has time to write its report: the tests left fail closed and the
	// grade says why, instead of the run ending at its deadline unheard.
	if wait := time.Until(deadline) - splitReportMargin; wait > 0 {
		genv = append(genv, fmt.Sprintf("TESTFIRST_SPLIT_TIMEOUT=%d", int(wait.Seconds())))
	}
	if source != "" {
		genv = append(genv, SourceDirEnv+"="+source)
	}
	began := time.Now()
	p, err := startWithSocket(rp, grader, argv, genv, RepoDir, shared, []io.Writer{junit, report}, []*os.File{trustedEnd}, nil)
	if err != nil {
		tree.finish(0)
		return fmt.Errorf("split grading: start pytest: %w", err)
	}
	trustedEnd.Close()
	st := p.finish(time.Until(deadline))
	// The tree's process outlives pytest only by what it was doing when
	// pytest ended: it is killed with its whole uid.
	tst := tree.finish(0)
	res.Seconds = time.Since(began).Seconds()
	res.TimedOut = st.timedOut
	res.Leftovers = st.leftovers
	res.ExitCode = st.ws.ExitStatus()
	res.Signal = signalName(st.ws)
	res.Output, res.OutputBytes, res.OutputTruncated = out.Kept()
	res.JUnit, res.JUnitTruncated = junit.kept, junit.total > int64(len(junit.kept))
	res.CanariesSeen = out.Seen()
	var sr SplitReport
	switch {
	case report.total > int64(len(report.kept)):
		sr.Broken = "the split report was larger than the wrapper keeps"
	case len(report.kept) == 0:
		sr.Broken = "pytest ended without the split report"
	default:
		if err := json.Unmarshal(report.kept, &sr); err != nil {
			sr = SplitReport{Broken: "the split report is not JSON: " + err.Error()}
		}
	}
	res.Split = &sr
	return errors.Join(st.err, tst.err)
}

// startWithSocket starts argv as id with stdout and stderr copied to out, one
// pipe per entry of pipes on fds 3, 4, … and the files of extra after
// them.
func startWithSocket(rp *reaper, id identity, argv, env []string, dir string, out io.Writer, pipes []io.Writer, extra []*os.File, iso *Isolation) (*process, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	p := &process{rp: rp, id: id}
	var writers []*os.File
	closeWriters := func() {
		for _, w := range writers {
			w.Close()
		}
	}
	for _, dst := range append([]io.Writer{out}, pipes...) {
		// pytest's --junitxml=/dev/fd/3 reopens its pipe through
		// /proc/self/fd, which p.pipe allows.
		w, err := p.pipe(dst)
		if err != nil {
			closeWriters()
			p.closeReaders()
			return nil, err
		}
		writers = append(writers, w)
	}
	files := []*os.File{devnull, writers[0], writers[0]}
	files = append(files, writers[1:]...)
	files = append(files, extra...)
	var dirs []DirState
	var sealed bool
	if iso != nil {
		dirs, sealed = inspectDirs(id)
	}
	p.pid, err = spawn(argv, env, dir, files, id)
	closeWriters()
	if err != nil {
		p.closeReaders()
		return nil, err
	}
	if iso != nil {
		*iso = inspect(p.pid, id)
		iso.Dirs, iso.DirsSealed = dirs, sealed
	}
	return p, nil
}

package wrapper

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

//go:embed python/list_tests.py
var listTestsScript string

// Defaults for a Job that leaves a limit out.
const (
	defaultTestUID     = 1000
	defaultOutputLimit = 1 << 20
	defaultJUnitLimit  = 16 << 20
	defaultTimeout     = 10 * time.Minute
	// drainGrace is how long the wrapper waits for the pipes to reach EOF
	// once every process of the test uid is dead.
	drainGrace  = 2 * time.Second
	listTimeout = 60 * time.Second
)

// python is the interpreter of the grader image.
const python = "/usr/bin/python3"

// PytestCommand is the runner command line of a pytest job. EvidenceModule
// writes the JUnit report to fd 3 and its evidence to fd 4, pipes the
// wrapper reads, with the key it reads from fd 5.
//
// -s: nothing is captured, so what the code under test prints, import
// time included, reaches the output's canary scan. Plain pytest's capture
// also puts sys.stdout, sys.stderr and sys.stdin back at every test; the
// PluginModule does that after each test (honest case closedstream).
func PytestCommand() []string {
	return []string{
		python, "-I", "-m", "pytest",
		"--noconftest", "-c", "/dev/null", "--rootdir", HiddenDir,
		"-p", "no:cacheprovider", "-p", EvidenceModule, "-p", PluginModule,
		"--continue-on-collection-errors", "-s", "-ra",
		HiddenDir,
	}
}

// Main runs the wrapper: it reads the input archive from stdin, runs the
// job and writes one Result as JSON to stdout. It returns the process exit
// status: 0 when a Result was written, even one that reports an error.
func Main(stdin io.Reader, stdout, stderr io.Writer) int {
	res := run(stdin)
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintf(stderr, "testfirst-wrapper: write result: %v\n", err)
		return 1
	}
	return 0
}

func run(stdin io.Reader) *Result {
	res := &Result{}
	dial, derr := upstream(ProxySocket)
	if derr != nil {
		res.Error = derr.Error()
		return res
	}
	// Before anything is written: the hidden tests' directory and the
	// temporary one are root's, whatever the provider made them.
	if err := sealRootDirs(); err != nil {
		res.Error = err.Error()
		return res
	}
	rp := newReaper()
	sink := &archiveSink{began: time.Now()}
	err := readArchive(stdin, sink)
	if sink.entered {
		if lerr := sink.id.leave(); lerr != nil {
			res.Error = lerr.Error()
			return res
		}
	}
	if err == nil {
		err = sink.createSymlinks()
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if err := limitProcesses(sink.j.ProcLimit); err != nil {
		res.Error = err.Error()
		return res
	}
	if sink.j.Proxy {
		if _, err := relay(ProxyAddr, dial); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	if sink.j.Mode == ModeAgent {
		if err := runAgent(rp, sink, res); err != nil {
			res.Error = err.Error()
		}
		return res
	}
	if sink.j.Mode == ModeEnvironment {
		if err := buildEnvironment(rp, sink.id, sink.j, sink.began.Add(time.Duration(sink.j.TimeoutMillis)*time.Millisecond), res); err != nil {
			res.Error = err.Error()
		}
		return res
	}
	if sink.j.Mode == ModePytest {
		if m := makeTwins(rp, sink.j, min(twinTimeout, time.Until(sink.began.Add(time.Duration(sink.j.TimeoutMillis)*time.Millisecond)))); sink.j.Twins {
			res.Twins = m
		}
	}
	var modules []ListedModule
	res.Expected, modules, res.ListError = listTests(rp, sink.id, min(listTimeout, time.Until(sink.began.Add(time.Duration(sink.j.TimeoutMillis)*time.Millisecond))))
	// A twin run's parametrize values, and so its case ids, are the
	// twins': only the tests a collection found join it, not their cases.
	res.Expected = mergeCollected(res.Expected, sink.j.Collected, !sink.j.Twins)
	if sink.j.Mode == ModeCollect {
		if err := collectTests(rp, sink.id, sink.j, sink.began.Add(time.Duration(sink.j.TimeoutMillis)*time.Millisecond), res); err != nil {
			res.Error = err.Error()
		}
		return res
	}
	var targets []string
	if sink.j.Mode == ModePytest || sink.j.Mode == ModeMutants {
		// A run that selects hidden tests (the rerun of the failing ones)
		// puts its sentinels only in the modules of the tests it selects:
		// given a sentinel's node id in another module, one that fails to
		// import (a name the tree lacks) or skips as a whole, pytest runs
		// nothing, exits 4 and the sentinel is missing from its report.
		hostOf := res.Expected
		if len(sink.j.Select) > 0 {
			if kept, _ := selectTests(res.Expected, nil, sink.j.Select, false); len(kept) > 0 {
				hostOf = kept
			}
		}
		sentinels, err := writeSentinels(HiddenDir, hostOf, modules)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		res.Sentinels = sentinels
		res.Expected, targets = selectTests(res.Expected, sentinels, sink.j.Select, sink.j.Reverse)
	}
	deadline := sink.began.Add(time.Duration(sink.j.TimeoutMillis) * time.Millisecond)
	if sink.j.Mode == ModeMutants {
		if err := runMutants(rp, sink.id, sink.j, sink.began, deadline, res); err != nil {
			res.Error = err.Error()
		}
		return res
	}
	if err := runTests(rp, sink.id, sink.j, targets, deadline, res); err != nil {
		res.Error = err.Error()
	}
	return res
}

// archiveSink writes the hidden tests as root and the repo as the test
// identity. Symlinks are created last, after every regular file, so no file
// is ever written through one.
type archiveSink struct {
	// began is when the wrapper started: the job's timeout counts from
	// there, so reading the archive and listing the tests use it up too.
	began    time.Time
	j        Job
	id       identity
	entered  bool // the repo is being written as the test identity
	symlinks [][2]string
	// base is what an agent job's workspace held before the agent ran.
	base map[string]baseEntry
}

func (a *archiveSink) job(j Job) error {
	switch j.Mode {
	case ModePytest, ModeCollect:
	case ModeCommand:
		if len(j.Command) == 0 {
			return errors.New("job: command mode needs a command")
		}
	case ModeMutants:
		if j.Mutants == nil {
			return errors.New("job: mutants mode needs a mutants job")
		}
	case ModeEnvironment:
		if j.Environment == nil || j.Environment.IndexURL == "" || j.UIDSplit {
			return errors.New("job: environment mode needs an environment job with an index, and no uid split")
		}
	case ModeAgent:
		if j.Agent == nil || len(j.Agent.Command) == 0 || j.Agent.Command[0] == "" || !j.UIDSplit {
			return errors.New("job: agent mode needs an agent job with a command, and the uid split")
		}
		if j.Agent.OutLimit <= 0 {
			j.Agent.OutLimit = defaultOutputLimit
		}
		if j.Agent.ChangeLimit <= 0 {
			j.Agent.ChangeLimit = defaultOutputLimit
		}
		a.base = map[string]baseEntry{}
	default:
		return fmt.Errorf("job: unknown mode %q", j.Mode)
	}
	if j.TestUID <= 0 {
		j.TestUID = defaultTestUID
	}
	if j.Split && (j.Mode != ModePytest || !j.UIDSplit || j.Twins || j.GraderUID <= 0 || j.GraderUID == j.TestUID) {
		return errors.New("job: split grading needs pytest mode, the uid split, no twins and a grader uid other than the test uid")
	}
	if j.OutputLimit <= 0 {
		j.OutputLimit = defaultOutputLimit
	}
	if j.JUnitLimit <= 0 {
		j.JUnitLimit = defaultJUnitLimit
	}
	if j.TimeoutMillis <= 0 {
		j.TimeoutMillis = defaultTimeout.Milliseconds()
	}
	a.j = j
	a.id = identity{split: j.UIDSplit, uid: j.TestUID}
	if j.Split {
		a.id.grader = j.GraderUID
	}
	if !j.UIDSplit {
		a.id.uid = os.Geteuid()
	}
	// Before the first file of the tree: RepoDir is the test uid's.
	return sealRepoDir(a.id)
}

func (a *archiveSink) file(prefix, rel string, mode fs.FileMode, r io.Reader) error {
	if a.j.Mode == ModeAgent {
		return a.agentFile(prefix, rel, mode, r)
	}
	if prefix == HiddenPrefix {
		return writeFile(HiddenDir, rel, 0o644, r)
	}
	if !a.entered {
		if err := a.id.enter(); err != nil {
			return err
		}
		a.entered = true
	}
	return writeFile(RepoDir, rel, mode&0o755|0o600, r)
}

func (a *archiveSink) symlink(rel, target string) error {
	if a.base != nil {
		a.base[rel] = baseEntry{mode: 0o777, link: target}
	}
	a.symlinks = append(a.symlinks, [2]string{rel, target})
	return nil
}

func (a *archiveSink) createSymlinks() error {
	return a.id.as(func() error {
		for _, l := range a.symlinks {
			dst := filepath.Join(a.root(), filepath.FromSlash(l[0]))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fmt.Errorf("create directory for %s: %w", l[0], err)
			}
			if err := os.Symlink(l[1], dst); err != nil {
				return fmt.Errorf("create symlink %s: %w", l[0], err)
			}
		}
		return nil
	})
}

// listTests lists the hidden tests and what each hidden module can hold of
// the sentinels, as the test identity, before the sentinels are written and
// before any code under test has run.
func listTests(rp *reaper, id identity, timeout time.Duration) ([]ExpectedTest, []ListedModule, string) {
	out := newBoundedScanner(16<<20, nil)
	p, err := start(rp, id, []string{python, "-I", "-c", listTestsScript, HiddenDir}, baseEnv(), "/", out, nil, nil, nil)
	if err != nil {
		return nil, nil, "list hidden tests: " + err.Error()
	}
	st := p.finish(timeout)
	if st.err != nil {
		return nil, nil, "list hidden tests: " + st.err.Error()
	}
	var listed struct {
		Tests   []ExpectedTest `json:"tests"`
		Modules []ListedModule `json:"modules"`
		Errors  []string       `json:"errors"`
	}
	if st.timedOut || st.ws.ExitStatus() != 0 || json.Unmarshal(out.kept, &listed) != nil {
		return nil, nil, fmt.Sprintf("list hidden tests: exit %d: %s", st.ws.ExitStatus(), truncate(out.kept, 2000))
	}
	if len(listed.Errors) > 0 {
		return listed.Tests, listed.Modules, fmt.Sprintf("hidden tests do not parse: %q", listed.Errors)
	}
	return listed.Tests, listed.Modules, ""
}

// runTests runs the job's test command and fills in res. targets, when
// set, replace the hidden directory as pytest's arguments.
func runTests(rp *reaper, id identity, job Job, targets []string, deadline time.Time, res *Result) error {
	if job.Mode == ModePytest && job.Split {
		return runSplit(rp, id, job, targets, deadline, res)
	}
	env := baseEnv()
	if job.Proxy {
		env = append(env, proxyEnv()...)
	}
	var argv []string
	var evc *evidenceChannel
	switch job.Mode {
	case ModePytest:
		argv = PytestCommand()
		if targets != nil {
			argv = append(argv[:len(argv)-1], targets...)
		}
		env = append(env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1")
		if job.SourceDir != "" {
			dir, err := sourceDir(job.SourceDir)
			if err != nil {
				return err
			}
			env = append(env, SourceDirEnv+"="+dir)
		}
		evc = newEvidenceChannel()
	case ModeCommand:
		bin, err := exec.LookPath(job.Command[0])
		if err != nil {
			return fmt.Errorf("test command: %w", err)
		}
		argv = append([]string{bin}, job.Command[1:]...)
		env = append(env, "TESTFIRST_HIDDEN="+HiddenDir, "TESTFIRST_JUNIT=/proc/self/fd/3")
	}
	res.Runner = argv
	out := newOutputKeeper(job.OutputLimit, job.Canaries)
	junit := newBoundedScanner(job.JUnitLimit, nil)
	var report io.Writer = junit
	if evc != nil {
		report = evc.reportWriter(junit)
	}
	began := time.Now()
	p, err := start(rp, id, argv, env, RepoDir, out, report, evc, &res.Isolation)
	if err != nil {
		return err
	}
	st := p.finish(time.Until(deadline))
	res.Seconds = time.Since(began).Seconds()
	res.TimedOut = st.timedOut
	res.Leftovers = st.leftovers
	res.ExitCode = st.ws.ExitStatus()
	res.Signal = signalName(st.ws)
	res.Output, res.OutputBytes, res.OutputTruncated = out.Kept()
	res.JUnit, res.JUnitTruncated = junit.kept, junit.total > int64(len(junit.kept))
	res.CanariesSeen = out.Seen()
	if evc != nil {
		res.Evidence = evc.verify(p.pid)
	}
	return st.err
}

// process is a running child of the test identity with its pipes.
type process struct {
	rp      *reaper
	id      identity
	pid     int
	readers []*os.File
	wg      sync.WaitGroup
}

type finished struct {
	ws        syscall.WaitStatus
	timedOut  bool
	leftovers int
	err       error
}

// start runs argv as id with stdout and stderr copied to out and, when
// junit is set, fd 3 copied to junit. When ev is set, fd 4 is copied to ev,
// fd 5 holds ev's key and fd 6 is ev's tripwire. The pipes are created as the test identity so
// the child may reopen them through /proc/self/fd. When iso is set it
// receives the /proc evidence of the child's identity and the state of
// the wrapper's directories just before the child started.
func start(rp *reaper, id identity, argv, env []string, dir string, out, junit io.Writer, ev *evidenceChannel, iso *Isolation) (*process, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	p := &process{rp: rp, id: id}
	files := []*os.File{devnull}
	var writers []*os.File
	pipe := func(dst io.Writer) error {
		w, err := p.pipe(dst)
		if err != nil {
			return err
		}
		writers = append(writers, w)
		return nil
	}
	fail := func(err error) (*process, error) {
		for _, w := range writers {
			w.Close()
		}
		p.closeReaders()
		return nil, err
	}
	if err := pipe(out); err != nil {
		return fail(err)
	}
	files = append(files, writers[0], writers[0])
	if junit != nil {
		if err := pipe(junit); err != nil {
			return fail(err)
		}
		files = append(files, writers[1])
	}
	if ev != nil {
		if err := pipe(ev); err != nil {
			return fail(err)
		}
		key, err := ev.keyPipe()
		if err != nil {
			return fail(err)
		}
		defer key.Close()
		if err := pipe(ev.tripwireWriter()); err != nil {
			return fail(err)
		}
		files = append(files, writers[2], key, writers[3])
	}
	var dirs []DirState
	var sealed bool
	if iso != nil {
		dirs, sealed = inspectDirs(id)
	}
	p.pid, err = spawn(argv, env, dir, files, id)
	for _, w := range writers {
		w.Close()
	}
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

// finish waits for the process up to timeout, kills every process of the
// test identity, and drains the pipes.
func (p *process) finish(timeout time.Duration) finished {
	var f finished
	t := time.NewTimer(timeout)
	defer t.Stop()
	exited := p.rp.wait(p.pid)
	select {
	case f.ws = <-exited:
	case <-t.C:
		f.timedOut = true
	}
	alive, err := killAll(p.rp, p.id)
	f.err = err
	if !f.timedOut {
		f.leftovers = alive
	} else {
		select {
		case f.ws = <-exited:
		case <-time.After(drainGrace):
			f.err = errors.Join(f.err, errors.New("the runner did not exit after SIGKILL"))
		}
	}
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainGrace):
		for _, r := range p.readers {
			r.SetReadDeadline(time.Now())
		}
		<-done
	}
	p.closeReaders()
	return f
}

// pipe makes a pipe as p's identity (so the child may reopen its end
// through /proc/self/fd), copies what the child writes to it to dst, and
// returns the end the child gets; finish waits for the copy.
func (p *process) pipe(dst io.Writer) (*os.File, error) {
	var r, w *os.File
	if err := p.id.as(func() (err error) { r, w, err = os.Pipe(); return err }); err != nil {
		return nil, fmt.Errorf("create pipe: %w", err)
	}
	p.readers = append(p.readers, r)
	p.wg.Add(1)
	go func() { defer p.wg.Done(); io.Copy(dst, r) }()
	return w, nil
}

func (p *process) closeReaders() {
	for _, r := range p.readers {
		r.Close()
	}
}

func baseEnv() []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/tmp",
		"TMPDIR=/tmp",
		"LANG=C.UTF-8",
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

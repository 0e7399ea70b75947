package wrapper

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const syscallNoFollow = syscall.O_NOFOLLOW

// killDeadline bounds how long killAll keeps signalling.
const killDeadline = 5 * time.Second

// rlimitNproc is RLIMIT_NPROC on Linux (amd64, arm64, 386, arm, riscv64,
// ppc64, s390x), which package syscall does not name.
const rlimitNproc = 6

// reaper waits for every child of the wrapper. As PID 1 the wrapper inherits
// every orphan, so one loop reaps them all and hands each status to whoever
// waits for that pid; nobody else may call wait.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan syscall.WaitStatus
	exited  map[int]syscall.WaitStatus
}

func newReaper() *reaper {
	r := &reaper{waiting: map[int]chan syscall.WaitStatus{}, exited: map[int]syscall.WaitStatus{}}
	go r.loop()
	return r
}

func (r *reaper) loop() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			// No children right now.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r.mu.Lock()
		if ch, ok := r.waiting[pid]; ok {
			delete(r.waiting, pid)
			ch <- ws
		} else if len(r.exited) < 100_000 {
			r.exited[pid] = ws
		}
		r.mu.Unlock()
	}
}

// wait returns a channel that receives pid's exit status.
func (r *reaper) wait(pid int) <-chan syscall.WaitStatus {
	ch := make(chan syscall.WaitStatus, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ws, ok := r.exited[pid]; ok {
		delete(r.exited, pid)
		ch <- ws
		return ch
	}
	r.waiting[pid] = ch
	return ch
}

// identity is who a child process runs as.
type identity struct {
	split bool
	uid   int
	// grader, when set, is the grader uid of a split run: HiddenDir is
	// its group's alone.
	grader int
}

func (id identity) credential() *syscall.Credential {
	if !id.split {
		return nil
	}
	return &syscall.Credential{Uid: uint32(id.uid), Gid: uint32(id.uid), Groups: []uint32{}}
}

// enter makes the test identity the effective uid and gid, so that what the
// wrapper creates belongs to it. The real and saved uid stay 0: processes of
// the test uid still cannot signal or trace the wrapper meanwhile. Go applies
// setresuid to every thread of the process.
func (id identity) enter() error {
	if !id.split {
		return nil
	}
	if err := syscall.Setresgid(-1, id.uid, -1); err != nil {
		return fmt.Errorf("switch to gid %d: %w", id.uid, err)
	}
	if err := syscall.Setresuid(-1, id.uid, -1); err != nil {
		return errors.Join(fmt.Errorf("switch to uid %d: %w", id.uid, err), syscall.Setresgid(-1, 0, -1))
	}
	return nil
}

// leave returns to uid and gid 0. If it fails the wrapper must not go on.
func (id identity) leave() error {
	if !id.split {
		return nil
	}
	if err := syscall.Setresuid(-1, 0, -1); err != nil {
		return fmt.Errorf("switch back to uid 0: %w", err)
	}
	if err := syscall.Setresgid(-1, 0, -1); err != nil {
		return fmt.Errorf("switch back to gid 0: %w", err)
	}
	return nil
}

// as runs fn as the test identity (see enter).
func (id identity) as(fn func() error) error {
	if err := id.enter(); err != nil {
		return err
	}
	ferr := fn()
	return errors.Join(ferr, id.leave())
}

// spawn starts argv as the test identity in its own session, with files as
// its fds 0, 1, 2, ... It returns once the program has been executed.
func spawn(argv, env []string, dir string, files []*os.File, id identity) (int, error) {
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = f.Fd()
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: fds,
		Sys: &syscall.SysProcAttr{
			Credential: id.credential(),
			Setsid:     true,
			Pdeathsig:  syscall.SIGKILL,
		},
	})
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return pid, nil
}

// killAll kills every process the test identity owns and waits until none
// is left (zombies are reaped by the reaper). With the uid split it signals
// with the test uid as its effective uid, which reaches exactly the test
// uid's processes: kill(-1) never signals PID 1 or the caller. It returns how
// many processes were found alive before the first signal.
func killAll(rp *reaper, id identity) (alive int, err error) {
	alive = len(processesOf(id.uid, id.split))
	kill := func() error { return syscall.Kill(-1, syscall.SIGKILL) }
	as := id.as
	if id.split {
		// As root, which starts the kill as the test uid.
		kill = func() error { return killAsUID(rp, id.uid) }
		as = func(fn func() error) error { return fn() }
	}
	err = as(func() error {
		deadline := time.Now().Add(killDeadline)
		for time.Now().Before(deadline) {
			if err := kill(); errors.Is(err, syscall.ESRCH) {
				return nil
			}
			// kill(-1) answers ESRCH only when no process is left but
			// PID 1 and the caller, whoever owns it: in split grading the
			// other uid's processes (the tree's, hung in a call, while
			// pytest's uid is killed) keep it answering 0, so the uid's
			// own processes are looked for instead.
			if id.split && len(processesOf(id.uid, true)) == 0 {
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return fmt.Errorf("processes of the test uid survived %s of SIGKILL", killDeadline)
	})
	return alive, err
}

// KillArg is the wrapper's argument that makes it kill every process it
// may signal and exit (KillExit* statuses): killAsUID runs it as the test
// uid.
const KillArg = "--kill-own-uid"

// Exit statuses of the wrapper run with KillArg.
const (
	KillExitDone = 0
	// KillExitNone: no process was left to signal (ESRCH).
	KillExitNone = 3
	KillExitFail = 4
)

// KillOwn sends SIGKILL to every process the caller may signal but PID 1
// and itself, and returns the exit status (KillExit*).
func KillOwn() int {
	switch err := syscall.Kill(-1, syscall.SIGKILL); {
	case err == nil:
		return KillExitDone
	case errors.Is(err, syscall.ESRCH):
		return KillExitNone
	}
	return KillExitFail
}

// killAsUID sends SIGKILL to every process of uid from a process whose
// real, effective and saved uids are all uid: the wrapper itself run with
// KillArg. The kernel lets a sender signal a process when either of its
// real and effective uids is the target's real or saved uid, so kill(-1)
// from the wrapper with only its effective uid switched (real uid 0) also
// reached every root process but PID 1 and the wrapper. Where the wrapper
// is PID 1 (Docker, Kubernetes) there are none; in an E2B microVM the
// sandbox's daemon (envd) and the rest of its root processes are.
func killAsUID(rp *reaper, uid int) error {
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"testfirst-wrapper", KillArg}, &syscall.ProcAttr{
		Env: []string{"PATH=/usr/bin:/bin"},
		Sys: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), NoSetGroups: true}, Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("start the kill as uid %d: %w", uid, err)
	}
	// The reaper waits for every child of the wrapper.
	ws := <-rp.wait(pid)
	switch ws.ExitStatus() {
	case KillExitDone:
		return nil
	case KillExitNone:
		return syscall.ESRCH
	}
	return fmt.Errorf("the kill as uid %d ended with %v", uid, ws)
}

// processesOf lists live pids (not zombies) of uid, other than PID 1 and the
// wrapper. Without the split every process but the wrapper counts.
func processesOf(uid int, split bool) []int {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 || pid == self {
			continue
		}
		st, err := readStatus(pid)
		if err != nil || st["State"] == "" || strings.HasPrefix(st["State"], "Z") {
			continue
		}
		if !split || firstField(st["Uid"]) == strconv.Itoa(uid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func readStatus(pid int) (map[string]string, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			st[k] = strings.TrimSpace(v)
		}
	}
	return st, sc.Err()
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// inspect reads the evidence of the uid split from /proc/<pid>/status.
func inspect(pid int, id identity) Isolation {
	st, err := readStatus(pid)
	if err != nil {
		return Isolation{Error: fmt.Sprintf("read /proc/%d/status: %v", pid, err)}
	}
	return proveIsolation(st, id, selfNoNewPrivs)
}

// selfNoNewPrivs reports the wrapper's own no_new_privs flag, by prctl.
func selfNoNewPrivs() (bool, error) {
	r, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prGetNoNewPrivs, 0, 0, 0, 0, 0)
	if errno != 0 {
		return false, errno
	}
	return r == 1, nil
}

// prGetNoNewPrivs is PR_GET_NO_NEW_PRIVS.
const prGetNoNewPrivs = 39

// proveIsolation judges the test process's status lines st. A runtime
// whose /proc omits lines Linux has (gVisor's has no NoNewPrivs and no
// CapAmb line) is judged by what the kernel guarantees instead, and
// Inferred says so: no_new_privs is inherited across fork and execve and
// can never be cleared, so the test process, the wrapper's child, has it
// when the wrapper has it (ownNNP, asked of the kernel by prctl); and an
// ambient capability must be permitted, so an empty permitted set proves
// an empty ambient one. A missing line is never taken for a good value.
func proveIsolation(st map[string]string, id identity, ownNNP func() (bool, error)) Isolation {
	iso := Isolation{
		CapEff:     st["CapEff"],
		CapPrm:     st["CapPrm"],
		CapAmb:     st["CapAmb"],
		NoNewPrivs: st["NoNewPrivs"] == "1",
	}
	iso.UID, _ = strconv.Atoi(firstField(st["Uid"]))
	iso.GID, _ = strconv.Atoi(firstField(st["Gid"]))
	all := func(s string, want string) bool {
		f := strings.Fields(s)
		for _, v := range f {
			if v != want {
				return false
			}
		}
		return len(f) == 4
	}
	zero := func(s string) bool { return strings.Trim(s, "0") == "" && s != "" }
	ambientEmpty := zero(iso.CapAmb)
	var inferred []string
	if _, ok := st["CapAmb"]; !ok && zero(iso.CapPrm) {
		ambientEmpty = true
		inferred = append(inferred, "cap_amb from cap_prm (an ambient capability must be permitted)")
	}
	if _, ok := st["NoNewPrivs"]; !ok {
		nnp, err := ownNNP()
		switch {
		case err != nil:
			inferred = append(inferred, fmt.Sprintf("no_new_privs unknown: the status has no NoNewPrivs line and prctl failed: %v", err))
		case nnp:
			iso.NoNewPrivs = true
			inferred = append(inferred, "no_new_privs from the wrapper's own (inherited, never cleared)")
		default:
			inferred = append(inferred, "no_new_privs not set on the wrapper, so not on its child")
		}
	}
	if len(inferred) > 0 {
		iso.Inferred = "the runtime's /proc/<pid>/status lacks lines: " + strings.Join(inferred, "; ")
	}
	want := strconv.Itoa(id.uid)
	iso.Proven = id.split && id.uid != 0 &&
		all(st["Uid"], want) && all(st["Gid"], want) && st["Groups"] == "" &&
		zero(iso.CapEff) && zero(iso.CapPrm) && ambientEmpty && iso.NoNewPrivs
	return iso
}

// limitProcesses sets RLIMIT_NPROC, which the children inherit. The kernel
// counts it per real uid and does not apply it to uid 0, so it binds the
// test uid's processes and leaves the wrapper free to start threads.
func limitProcesses(n int) error {
	if n <= 0 {
		return nil
	}
	lim := &syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}
	if err := syscall.Setrlimit(rlimitNproc, lim); err != nil {
		return fmt.Errorf("limit processes to %d: %w", n, err)
	}
	return nil
}

// signalName names the signal that ended a process.
func signalName(ws syscall.WaitStatus) string {
	if !ws.Signaled() {
		return ""
	}
	return fmt.Sprintf("signal %d (%s)", int(ws.Signal()), ws.Signal())
}

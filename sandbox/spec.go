package sandbox

import (
	"io"
	"strconv"
	"time"
)

// Labels on every container this package creates.
const (
	// LabelSandbox marks a sandbox container.
	LabelSandbox = "app.testfirst.sandbox"
	// LabelDeadline holds the Unix time after which the container is a
	// leftover that Sweep may remove.
	LabelDeadline = "app.testfirst.deadline"
	// LabelJob names the job a sandbox runs for (its id in the job queue
	// and its creation time, as the service writes it), so that whoever
	// takes a dead process's job over finds the sandboxes it left running.
	LabelJob = "app.testfirst.job"
	// LabelGrade names the grade a sandbox runs for.
	LabelGrade = "app.testfirst.grade"
	// LabelMode says what a grade's sandbox does: the wrapper's mode
	// (collect, pytest, mutants, ...), so that an operator listing the
	// engine's containers, or a rescue, can tell the runs apart.
	LabelMode = "app.testfirst.mode"
	// LabelTree says which tree a grade's test run runs the hidden tests
	// on: "tested" (the pull request's head, or the tree a base check
	// judges), "base", "reference", or "twins" (the tree under test with
	// twin assertions), so that a rescue or an operator can tell a base
	// run that ends by itself from the run of the code under test.
	LabelTree = "app.testfirst.tree"
)

// LeftoverGrace is how long past its deadline a sandbox may still be in
// use (being killed, its output drained) before a sweep removes it.
const LeftoverGrace = time.Minute

// PastDeadline reports whether a sandbox labelled labels is a leftover by
// its deadline: more than LeftoverGrace past its LabelDeadline at now. One
// without a readable deadline is not.
func PastDeadline(labels map[string]string, now time.Time) bool {
	deadline, err := strconv.ParseInt(labels[LabelDeadline], 10, 64)
	return err == nil && now.Sub(time.Unix(deadline, 0)) >= LeftoverGrace
}

// Limits bound what a sandbox may use.
type Limits struct {
	// Memory in bytes; swap is not allowed beyond it.
	Memory int64
	// NanoCPUs is the CPU quota in billionths of a CPU.
	NanoCPUs int64
	// Pids is the maximum number of processes and threads.
	Pids int64
	// RepoSize, HiddenSize and TmpSize bound the tmpfs mounts, in bytes.
	RepoSize   int64
	HiddenSize int64
	TmpSize    int64
}

// DefaultLimits are the limits of a grade unless configured otherwise.
var DefaultLimits = Limits{
	Memory:     1 << 30,
	NanoCPUs:   2e9,
	Pids:       256,
	RepoSize:   512 << 20,
	HiddenSize: 64 << 20,
	TmpSize:    256 << 20,
}

// LimitsOf returns the default limits with memory (bytes), CPUs (1.5 is
// one and a half) and pids set: the one place a grade's configured limits
// become the engine's.
func LimitsOf(memory int64, cpus float64, pids int64) Limits {
	l := DefaultLimits
	l.Memory, l.NanoCPUs, l.Pids = memory, int64(cpus*1e9), pids
	return l
}

// CPUs is the limits' CPU quota in CPUs.
func (l Limits) CPUs() float64 { return float64(l.NanoCPUs) / 1e9 }

// Spec describes one sandboxed run.
type Spec struct {
	// Image is the image reference or id to run.
	Image string
	// Entrypoint is the program the container starts as PID 1.
	Entrypoint []string
	// Input is streamed to the entrypoint's stdin, then stdin is closed.
	Input io.Reader
	// Timeout is the wall-clock limit; the container is SIGKILLed then.
	Timeout time.Duration
	Limits  Limits
	// UIDSplit grants SETUID and SETGID so the entrypoint can drop to
	// TestUID. Without it every capability is dropped.
	UIDSplit bool
	// TestUID owns the repo mount.
	TestUID int
	// Labels are added to the container's labels.
	Labels map[string]string
	// StdoutLimit and StderrLimit bound what is kept of each stream.
	StdoutLimit int64
	StderrLimit int64
	// Dirs are further tmpfs mounts, beside the repo, hidden and tmp
	// ones: an agent's workspace, task, harness files and results.
	Dirs []Dir
	// Runtime is the OCI runtime the engine runs the sandbox with, by the
	// name the engine knows it under (runsc: gVisor, a kernel of its own
	// between the tests and the host's); the engine's default when empty.
	Runtime string
	// ProxySocket, when set, is the host path of the egress proxy's unix
	// socket, mounted at ProxyMount: the one host mount a sandbox may have,
	// and its only way to the package index. The network stays none.
	ProxySocket string
}

// Dir is a tmpfs mount of a sandbox, always nosuid and nodev.
type Dir struct {
	// Path is where it is mounted, absolute.
	Path string
	// Size bounds it, in bytes.
	Size int64
	// Mode is its root directory's permission bits.
	Mode uint32
	// Owner, when not 0, owns its root directory (uid and gid).
	Owner int
	// NoExec forbids executing its files.
	NoExec bool
}

// ProxyMount is where a sandbox sees the egress proxy's socket.
const ProxyMount = "/run/testfirst/egress.sock"

// Build is a run whose container, when Keep says so, becomes an image.
type Build struct {
	// Spec is the run. Its root filesystem is writable: what the run
	// writes outside the tmpfs mounts is what the image holds.
	Spec Spec
	// Ref is the reference the image is committed as.
	Ref string
	// Files are copied into the container before it starts.
	Files []LayerFile
	// Keep decides from the run's result whether to commit it, and the
	// labels the image gets.
	Keep func(Result) (labels map[string]string, keep bool)
}

// Result is what a sandboxed run left.
type Result struct {
	Stdout          []byte
	StdoutTruncated bool
	Stderr          []byte
	ExitCode        int
	// TimedOut is true when the container was killed at its deadline.
	TimedOut bool
	// OOMKilled is true when the engine reports an out-of-memory kill.
	OOMKilled bool
	Duration  time.Duration
	// Container is the id the container had.
	Container string
}

// Mount points of a sandbox.
const (
	RepoMount   = "/repo"
	HiddenMount = "/hidden"
	TmpMount    = "/tmp"
)

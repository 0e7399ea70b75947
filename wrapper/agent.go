package wrapper

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ModeAgent runs a writer or implementer agent; see AgentJob.
const ModeAgent = "agent"

// Directories of an agent's sandbox.
const (
	// WorkspaceDir holds the base tree as a git repository of one commit,
	// owned by the agent's uid.
	WorkspaceDir = "/workspace"
	// TaskDir holds TASK.md and task.json, root-owned.
	TaskDir = "/task"
	// AgentDir holds the harness's files, root-owned: read-only to the
	// agent.
	AgentDir = "/agent"
	// OutDir is where the agent leaves its results, owned by its uid.
	OutDir = "/out"
)

// Archive entries of an agent job: after job.json, the task's files under
// TaskPrefix and the harness's under AgentPrefix (both in the hidden
// stage), then the base tree under RepoPrefix, written to WorkspaceDir.
const (
	TaskPrefix  = HiddenPrefix + "task/"
	AgentPrefix = HiddenPrefix + "agent/"
)

// BaseCommitDate is the author and committer date of the workspace's one
// commit, so the same base gives the same commit id.
const BaseCommitDate = "2000-01-01T00:00:00+0000"

// AgentJob runs an agent: the wrapper makes WorkspaceDir a git repository
// holding the base tree as one commit on branch main (no remote, no tag,
// no other branch), runs Command there as the job's TestUID with no
// capabilities, and hands back what the agent left in OutDir and what it
// changed in WorkspaceDir.
type AgentJob struct {
	// Command is the agent's program (argv): an absolute path, or a name
	// looked up on PATH.
	Command []string `json:"command"`
	// Env is added to the agent's environment (beside PATH, HOME=/tmp,
	// TMPDIR, LANG, a git identity for commits it makes and, with
	// Job.Proxy, the proxy variables with no_proxy for loopback).
	Env []string `json:"env,omitempty"`
	// Message is the base commit's message.
	Message string `json:"message"`
	// OutLimit bounds the bytes read back from OutDir, ChangeLimit those of
	// the changed workspace files.
	OutLimit    int64 `json:"out_limit"`
	ChangeLimit int64 `json:"change_limit"`
}

// AgentFile is a file an agent left: in OutDir (Path relative to it) or
// changed in WorkspaceDir.
type AgentFile struct {
	Path string `json:"path"`
	// Mode is the permission bits.
	Mode uint32 `json:"mode"`
	Data []byte `json:"data,omitempty"`
	// Link is a symlink's target; it is never followed.
	Link string `json:"link,omitempty"`
}

// AgentResult is what an agent job hands back, beside Result's exit code,
// output and timing.
type AgentResult struct {
	// Commit is the base commit's id.
	Commit string `json:"commit"`
	// Out are OutDir's regular files and symlinks, sorted by path.
	Out []AgentFile `json:"out"`
	// Changed are the workspace's files (.git excluded) that differ from
	// the base or are new; Deleted the base's paths that are gone. Both
	// sorted.
	Changed []AgentFile `json:"changed"`
	Deleted []string    `json:"deleted"`
	// Truncated names what was cut at its bound ("out", "changes").
	Truncated []string `json:"truncated,omitempty"`
	// Skipped lists entries that are neither files nor symlinks (FIFOs,
	// sockets, devices), never read.
	Skipped []string `json:"skipped,omitempty"`
	// Stderr is the agent's standard error; Result.Output its standard
	// output. Both bounded by Job.OutputLimit.
	Stderr          []byte `json:"stderr"`
	StderrTruncated bool   `json:"stderr_truncated"`
}

// baseEntry is what the wrapper wrote of the base: a file's content hash
// and mode, or a symlink's target.
type baseEntry struct {
	sum  [32]byte
	mode fs.FileMode
	link string
}

// git is Debian's git in the agent image.
const git = "/usr/bin/git"

// gitEnv is the environment of the wrapper's own git commands: no system
// or global configuration, a fixed identity and date.
func gitEnv() []string {
	return append(baseEnv(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=testfirst", "GIT_AUTHOR_EMAIL=testfirst@localhost", "GIT_AUTHOR_DATE="+BaseCommitDate,
		"GIT_COMMITTER_NAME=testfirst", "GIT_COMMITTER_EMAIL=testfirst@localhost", "GIT_COMMITTER_DATE="+BaseCommitDate)
}

// runAgent commits the base in WorkspaceDir, runs the agent and collects
// what it left.
func runAgent(rp *reaper, a *archiveSink, res *Result) error {
	j := a.j
	deadline := a.began.Add(time.Duration(j.TimeoutMillis) * time.Millisecond)
	ar := &AgentResult{}
	res.Agent = ar
	for _, argv := range [][]string{
		{git, "init", "--quiet", "--initial-branch=main", WorkspaceDir},
		{git, "-C", WorkspaceDir, "add", "--all", "--force"},
		{git, "-C", WorkspaceDir, "commit", "--quiet", "--no-verify", "--allow-empty", "--message", j.Agent.Message},
		{git, "-C", WorkspaceDir, "rev-parse", "HEAD"},
	} {
		out := newBoundedScanner(64<<10, nil)
		p, err := start(rp, a.id, argv, gitEnv(), WorkspaceDir, out, nil, nil, nil)
		if err != nil {
			return fmt.Errorf("commit the base: %w", err)
		}
		if st := p.finish(max(time.Until(deadline), 10*time.Second)); st.err != nil || st.timedOut || st.ws.ExitStatus() != 0 {
			return fmt.Errorf("commit the base: %s: exit %d: %s", strings.Join(argv[1:], " "), st.ws.ExitStatus(), truncate(out.kept, 2000))
		}
		ar.Commit = strings.TrimSpace(string(out.kept))
	}

	argv := slices.Clone(j.Agent.Command)
	if !filepath.IsAbs(argv[0]) {
		bin, err := exec.LookPath(argv[0])
		if err != nil {
			return fmt.Errorf("agent command: %w", err)
		}
		argv[0] = bin
	}
	env := baseEnv()
	if j.Proxy {
		env = append(env, proxyEnv()...)
		env = append(env, "no_proxy=127.0.0.1,localhost", "NO_PROXY=127.0.0.1,localhost")
	}
	// An agent that commits in the workspace needs a name; it is not
	// anyone's.
	env = append(env, "GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@localhost", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@localhost")
	env = append(env, j.Agent.Env...)
	res.Runner = argv
	stdout := newOutputKeeper(j.OutputLimit, j.Canaries)
	stderr := newOutputKeeper(j.OutputLimit, j.Canaries)
	began := time.Now()
	p, err := startSplit(rp, a.id, argv, env, WorkspaceDir, stdout, stderr, &res.Isolation)
	if err != nil {
		return err
	}
	st := p.finish(time.Until(deadline))
	res.Seconds = time.Since(began).Seconds()
	res.TimedOut = st.timedOut
	res.Leftovers = st.leftovers
	res.ExitCode = st.ws.ExitStatus()
	res.Signal = signalName(st.ws)
	res.Output, res.OutputBytes, res.OutputTruncated = stdout.Kept()
	ar.Stderr, _, ar.StderrTruncated = stderr.Kept()
	res.CanariesSeen = append(stdout.Seen(), stderr.Seen()...)
	if st.err != nil {
		return st.err
	}
	// Every process of the agent's uid is dead: nothing changes the
	// directories while they are read.
	return errors.Join(collectOut(ar, j.Agent.OutLimit), collectChanges(ar, a.base, j.Agent.ChangeLimit))
}

// collectOut reads OutDir's files and symlinks, up to limit bytes.
func collectOut(ar *AgentResult, limit int64) error {
	var total int64
	return walkAgentDir(OutDir, ar, func(rel string, e baseEntry, size int64, open func() (*os.File, error)) error {
		f := AgentFile{Path: rel, Mode: uint32(e.mode.Perm()), Link: e.link}
		if e.link == "" {
			if total+size > limit {
				ar.Truncated = appendOnce(ar.Truncated, "out")
				return nil
			}
			data, err := readBounded(open, limit-total)
			if err != nil {
				return err
			}
			total += int64(len(data))
			f.Data = data
		}
		ar.Out = append(ar.Out, f)
		return nil
	})
}

// collectChanges compares WorkspaceDir (.git excluded) with the base and
// keeps the changed files' content up to limit bytes. A file past the
// bound is hashed as it is read, never held, to tell whether it changed.
func collectChanges(ar *AgentResult, base map[string]baseEntry, limit int64) error {
	seen := map[string]bool{}
	var total int64
	err := walkAgentDir(WorkspaceDir, ar, func(rel string, e baseEntry, size int64, open func() (*os.File, error)) error {
		seen[rel] = true
		b, inBase := base[rel]
		f := AgentFile{Path: rel, Mode: uint32(e.mode.Perm()), Link: e.link}
		if e.link != "" {
			if inBase && b.link == e.link {
				return nil
			}
			ar.Changed = append(ar.Changed, f)
			return nil
		}
		sameMode := inBase && b.link == "" && b.mode&0o111 == e.mode&0o111
		if total+size > limit {
			if sameMode {
				sum, err := hashFile(open)
				if err != nil {
					return err
				}
				if sum == b.sum {
					return nil
				}
			}
			ar.Truncated = appendOnce(ar.Truncated, "changes")
			return nil
		}
		data, err := readBounded(open, limit-total)
		if err != nil {
			return err
		}
		if sameMode && b.sum == sha256.Sum256(data) {
			return nil
		}
		total += int64(len(data))
		f.Data = data
		ar.Changed = append(ar.Changed, f)
		return nil
	})
	for rel := range base {
		if !seen[rel] {
			ar.Deleted = append(ar.Deleted, rel)
		}
	}
	slices.Sort(ar.Deleted)
	return err
}

// readBounded reads a file of at most limit bytes.
func readBounded(open func() (*os.File, error), limit int64) ([]byte, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: it grew while read", f.Name())
	}
	return data, nil
}

func hashFile(open func() (*os.File, error)) ([32]byte, error) {
	var sum [32]byte
	f, err := open()
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// walkAgentDir calls fn for each regular file and symlink below dir, in
// path order, never following a symlink and skipping every directory named
// .git. open opens a regular file without following a link.
func walkAgentDir(dir string, ar *AgentResult, fn func(rel string, e baseEntry, size int64, open func() (*os.File, error)) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			return fn(rel, baseEntry{mode: 0o777, link: target}, 0, nil)
		case info.Mode().IsRegular():
			return fn(rel, baseEntry{mode: info.Mode().Perm()}, info.Size(), func() (*os.File, error) {
				f, err := os.OpenFile(p, os.O_RDONLY|syscallNoFollow, 0)
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", p, err)
				}
				return f, nil
			})
		default:
			ar.Skipped = append(ar.Skipped, filepath.ToSlash(p))
			return nil
		}
	})
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// startSplit runs argv as id with stdout copied to out and stderr to
// errOut, and with iso set from /proc once it runs.
func startSplit(rp *reaper, id identity, argv, env []string, dir string, out, errOut io.Writer, iso *Isolation) (*process, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	p := &process{rp: rp, id: id}
	var writers []*os.File
	for _, dst := range []io.Writer{out, errOut} {
		w, err := p.pipe(dst)
		if err != nil {
			for _, w := range writers {
				w.Close()
			}
			p.closeReaders()
			return nil, err
		}
		writers = append(writers, w)
	}
	p.pid, err = spawn(argv, env, dir, []*os.File{devnull, writers[0], writers[1]}, id)
	for _, w := range writers {
		w.Close()
	}
	if err != nil {
		p.closeReaders()
		return nil, err
	}
	if iso != nil {
		*iso = inspect(p.pid, id)
	}
	return p, nil
}

// agentFile writes an agent job's archive entry: the task and the
// harness's files root-owned (the harness's keep their executable bits),
// the base tree as the agent's identity, its hash kept for the diff.
func (a *archiveSink) agentFile(prefix, rel string, mode fs.FileMode, r io.Reader) error {
	if prefix == HiddenPrefix {
		switch {
		case strings.HasPrefix(HiddenPrefix+rel, TaskPrefix):
			return writeFile(TaskDir, strings.TrimPrefix(HiddenPrefix+rel, TaskPrefix), 0o644, r)
		case strings.HasPrefix(HiddenPrefix+rel, AgentPrefix):
			return writeFile(AgentDir, strings.TrimPrefix(HiddenPrefix+rel, AgentPrefix), mode&0o755|0o644, r)
		}
		return fmt.Errorf("input archive entry %q: an agent job has no hidden files", HiddenPrefix+rel)
	}
	if !a.entered {
		if err := a.id.enter(); err != nil {
			return err
		}
		a.entered = true
	}
	h := sha256.New()
	m := mode&0o755 | 0o600
	if err := writeFile(WorkspaceDir, rel, m, io.TeeReader(r, h)); err != nil {
		return err
	}
	var e baseEntry
	copy(e.sum[:], h.Sum(nil))
	e.mode = m
	a.base[rel] = e
	return nil
}

// root is where an archive's tree goes: WorkspaceDir for an agent
// job, RepoDir otherwise.
func (a *archiveSink) root() string {
	if a.j.Mode == ModeAgent {
		return WorkspaceDir
	}
	return RepoDir
}

package docker_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestContainerConfigSealed checks the sealing invariants on every
// configuration the sandbox can produce.
func TestContainerConfigSealed(t *testing.T) {
	deadline := time.Unix(1_900_000_000, 0)
	tests := []struct {
		name    string
		spec    sandbox.Spec
		capAdd  []string
		repoOwn string
	}{
		{
			name:    "uid split",
			spec:    sandbox.Spec{Image: "img", UIDSplit: true, TestUID: 1000, Limits: sandbox.DefaultLimits},
			capAdd:  []string{"SETUID", "SETGID"},
			repoOwn: "uid=1000,gid=1000",
		},
		{
			name: "no uid split",
			spec: sandbox.Spec{Image: "img", Limits: sandbox.DefaultLimits},
		},
		{
			name:    "gVisor",
			spec:    sandbox.Spec{Image: "img", UIDSplit: true, TestUID: 1000, Limits: sandbox.DefaultLimits, Runtime: "runsc"},
			capAdd:  []string{"SETUID", "SETGID"},
			repoOwn: "uid=1000,gid=1000",
		},
		{
			name:    "small limits and labels",
			spec:    sandbox.Spec{Image: "img", UIDSplit: true, TestUID: 4242, Labels: map[string]string{"grade": "7", sandbox.LabelSandbox: "0"}, Limits: sandbox.Limits{Memory: 64 << 20, NanoCPUs: 5e8, Pids: 32, RepoSize: 1 << 20, HiddenSize: 1 << 20, TmpSize: 1 << 20}},
			capAdd:  []string{"SETUID", "SETGID"},
			repoOwn: "uid=4242,gid=4242",
		},
		{
			name: "agent dirs",
			spec: sandbox.Spec{Image: "img", UIDSplit: true, TestUID: 5151, Limits: sandbox.DefaultLimits, Dirs: []sandbox.Dir{
				{Path: "/workspace", Size: 1 << 20, Mode: 0o755, Owner: 5151}, {Path: "/task", Size: 1 << 20, Mode: 0o755, NoExec: true}}},
			capAdd:  []string{"SETUID", "SETGID"},
			repoOwn: "uid=5151,gid=5151",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			began := deadline.Add(-time.Minute)
			cfg, host := docker.ContainerConfig(tt.spec, began, deadline)
			if got, want := cfg.Labels[docker.LabelStartBy], strconv.FormatInt(began.Add(time.Minute).Unix(), 10); got != want {
				t.Errorf("label %s = %q, want %q: a minute after the run began", docker.LabelStartBy, got, want)
			}
			for _, d := range tt.spec.Dirs {
				got := host.Tmpfs[d.Path]
				if !strings.Contains(got, "nosuid,nodev") || strings.Contains(got, ",exec,") == d.NoExec ||
					strings.Contains(got, "uid=5151,gid=5151") != (d.Owner != 0) || !strings.Contains(got, "mode=0755") {
					t.Errorf("tmpfs %s = %q", d.Path, got)
				}
			}
			for _, v := range testenv.SealViolations(cfg, host) {
				t.Error(v)
			}
			if len(host.CapAdd) != len(tt.capAdd) {
				t.Errorf("CapAdd = %v, want %v", host.CapAdd, tt.capAdd)
			}
			if host.Memory != tt.spec.Limits.Memory || host.NanoCPUs != tt.spec.Limits.NanoCPUs || *host.PidsLimit != tt.spec.Limits.Pids {
				t.Errorf("limits = %d/%d/%d, want %+v", host.Memory, host.NanoCPUs, *host.PidsLimit, tt.spec.Limits)
			}
			if got := cfg.Labels[sandbox.LabelSandbox]; got != "1" {
				t.Errorf("label %s = %q, want 1 (a caller's label must not unmark a sandbox)", sandbox.LabelSandbox, got)
			}
			if got := cfg.Labels[sandbox.LabelDeadline]; got != "1900000000" {
				t.Errorf("deadline label = %q", got)
			}
			repo := host.Tmpfs[sandbox.RepoMount]
			if tt.repoOwn != "" && !strings.Contains(repo, tt.repoOwn) {
				t.Errorf("repo tmpfs %q is not owned by the test uid (%s)", repo, tt.repoOwn)
			}
			if tt.repoOwn == "" && strings.Contains(repo, "uid=") {
				t.Errorf("repo tmpfs %q is owned by a test uid without the uid split", repo)
			}
			for _, mnt := range host.Tmpfs {
				if !strings.Contains(mnt, "nosuid") || !strings.Contains(mnt, "nodev") || !strings.Contains(mnt, "size=") {
					t.Errorf("tmpfs %q lacks nosuid, nodev or a size", mnt)
				}
			}
			if host.Runtime != tt.spec.Runtime {
				t.Errorf("Runtime = %q, want %q (empty: the engine's default)", host.Runtime, tt.spec.Runtime)
			}
			if !cfg.OpenStdin || !cfg.StdinOnce || cfg.Tty {
				t.Error("input must go in on stdin, once, without a tty")
			}
		})
	}
}

func TestLimitsOf(t *testing.T) {
	l := sandbox.LimitsOf(512<<20, 1.5, 64)
	want := sandbox.DefaultLimits
	want.Memory, want.NanoCPUs, want.Pids = 512<<20, 1_500_000_000, 64
	if l != want {
		t.Errorf("sandbox.LimitsOf = %+v, want %+v", l, want)
	}
	if got := l.CPUs(); got != 1.5 {
		t.Errorf("CPUs = %v, want 1.5", got)
	}
}

// TestDirsRefused: a further tmpfs may not hide the image's system
// directories or the sandbox's own mounts, nor sit below them.
func TestDirsRefused(t *testing.T) {
	for _, p := range []string{"/etc", "/usr", "/tmp", "/repo", "/hidden", "/proc", "/run", "/", "/workspace/x", "workspace", "/.."} {
		if err := docker.CheckDirs([]sandbox.Dir{{Path: p, Size: 1 << 20}}); err == nil {
			t.Errorf("tmpfs on %s accepted", p)
		}
	}
	if err := docker.CheckDirs([]sandbox.Dir{{Path: "/workspace", Size: 1 << 20}, {Path: "/out", Size: 1 << 20}}); err != nil {
		t.Errorf("agent dirs refused: %v", err)
	}
	if err := docker.CheckDirs([]sandbox.Dir{{Path: "/out", Size: 1 << 20}, {Path: "/out", Size: 1 << 20}}); err == nil {
		t.Error("the same tmpfs twice accepted")
	}
}

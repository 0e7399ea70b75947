package wrapper

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets killAsUID re-execute the test binary as it re-executes
// the wrapper.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == KillArg {
		os.Exit(KillOwn())
	}
	os.Exit(m.Run())
}

// TestKillLeavesRoot: the end of a split process kills every process of
// the test uid and none of root's but its own. Before, kill(-1) with only
// the effective uid switched also killed the root process (in an E2B
// microVM, envd). Never run that code outside a container: run on a host
// as root, it killed every process of the host but PID 1 and itself.
func TestKillLeavesRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch uids")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	// The reaper waits for every child of its process: it runs in a test
	// process of its own, not beside the tests that wait for theirs.
	if os.Getenv("TESTFIRST_KILL_TEST") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestKillLeavesRoot$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "TESTFIRST_KILL_TEST=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestKillLeavesRoot") {
			t.Errorf("%v\n%s", err, out)
		}
		return
	}
	rp := newReaper()
	id := identity{split: true, uid: 200_000 + os.Getpid()%1000}
	rootPid, err := spawn([]string{sleep, "60"}, nil, "/", nil, identity{})
	if err != nil {
		t.Fatal(err)
	}
	rootEnd := rp.wait(rootPid)
	defer syscall.Kill(rootPid, syscall.SIGKILL)
	uidPid, err := spawn([]string{sleep, "60"}, nil, "/", nil, id)
	if err != nil {
		t.Fatal(err)
	}
	uidEnd := rp.wait(uidPid)
	alive, err := killAll(rp, id)
	if err != nil || alive != 1 {
		t.Errorf("killAll: %d alive before, %v", alive, err)
	}
	select {
	case <-uidEnd:
	case <-time.After(time.Minute):
		t.Error("the test uid's process survived")
	}
	select {
	case ws := <-rootEnd:
		t.Errorf("root's process was killed too: %v", ws)
	default:
	}
}

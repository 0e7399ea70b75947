package testenv

import (
	"errors"
	"os"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Opens records every process that opens one file, by the kernel's
// account (fanotify), however briefly it holds it: no process can open the
// file unseen, and none is seen that did not.
type Opens struct {
	fd   int
	mu   sync.Mutex
	pids []int
	quit chan struct{}
	done chan struct{}
}

// WatchOpens watches path until the test ends. fanotify needs
// CAP_SYS_ADMIN: without it the test is skipped, or fails under
// TESTFIRST_REQUIRE_DOCKER (make test runs as root).
func WatchOpens(t *testing.T, path string) *Opens {
	t.Helper()
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_LARGEFILE)
	if err != nil {
		if os.Getenv("TESTFIRST_REQUIRE_DOCKER") != "" {
			t.Fatalf("fanotify_init: %v: watching who opens a file needs root (CAP_SYS_ADMIN)", err)
		}
		t.Skipf("fanotify_init: %v: watching who opens a file needs root (CAP_SYS_ADMIN)", err)
	}
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN, unix.AT_FDCWD, path); err != nil {
		unix.Close(fd)
		t.Fatalf("fanotify_mark %s: %v", path, err)
	}
	o := &Opens{fd: fd, quit: make(chan struct{}), done: make(chan struct{})}
	go o.read()
	t.Cleanup(o.stop)
	return o
}

func (o *Opens) read() {
	defer close(o.done)
	buf := make([]byte, 4096)
	size := int(unsafe.Sizeof(unix.FanotifyEventMetadata{}))
	for {
		select {
		case <-o.quit:
			return
		default:
		}
		fds := []unix.PollFd{{Fd: int32(o.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 100); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		n, err := unix.Read(o.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+size <= n; {
			ev := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
			if ev.Fd >= 0 {
				unix.Close(int(ev.Fd))
			}
			o.mu.Lock()
			o.pids = append(o.pids, int(ev.Pid))
			o.mu.Unlock()
			if ev.Event_len == 0 {
				break
			}
			off += int(ev.Event_len)
		}
	}
}

// Pids lists the processes that opened the file so far, once per open.
func (o *Opens) Pids() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]int(nil), o.pids...)
}

// Opened reports whether process pid opened the file.
func (o *Opens) Opened(pid int) bool {
	for _, p := range o.Pids() {
		if p == pid {
			return true
		}
	}
	return false
}

func (o *Opens) stop() {
	close(o.quit)
	<-o.done
	unix.Close(o.fd)
}

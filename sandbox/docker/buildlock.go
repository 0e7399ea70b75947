package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockBuild takes this machine's lock on building the image ref: an
// exclusive flock on a file in the system's temporary directory, named by
// the ref. It waits while another process holds it, until ctx ends. The
// kernel drops the lock when its holder dies, so a killed build never
// blocks the next one.
func lockBuild(ctx context.Context, ref string) (unlock func(), err error) {
	name := "testfirst-image-" + strings.NewReplacer("/", "_", ":", "_").Replace(ref) + ".lock"
	path := filepath.Join(os.TempDir(), name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the build lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("the build lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another process's build of the same image (lock %s): %w", path, context.Cause(ctx))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

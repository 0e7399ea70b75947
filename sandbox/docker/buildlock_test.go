package docker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLockBuildWaitsForTheHolder(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ref := "testfirst-python:0123456789abcdef"
	unlock, err := lockBuild(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := lockBuild(ctx, ref); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "another process's build of the same image") {
		t.Fatalf("second lock while the first is held: %v, want a wait that ends with its context", err)
	}
	other, err := lockBuild(context.Background(), "testfirst-agent:0123456789abcdef")
	if err != nil {
		t.Fatalf("another image's lock: %v", err)
	}
	other()

	got := make(chan error, 1)
	go func() {
		u, err := lockBuild(context.Background(), ref)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(300 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting build did not get the lock after the holder let go")
	}
}

package docker

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/testfirst-app/testfirst/sandbox"
)

// endingEngine is an engine whose one container ends with exit status
// exit, its die event sent at once and its out-of-memory event, when oom,
// after oomAfter: the order containerd 1.6 may use. Only the calls a run
// makes are answered.
type endingEngine struct {
	Client
	exit     int64
	oom      bool
	oomAfter time.Duration
}

func (e *endingEngine) ContainerCreate(context.Context, *container.Config, *container.HostConfig, *network.NetworkingConfig, *ocispec.Platform, string) (container.CreateResponse, error) {
	return container.CreateResponse{ID: "c1"}, nil
}

func (e *endingEngine) ContainerAttach(context.Context, string, container.AttachOptions) (types.HijackedResponse, error) {
	ours, theirs := net.Pipe()
	theirs.Close() // no output: the stream ends at once
	return types.NewHijackedResponse(ours, ""), nil
}

func (e *endingEngine) ContainerStart(context.Context, string, container.StartOptions) error {
	return nil
}

func (e *endingEngine) ContainerWait(context.Context, string, container.WaitCondition) (<-chan container.WaitResponse, <-chan error) {
	w := make(chan container.WaitResponse, 1)
	w <- container.WaitResponse{StatusCode: e.exit}
	return w, make(chan error)
}

func (e *endingEngine) Events(ctx context.Context, _ events.ListOptions) (<-chan events.Message, <-chan error) {
	msgs := make(chan events.Message)
	go func() {
		select {
		case msgs <- events.Message{Action: events.ActionDie}:
		case <-ctx.Done():
			return
		}
		if !e.oom {
			return
		}
		select {
		case <-time.After(e.oomAfter):
		case <-ctx.Done():
			return
		}
		select {
		case msgs <- events.Message{Action: events.ActionOOM}:
		case <-ctx.Done():
		}
	}()
	return msgs, make(chan error)
}

func (e *endingEngine) ContainerKill(context.Context, string, string) error { return nil }

func (e *endingEngine) ContainerRemove(context.Context, string, container.RemoveOptions) error {
	return nil
}

// TestRunWaitsForATrailingOOMEvent: an out-of-memory event that comes
// after the die event is still reported (it did not, and TestRunReportsOOM
// failed in make test); a SIGKILL with no such event is not called one.
func TestRunWaitsForATrailingOOMEvent(t *testing.T) {
	for _, c := range []struct {
		name string
		eng  endingEngine
		want bool
	}{
		{"trailing oom", endingEngine{exit: 137, oom: true, oomAfter: time.Second}, true},
		{"killed, no oom", endingEngine{exit: 137}, false},
		{"failed", endingEngine{exit: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Engine{eng: &c.eng}
			res, err := d.Run(context.Background(), sandbox.Spec{Image: "x", Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.OOMKilled != c.want || res.ExitCode != int(c.eng.exit) {
				t.Errorf("exit %d, OOMKilled %v; want exit %d, OOMKilled %v", res.ExitCode, res.OOMKilled, c.eng.exit, c.want)
			}
		})
	}
}

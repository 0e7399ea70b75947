package test

import (
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// gcsBucket is the bucket of the fault suite's GCS store.
const gcsBucket = "testfirst-faults"

// tcpRelay forwards connections to a target and can go away (its
// listener closed, its connections cut) and come back on the same
// address: the GCS emulator, as seen by the service, stopped and started.
type tcpRelay struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]bool
}

func startRelay(t *testing.T, target string) *tcpRelay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &tcpRelay{t: t, target: target, addr: l.Addr().String(), conns: map[net.Conn]bool{}}
	r.serve(l)
	t.Cleanup(r.stop)
	return r
}

func (r *tcpRelay) serve(l net.Listener) {
	r.mu.Lock()
	r.l = l
	r.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go r.relay(c)
		}
	}()
}

func (r *tcpRelay) relay(c net.Conn) {
	up, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	r.mu.Lock()
	r.conns[c], r.conns[up] = true, true
	r.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, up)
	r.mu.Unlock()
}

// stop closes the listener and cuts every connection.
func (r *tcpRelay) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.l != nil {
		r.l.Close()
		r.l = nil
	}
	for c := range r.conns {
		c.Close()
	}
}

// start listens again on the same address.
func (r *tcpRelay) start() {
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Errorf("relay: listen again on %s: %v", r.addr, err)
		return
	}
	r.serve(l)
}

// startGCSEmulator runs fake-gcs-server in this process behind a relay
// and points STORAGE_EMULATOR_HOST (for serve and the tests commands) at
// the relay.
func startGCSEmulator(t *testing.T) *tcpRelay {
	t.Helper()
	server, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0, PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(server.Stop)
	server.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: gcsBucket})
	u, err := url.Parse(server.URL())
	if err != nil {
		t.Fatal(err)
	}
	relay := startRelay(t, u.Host)
	t.Setenv("STORAGE_EMULATOR_HOST", relay.addr)
	return relay
}

// storeDown: the hidden-test store (a GCS bucket) goes away as a grade
// starts and is back 8 s later: the storage client retries and the grade
// completes.
func storeDown(t *testing.T, r *faultRig, relay *tcpRelay) {
	t.Run("GCS emulator down while grading", func(t *testing.T) {
		// The store goes away as the grade sets its run in progress,
		// just before it opens the approved version: a PATCH of the run
		// the webhook queued, or a POST when the grade started before
		// that run was made (under load it does).
		gh := r.p.gh
		mark := gh.RequestCount()
		stopped := make(chan time.Time, 1)
		gh.OnNextWhere("", checkRunsPath, `"status":"in_progress"`, func() { relay.stop(); stopped <- time.Now() })
		head := r.openPR(t, "store-blip")
		var start time.Time
		select {
		case start = <-stopped:
		case <-time.After(120 * time.Second):
			t.Fatalf("the grade never set its run in progress:\n%s", r.s.log())
		}
		time.Sleep(8 * time.Second)
		relay.start()
		run := r.settled(t, "GCS emulator down while grading (8 s)", head, "success", start, mark)
		if !strings.Contains(run.Title, "10/10") {
			t.Errorf("check run %q", run.Title)
		}
		if logLineHas(r.s.log(), `"msg":"grade failed; River retries"`, "list versions") {
			t.Log("the store's client gave up; River retried the grade")
		} else {
			t.Log("the store's client retried within the call")
		}
	})
}

// storeGone: the store goes away as a grade starts and stays away until
// the check run completes as failed, saying the hidden tests could not be
// opened; no grade ran without them. Then it comes back.
func storeGone(t *testing.T, r *faultRig, relay *tcpRelay) {
	t.Run("GCS emulator gone while grading", func(t *testing.T) {
		gh := r.p.gh
		mark := gh.RequestCount()
		stopped := make(chan time.Time, 1)
		gh.OnNextWhere("", checkRunsPath, `"status":"in_progress"`, func() { relay.stop(); stopped <- time.Now() })
		defer relay.start()
		head := r.openPR(t, "store-gone")
		var start time.Time
		select {
		case start = <-stopped:
		case <-time.After(120 * time.Second):
			t.Fatalf("the grade never set its run in progress:\n%s", r.s.log())
		}
		run := r.settled(t, "GCS emulator gone while grading (for good)", head, "failure", start, mark)
		if !strings.Contains(run.Summary, "hidden tests could not be opened") || !strings.Contains(run.Summary, "did not answer in time") {
			t.Errorf("the failed run does not say why:\n%s", run.Summary)
		}
		if run.Title != "not graded" {
			t.Errorf("check run %q; want \"not graded\": no grade without the approved tests", run.Title)
		}
	})
}

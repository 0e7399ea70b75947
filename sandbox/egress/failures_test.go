package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestFailuresSayWhatHappened: an index whose name does not resolve, one
// that refuses, one that answers 503 are each said as such by the proxy,
// for a build to quote instead of guessing from pip's text.
func TestFailuresSayWhatHappened(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := closed.Addr().String()
	closed.Close()
	failing := upstream503(t)
	c, s, _ := serve(t, []string{"nosuch.invalid:80", refusing, failing})
	p := s.proxy
	p.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	began := time.Now()
	for _, u := range []string{"http://nosuch.invalid/simple/", "http://" + refusing + "/simple/", "http://" + failing + "/simple/"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := strings.Join(p.Failures(began), "; ")
	want := "nosuch.invalid:80 could not be resolved (no such host); " + refusing + " refused the connection; " + failing + " answered 503"
	if got != want {
		t.Errorf("Failures = %q\nwant %q", got, want)
	}
	if f := p.Failures(time.Now().Add(time.Minute)); len(f) != 0 {
		t.Errorf("failures after now: %q", f)
	}
}

func upstream503(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// TestDescribeUpstream: each kind of upstream error in the proxy's words.
func TestDescribeUpstream(t *testing.T) {
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: &timeoutErr{}}
	for _, tt := range []struct {
		err    error
		status int
		want   string
	}{
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, 0, "could not be resolved (no such host)"},
		{&net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, 0, "could not be resolved (the lookup timed out)"},
		{timeout, 0, "timed out"},
		{context.DeadlineExceeded, 0, "timed out"},
		{&InternalError{Host: "x:80", Addr: netip.MustParseAddr("10.0.0.1"), Kind: "private"}, 0, "was refused by the proxy: "},
		{nil, 503, "answered 503"},
	} {
		if got := describeUpstream(tt.err, tt.status); !strings.HasPrefix(got, tt.want) {
			t.Errorf("describeUpstream(%v, %d) = %q, want %q", tt.err, tt.status, got, tt.want)
		}
	}
}

type timeoutErr struct{}

func (*timeoutErr) Error() string   { return "i/o timeout" }
func (*timeoutErr) Timeout() bool   { return true }
func (*timeoutErr) Temporary() bool { return true }

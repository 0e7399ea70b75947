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

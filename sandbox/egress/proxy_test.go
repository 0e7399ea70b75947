package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder keeps the proxy's log entries.
type recorder struct {
	mu      sync.Mutex
	entries []Entry
}

func (r *recorder) log(e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
}

func (r *recorder) all() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Entry(nil), r.entries...)
}

// serve starts a proxy allowing the given hosts on a unix socket and
// returns a client that sends everything through it.
func serve(t *testing.T, allowed []string, opts ...Option) (*http.Client, *Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	p, err := New(allowed, append([]Option{WithPeerUIDs(os.Getuid())}, append(opts, WithLog(rec.log))...)...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	proxyURL, _ := url.Parse("http://egress")
	tr := &http.Transport{
		Proxy: http.ProxyURL(proxyURL),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", s.Socket)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, s, rec
}

func upstream(t *testing.T, tlsToo bool) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	})
	var s *httptest.Server
	if tlsToo {
		s = httptest.NewTLSServer(h)
	} else {
		s = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func hostOf(t *testing.T, s *httptest.Server) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestAllowedGetIsForwardedAndLogged(t *testing.T) {
	up := upstream(t, false)
	c, s, rec := serve(t, []string{hostOf(t, up)})
	resp, err := c.Get(up.URL + "/simple/pkg/?x=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "GET /simple/pkg/" {
		t.Fatalf("through the proxy: %d %q", resp.StatusCode, body)
	}
	s.Close() // every request is logged once Close returns
	want := Entry{Host: hostOf(t, up), Method: "GET", Path: "/simple/pkg/?x=1", Status: 200, Bytes: int64(len(body)), BytesOut: int64(len(body))}
	if got := rec.all(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("log = %+v, want [%+v]", got, want)
	}
}

func TestDeniedHost(t *testing.T) {
	up := upstream(t, false)
	other := upstream(t, false)
	c, _, rec := serve(t, []string{hostOf(t, up)})
	resp, err := c.Get(other.URL + "/secret")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "is not an allowed host") {
		t.Errorf("a host not allowed: %d %q, want 403 that says why", resp.StatusCode, body)
	}
	got := rec.all()
	if len(got) != 1 || got[0].Host != hostOf(t, other) || got[0].Status != 403 || got[0].Denied != "host not allowed" || got[0].Path != "/secret" {
		t.Errorf("log = %+v, want one denied entry for %s", got, hostOf(t, other))
	}
}

func TestConnect(t *testing.T) {
	up := upstream(t, true)
	other := upstream(t, true)
	c, _, rec := serve(t, []string{hostOf(t, up)})
	resp, err := c.Get(up.URL + "/simple/")
	if err != nil {
		t.Fatalf("CONNECT to an allowed host: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "GET /simple/" {
		t.Errorf("through the tunnel: %q", body)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	if _, err := c.Get(other.URL + "/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to a host not allowed: %v, want Forbidden", err)
	}
	// A tunnel is logged when it closes.
	var got []Entry
	for i := 0; i < 200; i++ {
		if got = rec.all(); len(got) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 2 {
		t.Fatalf("log = %+v, want two entries", got)
	}
	if got[0].Status == 403 {
		got[0], got[1] = got[1], got[0]
	}
	if got[0].Method != "CONNECT" || got[0].Host != hostOf(t, up) || got[0].Status != 200 || got[0].Bytes == 0 {
		t.Errorf("the tunnel's entry = %+v", got[0])
	}
	if got[1].Method != "CONNECT" || got[1].Host != hostOf(t, other) || got[1].Status != 403 || got[1].Denied != "host not allowed" {
		t.Errorf("the refused tunnel's entry = %+v", got[1])
	}
}

func TestReadOnly(t *testing.T) {
	up := upstream(t, false)
	tlsUp := upstream(t, true)
	c, s, rec := serve(t, []string{hostOf(t, up), hostOf(t, tlsUp)}, ReadOnly())
	for _, m := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(m, up.URL+"/simple/", nil)
		resp, err := c.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s read-only: %v %v", m, resp, err)
		}
		resp.Body.Close()
	}
	resp, err := c.Post(up.URL+"/upload", "text/plain", strings.NewReader("data"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST read-only: %d, want 403", resp.StatusCode)
	}
	// CONNECT, by hand: a tunnel would hide its requests' methods.
	conn, err := net.Dial("unix", s.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostOf(t, tlsUp), hostOf(t, tlsUp))
	cresp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cresp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT read-only: %d, want 403", cresp.StatusCode)
	}
	var denied []string
	for _, e := range rec.all() {
		if e.Denied != "" {
			denied = append(denied, e.Method+" "+e.Denied)
		}
	}
	if fmt.Sprint(denied) != "[POST read-only CONNECT read-only]" {
		t.Errorf("denied = %q", denied)
	}
}

func TestAllowedFor(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want string
	}{
		{"https://pypi.org/simple", "[pypi.org:443 files.pythonhosted.org:443]"},
		{"http://127.0.0.1:8080/simple/", "[127.0.0.1:8080]"},
		{"https://Mirror.example/pypi/simple", "[mirror.example:443]"},
	} {
		got, err := AllowedFor(tt.url)
		if err != nil || fmt.Sprint(got) != tt.want {
			t.Errorf("AllowedFor(%s) = %v, %v; want %s", tt.url, got, err, tt.want)
		}
	}
	if _, err := AllowedFor("ftp://x/simple"); err == nil || !strings.Contains(err.Error(), "http or https") {
		t.Errorf("ftp index: %v", err)
	}
}

// TestSweepStale: a crashed process's socket directory (its socket left
// with no listener) goes once it is a minute old; a live proxy's, a young
// one's and other directories stay.
func TestSweepStale(t *testing.T) {
	dir := t.TempDir()
	p, err := New([]string{"pypi.org:443"})
	if err != nil {
		t.Fatal(err)
	}
	live, err := p.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	stale := func(name string, age time.Duration) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", filepath.Join(d, "egress.sock"))
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false) // as a killed process leaves it
		l.Close()
		old := time.Now().Add(-age)
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := stale("testfirst-egress-dead", 2*time.Minute)
	young := stale("testfirst-egress-young", 10*time.Second)
	other := stale("other-dir", time.Hour)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Dir(live.Socket), old, old); err != nil {
		t.Fatal(err)
	}
	n, err := SweepStale(dir)
	if err != nil || n != 1 {
		t.Fatalf("SweepStale = %d, %v; want 1", n, err)
	}
	for d, want := range map[string]bool{dead: false, young: true, other: true, filepath.Dir(live.Socket): true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", d, err == nil, want)
		}
	}
}

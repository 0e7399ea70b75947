package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counted is an upstream that counts the requests it got.
func counted(t *testing.T, tlsToo bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprintf(w, "upstream saw %s %s", r.Method, r.URL.Path)
	})
	s := httptest.NewUnstartedServer(h)
	// A tunnel cut after the dial ends the upstream's handshake early.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsToo {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &n
}

// portOf is s's port.
func portOf(t *testing.T, s *httptest.Server) string {
	_, port, err := net.SplitHostPort(hostOf(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// tunnel opens a CONNECT tunnel to hostPort through s and returns the
// proxy's status and the connection.
func tunnel(t *testing.T, s *Server, hostPort string) (int, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", s.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", hostPort, err)
	}
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, c, br
}

// bufConn reads what the proxy's reader already holds first.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// overTLS speaks TLS with serverName (none for "") down an opened tunnel,
// sends one GET and returns the answer's first line, or the error.
func overTLS(c net.Conn, br *bufio.Reader, serverName string) (string, error) {
	tc := tls.Client(bufConn{c, br}, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		return "", err
	}
	fmt.Fprintf(tc, "GET /secret HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", serverName)
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return resp.Status, nil
}

// TestAllowedNameResolvingToLoopbackIsRefused (security review, finding
// 7): an allowed name that resolves to loopback (localhost here; any name
// whose DNS an attacker controls, or a wildcard's, in general) must not
// take the sandbox to the host's own services, by plain HTTP or by
// CONNECT.
func TestAllowedNameResolvingToLoopbackIsRefused(t *testing.T) {
	plain, plainHits := counted(t, false)
	secure, secureHits := counted(t, true)
	c, s, rec := serve(t, []string{"localhost:" + portOf(t, plain), "localhost:" + portOf(t, secure)})

	resp, err := c.Get("http://localhost:" + portOf(t, plain) + "/secret")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "loopback") {
		t.Errorf("GET http://localhost:%s/ through the proxy: %d %q, want 403 that says it is loopback", portOf(t, plain), resp.StatusCode, body)
	}
	code, conn, br := tunnel(t, s, "localhost:"+portOf(t, secure))
	if code == 200 {
		got, err := overTLS(conn, br, "localhost")
		t.Errorf("CONNECT localhost:%s opened a tunnel to loopback (through it: %q %v), want 403", portOf(t, secure), got, err)
	} else if code != http.StatusForbidden {
		t.Errorf("CONNECT localhost: %d, want 403", code)
	}
	if n, m := plainHits.Load(), secureHits.Load(); n+m != 0 {
		t.Errorf("the loopback services got %d and %d requests through the proxy", n, m)
	}
	s.Close()
	for _, e := range rec.all() {
		if e.Denied != "internal address" {
			t.Errorf("logged %+v, want refused as an internal address", e)
		}
	}
}

// TestTLSServerNameIsTheConnectHost (security review, finding 7): a
// tunnel opened to an allowed host carries TLS for that host only: a
// ClientHello naming another server (domain fronting, another tenant of
// the same front end) is cut before it reaches upstream.
func TestTLSServerNameIsTheConnectHost(t *testing.T) {
	secure, hits := counted(t, true)
	_, s, rec := serve(t, []string{hostOf(t, secure)})
	code, conn, br := tunnel(t, s, hostOf(t, secure))
	if code != 200 {
		t.Fatalf("CONNECT %s: %d", hostOf(t, secure), code)
	}
	if got, err := overTLS(conn, br, "evil.example"); err == nil {
		t.Errorf("TLS for evil.example through a tunnel to %s: %q, want the tunnel cut", hostOf(t, secure), got)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("upstream got %d requests for another server name", n)
	}
	var cut bool
	for i := 0; i < 200 && !cut; i++ {
		for _, e := range rec.all() {
			cut = cut || e.Method == "CONNECT" && strings.HasPrefix(e.Denied, "tls server name")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !cut {
		t.Errorf("log = %+v, want the tunnel refused for its server name", rec.all())
	}
}

// TestInternalNamedExplicitly: what the operator names is reached: an
// address written in the allowlist, on its port (as every test's loopback
// upstream is), or the internal addresses allowed (WithInternal), to
// which an allowed name may then resolve; TLS whose server name is the
// tunnel's host (in any case, with a final dot) goes through, and so does
// a tunnel whose server speaks first.
func TestInternalNamedExplicitly(t *testing.T) {
	plain, _ := counted(t, false)
	secure, _ := counted(t, true)
	for _, internal := range []string{"127.0.0.1", "127.0.0.0/8", "::ffff:127.0.0.1"} {
		c, s, _ := serve(t, []string{"localhost:" + portOf(t, plain), "localhost:" + portOf(t, secure)}, WithInternal(internal))
		resp, err := c.Get("http://localhost:" + portOf(t, plain) + "/ok")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "upstream saw GET /ok" {
			t.Errorf("WithInternal(%s): GET localhost: %d %q", internal, resp.StatusCode, body)
		}
		for _, name := range []string{"localhost", "LOCALHOST."} {
			code, conn, br := tunnel(t, s, "localhost:"+portOf(t, secure))
			if code != 200 {
				t.Fatalf("WithInternal(%s): CONNECT localhost: %d", internal, code)
			}
			if got, err := overTLS(conn, br, name); err != nil || got != "200 OK" {
				t.Errorf("WithInternal(%s): TLS for %s through a tunnel to localhost: %q %v", internal, name, got, err)
			}
		}
	}

	// A named address is named on its port only: localhost on another
	// port is still loopback nobody named.
	c, _, _ := serve(t, []string{hostOf(t, secure), "localhost:" + portOf(t, plain)})
	resp, err := c.Get("http://localhost:" + portOf(t, plain) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("localhost on a port whose loopback address nobody named: %d, want 403", resp.StatusCode)
	}

	// A server that speaks first is not held up by the look at the
	// client's first bytes.
	banner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer banner.Close()
	go func() {
		c, err := banner.Accept()
		if err == nil {
			io.WriteString(c, "220 hello\r\n")
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	_, s, _ := serve(t, []string{banner.Addr().String()})
	code, _, br := tunnel(t, s, banner.Addr().String())
	if code != 200 {
		t.Fatalf("CONNECT to a server that speaks first: %d", code)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "220 hello\r\n" {
		t.Errorf("the server's first words through the tunnel: %q %v", line, err)
	}
}

// TestResolvedAddressesChecked: every address a name resolves to is
// judged; the internal ones nobody named are skipped and the others
// dialled; a name that resolves to the metadata service only is refused
// and says so.
func TestResolvedAddressesChecked(t *testing.T) {
	plain, hits := counted(t, false)
	fake := func(addrs ...string) Option {
		return func(p *Proxy) {
			p.resolve = func(context.Context, string) ([]netip.Addr, error) {
				var out []netip.Addr
				for _, a := range addrs {
					out = append(out, netip.MustParseAddr(a))
				}
				return out, nil
			}
		}
	}
	port := portOf(t, plain)
	c, _, _ := serve(t, []string{"mirror.example:" + port}, fake("10.255.255.1", "127.0.0.1"), WithInternal("127.0.0.1"))
	resp, err := c.Get("http://mirror.example:" + port + "/simple/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || hits.Load() != 1 {
		t.Errorf("a name resolving to a private address nobody named and one allowed: %d, upstream got %d", resp.StatusCode, hits.Load())
	}
	c, _, _ = serve(t, []string{"*.example:" + port}, fake("169.254.169.254", "::ffff:169.254.169.254"))
	resp, err = c.Get("http://metadata.example:" + port + "/latest/meta-data/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "169.254.169.254, a metadata address") {
		t.Errorf("a name resolving to the metadata service: %d %q", resp.StatusCode, body)
	}
	if _, err := New([]string{"pypi.org:443"}, WithInternal("10.0.0.0/33")); err == nil {
		t.Error("WithInternal took a bad prefix")
	}
}

func TestInternalKind(t *testing.T) {
	for a, want := range map[string]string{
		"127.0.0.1": "loopback", "::1": "loopback", "127.5.6.7": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fc00::1": "private",
		"169.254.169.254": "metadata", "fd00:ec2::254": "metadata", "100.100.100.200": "metadata",
		"169.254.1.1": "link-local", "fe80::1": "link-local",
		"0.0.0.0": "unspecified", "::": "unspecified", "0.1.2.3": "this-network",
		"100.64.0.1": "shared (carrier-grade NAT)", "224.0.0.1": "multicast or broadcast", "255.255.255.255": "multicast or broadcast",
		"::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private",
		"64:ff9b::7f00:1": "loopback (in IPv6)", "2002:a9fe:a9fe::1": "metadata (in IPv6)",
		"8.8.8.8": "", "151.101.0.223": "", "203.0.113.80": "", "198.18.0.1": "", "2606:4700::1111": "", "64:ff9b::808:808": "",
	} {
		if got := internalKind(netip.MustParseAddr(a)); got != want {
			t.Errorf("internalKind(%s) = %q, want %q", a, got, want)
		}
	}
}

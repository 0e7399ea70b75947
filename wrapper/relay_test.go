package wrapper

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelay: a request to the loopback address arrives on the unix socket
// and its answer comes back.
func TestRelay(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "p.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go http.Serve(ul, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "proxy saw %s %s", r.Method, r.URL)
	}))
	l, err := relay("127.0.0.1:0", socketDialer(sock))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://index.example/simple/ HTTP/1.1\r\nHost: index.example\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body [64]byte
	n, _ := resp.Body.Read(body[:])
	if got := string(body[:n]); got != "proxy saw GET http://index.example/simple/" {
		t.Errorf("through the relay: %q", got)
	}

	// With nothing on the socket, the relay answers 502 and says why.
	l2, err := relay("127.0.0.1:0", socketDialer(filepath.Join(t.TempDir(), "none.sock")))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	c2, err := net.Dial("tcp", l2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n")
	r2, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil || r2.StatusCode != 502 {
		t.Errorf("relay without a proxy: %v %v, want 502", r2, err)
	}
}

// TestRelayUpgrade: with the egress URL and token in its environment, the
// relay reaches the proxy through an upgraded HTTP connection that carries
// the token, takes both variables out of the environment, and says so
// when the gateway refuses.
func TestRelayUpgrade(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer run-token" || r.Header.Get("Upgrade") != EgressUpgrade {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		c, brw, _ := w.(http.Hijacker).Hijack()
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+EgressUpgrade+"\r\n\r\n")
		req, err := http.ReadRequest(brw.Reader)
		if err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\nproxy saw %s", len("proxy saw ")+len(req.URL.String()), req.URL)
	}))
	for _, tc := range []struct{ token, want string }{{"run-token", "200"}, {"stolen", "502"}} {
		t.Setenv(EnvEgressURL, "http://"+l.Addr().String()+"/egress")
		t.Setenv(EnvEgressToken, tc.token)
		dial, err := upstream("/nonexistent.sock")
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := os.LookupEnv(EnvEgressToken); ok {
			t.Errorf("the token is still in the environment: %q", v)
		}
		rl, err := relay("127.0.0.1:0", dial)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", rl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET http://index.example/simple/ HTTP/1.1\r\nHost: index.example\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if got := fmt.Sprint(resp.StatusCode); got != tc.want {
			t.Errorf("token %s: %s %q, want %s", tc.token, got, body, tc.want)
		}
		if tc.want == "200" && string(body) != "proxy saw http://index.example/simple/" {
			t.Errorf("through the gateway: %q", body)
		}
		if tc.want == "502" && !strings.Contains(string(body), "401") {
			t.Errorf("a refused token: %q, want the gateway's 401 named", body)
		}
		c.Close()
		rl.Close()
	}
}

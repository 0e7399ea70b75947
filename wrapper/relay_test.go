package wrapper

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
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
	l, err := relay("127.0.0.1:0", sock)
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
	l2, err := relay("127.0.0.1:0", filepath.Join(t.TempDir(), "none.sock"))
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

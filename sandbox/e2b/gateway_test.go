package e2b_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/sandbox/e2b"
	"github.com/testfirst-app/testfirst/wrapper"
)

// TestGateway: a run's token reaches its proxy's socket and only while the
// run holds it; another token, none, or a request without the upgrade is
// refused before any socket is touched.
func TestGateway(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "p.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, strings.NewReader("proxy here\n")) }()
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := e2b.NewGateway("http://" + l.Addr().String() + "/egress")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gw}
	go srv.Serve(l)
	defer srv.Close()
	token, release := gw.Register(sock)

	ask := func(upgrade, auth string) (int, string) {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		req, _ := http.NewRequest("GET", gw.URL(), nil)
		if upgrade != "" {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", upgrade)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Write(c)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			return resp.StatusCode, ""
		}
		line, _ := br.ReadString('\n')
		return resp.StatusCode, line
	}
	if code, line := ask(wrapper.EgressUpgrade, "Bearer "+token); code != 101 || line != "proxy here\n" {
		t.Errorf("the run's token: %d %q", code, line)
	}
	for _, tc := range []struct {
		upgrade, auth string
		want          int
	}{
		{wrapper.EgressUpgrade, "Bearer " + strings.Repeat("0", 64), 401},
		{wrapper.EgressUpgrade, "", 401},
		{wrapper.EgressUpgrade, token, 401},
		{"", "Bearer " + token, 426},
		{"websocket", "Bearer " + token, 426},
	} {
		if code, _ := ask(tc.upgrade, tc.auth); code != tc.want {
			t.Errorf("upgrade %q auth %q: %d, want %d", tc.upgrade, tc.auth, code, tc.want)
		}
	}
	release()
	if code, _ := ask(wrapper.EgressUpgrade, "Bearer "+token); code != 401 {
		t.Errorf("a released token: %d, want 401", code)
	}
	if _, err := e2b.NewGateway("ftp://x/"); err == nil || !strings.Contains(err.Error(), "e2b.egress_url") {
		t.Errorf("a bad URL: %v", err)
	}
}

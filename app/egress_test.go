package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/agent/egressproxy"
	"github.com/testfirst-app/testfirst/sandbox/egress"
)

// loopbackIndex serves a package index on 127.0.0.1 and returns its URL
// by name (localhost), as an operator writes a mirror on this machine or
// a private network.
func loopbackIndex(t *testing.T) (byName string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "index saw %s %s", r.Method, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://localhost:" + port + "/simple/"
}

// getThrough asks for target through the proxy's unix socket, as the
// wrapper's relay does, and returns the status and body.
func getThrough(t *testing.T, socket, target string) (int, string) {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.WriteProxy(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// shortDir is a directory for sockets whose paths fit a unix socket's
// 108 bytes, which t.TempDir's, named after the test, may not.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "tf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// configFor loads the service's configuration from env, as serve does.
func configFor(t *testing.T, e map[string]string) Config {
	t.Helper()
	c, err := LoadConfig("", env(e))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEgressSettingsReachTheEnvironmentProxies: a package index on
// 127.0.0.1 written by name (localhost) is refused by the grading
// environments' proxies without egress_internal, and read with it; the
// peer uids setting decides who may use their sockets. Both through the
// real proxies the service makes (environmentProxies), on their sockets.
func TestEgressSettingsReachTheEnvironmentProxies(t *testing.T) {
	index := loopbackIndex(t)
	me := strconv.Itoa(os.Getuid())
	other := strconv.Itoa(os.Getuid() + 1)
	for _, tt := range []struct {
		name       string
		env        map[string]string
		wantStatus int
		wantBody   string
	}{
		{"no setting", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": me}, http.StatusForbidden, "a loopback address"},
		{"loopback allowed", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": me, "TESTFIRST_EGRESS_INTERNAL": "127.0.0.1,::1"}, http.StatusOK, "index saw GET /simple/"},
		{"loopback prefix allowed", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": me, "TESTFIRST_EGRESS_INTERNAL": "127.0.0.0/8 ::1"}, http.StatusOK, "index saw GET /simple/"},
		{"another network allowed", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": me, "TESTFIRST_EGRESS_INTERNAL": "10.0.0.0/8"}, http.StatusForbidden, "a loopback address"},
		{"uid not allowed", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": other, "TESTFIRST_EGRESS_INTERNAL": "127.0.0.1,::1"}, http.StatusForbidden, "uid " + me + " may not use this proxy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := configFor(t, tt.env)
			svc.PackageIndex = index
			// The fields serve's openSealedGrading passes.
			cfg := GradingConfig{PackageIndex: svc.PackageIndex, EgressDir: shortDir(t), EgressPeerUIDs: svc.EgressPeerUIDs, EgressInternal: svc.EgressInternal,
				EgressLog: func(e egress.Entry) { t.Logf("egress: %s %s%s %d %s", e.Method, e.Host, e.Path, e.Status, e.Denied) }}
			_, build, mirror, err := environmentProxies(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for name, p := range map[string]*egress.Proxy{"build": build, "mirror": mirror} {
				srv, err := p.Listen(cfg.EgressDir)
				if err != nil {
					t.Fatal(err)
				}
				status, body := getThrough(t, srv.Socket, index)
				if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
					t.Errorf("%s proxy: GET %s: %d %q, want %d and %q", name, index, status, body, tt.wantStatus, tt.wantBody)
				}
				srv.Close()
			}
		})
	}
}

// TestEgressSettingsReachTheAgentsProxies: the same for the agents'
// proxies, made as openAgents makes them (egressproxy.New with the
// settings' options), the index's host allowed by name as indexHosts
// allows it.
func TestEgressSettingsReachTheAgentsProxies(t *testing.T) {
	index := loopbackIndex(t)
	hosts, err := indexHosts(index)
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getuid())
	for _, tt := range []struct {
		name       string
		env        map[string]string
		wantStatus int
		wantBody   string
	}{
		{"no setting", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": me}, http.StatusForbidden, "a loopback address"},
		{"loopback allowed", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": me, "TESTFIRST_EGRESS_INTERNAL": "127.0.0.1,::1"}, http.StatusOK, "index saw GET /simple/"},
		{"uid not allowed", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": strconv.Itoa(os.Getuid() + 1), "TESTFIRST_EGRESS_INTERNAL": "127.0.0.1,::1"}, http.StatusForbidden, "uid " + me + " may not use this proxy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := configFor(t, tt.env)
			proxies := egressproxy.New(shortDir(t), nil, svc.EgressOptions()...)
			s, err := proxies.Serve(agent.EgressPolicy{Allow: hosts})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			status, body := getThrough(t, s.Socket(), index)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s: %d %q, want %d and %q", index, status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// peerHelperEnv, when set in a test binary's environment, makes
// TestPeerHelper send one model request to the socket it names and print
// what came back: the attack, run as another uid.
const peerHelperEnv = "TESTFIRST_EGRESS_PEER_HELPER_SOCKET"

// TestPeerHelper is not a test: it is the other local user of
// TestOtherUIDCannotSpendTheModelKey, run by it as uid 65534.
func TestPeerHelper(t *testing.T) {
	socket := os.Getenv(peerHelperEnv)
	if socket == "" {
		t.Skip("run by TestOtherUIDCannotSpendTheModelKey as another uid")
	}
	fmt.Println(modelRequest(socket))
}

// modelRequest sends a model request to the proxy's socket as a local
// process would and returns the status line, or the error that stopped it.
func modelRequest(socket string) string {
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	body := `{"model":"m","messages":[]}`
	fmt.Fprintf(c, "POST /model/m/v1/messages HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "read: " + err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.Status + " " + strings.TrimSpace(string(b))
}

// TestOtherUIDCannotSpendTheModelKey (security review, finding 3): a local
// user who is not the sandbox (uid 65534, nobody) opens the proxy's socket
// where the service makes it (the system's temporary directory, egress_dir
// unset) and asks for the model API: the real key must never be added to
// its request. The sandbox's uid (the container's root, uid 0 of the host)
// still reaches the model API through the same socket.
func TestOtherUIDCannotSpendTheModelKey(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another local uid needs root (the peer check itself is TestPeerUIDs)")
	}
	model := &keySeen{}
	up := httptest.NewServer(model)
	defer up.Close()
	p, err := New(nil, WithModel("m", up.URL, HeaderAPIKey, "sk-real-key"), WithLog(func(Entry) {}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// The test binary, where uid 65534 can run it.
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "egress-peer-helper-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	helper := filepath.Join(dir, "helper")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helper, "-test.run=^TestPeerHelper$", "-test.count=1")
	cmd.Env = []string{peerHelperEnv + "=" + s.Socket, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the helper as uid 65534: %v\n%s", err, out)
	}
	got := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	t.Logf("uid 65534 got: %s", got)
	if r := model.last(); r != nil {
		t.Errorf("uid 65534 reached the model API through the proxy's socket, with key %q (it got %q)", r.Header.Get("X-Api-Key"), got)
	}
	if strings.HasPrefix(got, "200") {
		t.Errorf("uid 65534 was answered %q, want refused", got)
	}

	// The honest shape: the sandbox's uid, 0, is served.
	if got := modelRequest(s.Socket); !strings.HasPrefix(got, "200") {
		t.Errorf("uid 0 (the sandbox's root) got %q, want the model's answer", got)
	}
	if r := model.last(); r == nil || r.Header.Get("X-Api-Key") != "sk-real-key" {
		t.Errorf("uid 0's request did not reach the model API with the key: %v", r)
	}
}

// TestPeerUIDs: the kernel's word on who connected decides, whatever the
// file modes let through (root, here, passes them all): a process of a uid
// not allowed gets 403 and a logged refusal, and nothing reaches the model
// API; the allowed uid is served. The socket's directory is the service's
// alone, and the socket its too when only its uid may connect.
func TestPeerUIDs(t *testing.T) {
	model := &keySeen{}
	up := httptest.NewServer(model)
	defer up.Close()
	me := os.Getuid()
	rec := &recorder{}
	p, err := New(nil, WithModel("m", up.URL, HeaderAPIKey, "sk-real-key"), WithLog(rec.log), WithPeerUIDs(me+1))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := modelRequest(s.Socket)
	if want := fmt.Sprintf("403 Forbidden egress proxy: uid %d may not use this proxy", me); !strings.HasPrefix(got, want) {
		t.Errorf("a uid not allowed got %q, want %q...", got, want)
	}
	if r := model.last(); r != nil {
		t.Errorf("a uid not allowed reached the model API with key %q", r.Header.Get("X-Api-Key"))
	}
	s.Close()
	if e := rec.all(); len(e) != 1 || e[0].Status != 403 || e[0].Denied != fmt.Sprintf("peer uid %d not allowed", me) {
		t.Errorf("log = %+v, want the refused peer", e)
	}

	p, err = New(nil, WithModel("m", up.URL, HeaderAPIKey, "sk-real-key"), WithLog(func(Entry) {}), WithPeerUIDs(me))
	if err != nil {
		t.Fatal(err)
	}
	s, err = p.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := modelRequest(s.Socket); !strings.HasPrefix(got, "200") {
		t.Errorf("the allowed uid got %q", got)
	}
	for path, want := range map[string]os.FileMode{filepath.Dir(s.Socket): 0o700, s.Socket: 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %o", path, st.Mode(), err, want)
		}
	}
	if _, err := New(nil, WithModel("m", up.URL, HeaderAPIKey, "k"), WithPeerUIDs()); err == nil {
		t.Error("a proxy no uid may use was made")
	}
}

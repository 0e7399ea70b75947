package egress

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// keySeen is a fake model API that records the requests it got.
type keySeen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (k *keySeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, r.Clone(r.Context()))
	k.mu.Unlock()
	io.Copy(io.Discard, r.Body)
	fmt.Fprintf(w, "model saw %s %s", r.Method, r.URL.Path)
}

func (k *keySeen) last() *http.Request {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.reqs) == 0 {
		return nil
	}
	return k.reqs[len(k.reqs)-1]
}

// raw sends one HTTP request written by hand to the proxy's socket, as the
// relay would carry it, and returns the answer.
func raw(t *testing.T, s *Server, req string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("unix", s.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("answer to %q: %v", req, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// TestModelRoute: /model/<name> reaches the model API with the real key in
// place of the placeholder the sandbox sent, as an origin-form request (a
// client that bypasses the proxy for 127.0.0.1) and as a proxy request for
// the relay's own address; a model API not configured is refused.
func TestModelRoute(t *testing.T) {
	anth, open := &keySeen{}, &keySeen{}
	a := httptest.NewServer(anth)
	defer a.Close()
	o := httptest.NewServer(open)
	defer o.Close()
	index := upstream(t, false)
	_, s, rec := serve(t, []string{hostOf(t, index)},
		WithModel("anthropic", a.URL+"/base/", HeaderAPIKey, "sk-real-anthropic"),
		WithModel("openai", o.URL, HeaderBearer, "sk-real-openai"),
		WithBodyKept(8))

	body := `{"model":"m","messages":[]}`
	resp, got := raw(t, s, "POST /model/anthropic/v1/messages?beta=1 HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nX-Api-Key: placeholder\r\n"+
		"Authorization: Bearer placeholder\r\nContent-Length: "+fmt.Sprint(len(body))+"\r\nConnection: close\r\n\r\n"+body)
	if resp.StatusCode != 200 || got != "model saw POST /base/v1/messages" {
		t.Fatalf("origin-form model request: %d %q", resp.StatusCode, got)
	}
	r := anth.last()
	if r.Header.Get("X-Api-Key") != "sk-real-anthropic" || r.Header.Get("Authorization") != "" || r.URL.RawQuery != "beta=1" {
		t.Errorf("the model API got key %q, authorization %q, query %q: want the real key only", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), r.URL.RawQuery)
	}

	resp, got = raw(t, s, "POST http://127.0.0.1:3128/model/openai/v1/responses HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nAuthorization: Bearer placeholder\r\n"+
		"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
	if resp.StatusCode != 200 || got != "model saw POST /v1/responses" {
		t.Fatalf("proxy-form model request: %d %q", resp.StatusCode, got)
	}
	if got := open.last().Header.Get("Authorization"); got != "Bearer sk-real-openai" {
		t.Errorf("bearer model API got Authorization %q", got)
	}

	resp, _ = raw(t, s, "GET /model/gemini/v1/models HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a model API not configured: %d, want 403", resp.StatusCode)
	}
	// The model route is the relay's own address only: another host's
	// /model/ path is an ordinary request, refused by the allowlist.
	resp, _ = raw(t, s, "GET http://evil.example/model/anthropic/v1/messages HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("/model/ on another host: %d, want 403", resp.StatusCode)
	}

	s.Close()
	entries := rec.all()
	if len(entries) != 4 {
		t.Fatalf("log = %+v, want 4 entries", entries)
	}
	slices.SortStableFunc(entries, func(a, b Entry) int {
		return cmp.Or(strings.Compare(a.Denied, b.Denied), strings.Compare(a.Model, b.Model))
	})
	e := entries[0]
	if e.Model != "anthropic" || e.Host != hostOf(t, a) || e.Path != "/base/v1/messages?beta=1" || e.Status != 200 ||
		e.BytesIn != int64(len(body)) || e.BytesOut == 0 || string(e.Body) != body[:8] || e.Denied != "" {
		t.Errorf("model entry = %+v", e)
	}
	for _, e := range entries {
		if bytes.Contains([]byte(fmt.Sprintf("%+v", e)), []byte("sk-real")) {
			t.Errorf("the log holds the key: %+v", e)
		}
	}
	if entries[1].Denied != "" || entries[1].Model != "openai" || entries[2].Denied != "host not allowed" || entries[3].Denied != "model API not allowed" {
		t.Errorf("refusals logged as %q, %q", entries[2].Denied, entries[3].Denied)
	}
}

// TestGitHubAlwaysRefused: GitHub's hosts and the configured Enterprise
// host are refused even when the allowlist names them, by CONNECT and by
// plain HTTP; a model API on GitHub is refused at start.
func TestGitHubAlwaysRefused(t *testing.T) {
	up := upstream(t, false)
	hosts := []string{"github.com:443", "api.github.com:443", "codeload.github.com:443", "raw.githubusercontent.com:443",
		"objects.githubusercontent.com:443", "ghe.corp.example:443", "api.ghe.corp.example:443", "GitHub.com:443", "github.com.:443"}
	c, s, rec := serve(t, append([]string{hostOf(t, up), "*.github.com:443", "github.com:80"}, hosts...), WithGitHubHost("ghe.corp.example"))
	for _, h := range hosts {
		resp, _ := raw(t, s, "CONNECT "+h+" HTTP/1.1\r\nHost: "+h+"\r\n\r\n")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("CONNECT %s: %d, want 403", h, resp.StatusCode)
		}
	}
	resp, err := c.Get("http://github.com/testfirst-app/testfirst.git/info/refs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET http://github.com/: %d, want 403", resp.StatusCode)
	}
	// The proxy still forwards what it may.
	resp, err = c.Get(up.URL + "/simple/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("an allowed host beside GitHub's: %v %v", resp, err)
	}
	resp.Body.Close()
	n := 0
	for _, e := range rec.all() {
		if e.Denied == "github" {
			n++
		}
	}
	if n != len(hosts)+1 {
		t.Errorf("%d requests logged as refused for GitHub, want %d", n, len(hosts)+1)
	}
	if _, err := New(nil, WithModel("m", "https://api.github.com", HeaderBearer, "k")); err == nil || !strings.Contains(err.Error(), "GitHub") {
		t.Errorf("a model API on GitHub: %v, want refused", err)
	}
}

// TestAllowlistPatterns: "*.domain:port" allows the names below domain on
// that port, nothing else.
func TestAllowlistPatterns(t *testing.T) {
	p, err := New([]string{"*.npmjs.org:443", "pypi.org:443"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"registry.npmjs.org:443": true, "a.b.npmjs.org:443": true, "npmjs.org:443": false, "registry.npmjs.org:80": false,
		"evilnpmjs.org:443": false, "pypi.org:443": true, "pypi.org:80": false, "files.pythonhosted.org:443": false,
	} {
		if got := p.allows(host); got != want {
			t.Errorf("allows(%s) = %v, want %v", host, got, want)
		}
	}
	for _, bad := range []string{"pypi.org", "*.:443", "a/b:443", "*:443"} {
		if _, err := New([]string{bad}); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

// TestRequestSizeBounds: a body past the bound is answered 413 and never
// reaches upstream, with or without a Content-Length; a tunnel is cut once
// more than its bound went up; a header past its bound is refused.
func TestRequestSizeBounds(t *testing.T) {
	var hits int
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d", n)
	}))
	defer up.Close()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(io.Discard, c) }()
		}
	}()
	c, s, rec := serve(t, []string{hostOf(t, up), echo.Addr().String()}, WithMaxRequestBytes(1000, 4000))

	resp, err := c.Post(up.URL+"/upload", "text/plain", strings.NewReader(strings.Repeat("x", 1000)))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a body at the bound: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Post(up.URL+"/upload", "text/plain", strings.NewReader(strings.Repeat("x", 1001)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body past the bound: %d, want 413", resp.StatusCode)
	}
	// Chunked: no Content-Length to judge by.
	resp, _ = raw(t, s, "POST "+up.URL+"/upload HTTP/1.1\r\nHost: "+hostOf(t, up)+"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"+
		"7d0\r\n"+strings.Repeat("y", 2000)+"\r\n0\r\n\r\n")
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body past the bound: %d, want 413", resp.StatusCode)
	}
	mu.Lock()
	if hits != 1 {
		t.Errorf("upstream got %d requests, want only the one within the bound", hits)
	}
	mu.Unlock()

	resp, _ = raw(t, s, "GET "+up.URL+"/ HTTP/1.1\r\nHost: "+hostOf(t, up)+"\r\nX-Big: "+strings.Repeat("h", 100<<10)+"\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a header past the bound: %d, want 431", resp.StatusCode)
	}

	conn, err := net.Dial("unix", s.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", echo.Addr(), echo.Addr())
	br := bufio.NewReader(conn)
	cresp, err := http.ReadResponse(br, nil)
	if err != nil || cresp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", cresp, err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	chunk := bytes.Repeat([]byte("z"), 1000)
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		_, werr = conn.Write(chunk)
		time.Sleep(time.Millisecond)
	}
	if werr == nil {
		if _, err := br.ReadByte(); err == nil {
			t.Error("the tunnel stayed open past its bound")
		}
	}
	var cut bool
	for i := 0; i < 200 && !cut; i++ {
		for _, e := range rec.all() {
			cut = cut || e.Method == "CONNECT" && e.Denied == "tunnel too large"
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !cut {
		t.Errorf("log = %+v, want the tunnel cut as too large", rec.all())
	}
}

// TestNoTCPListener: serving the proxy and forwarding through it opens no
// listening TCP socket in this process, on any address: the unix socket is
// its only way in.
func TestNoTCPListener(t *testing.T) {
	before := tcpListeners(t)
	p, err := New([]string{"pypi.org:443"}, WithModel("m", "https://api.example", HeaderAPIKey, "k"), WithPeerUIDs(os.Getuid()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, _ := raw(t, s, "CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT github.com: %d", resp.StatusCode)
	}
	st, err := os.Stat(s.Socket)
	if err != nil || st.Mode()&os.ModeSocket == 0 || filepath.Base(s.Socket) != "egress.sock" {
		t.Errorf("the proxy's socket %s: %v %v", s.Socket, st, err)
	}
	if after := tcpListeners(t); len(after) != len(before) {
		t.Errorf("listening TCP sockets of this process: %d before the proxy, %d with it", len(before), len(after))
	}
}

// tcpListeners returns the inodes of the listening TCP sockets (IPv4 and
// IPv6) that this process holds open.
func tcpListeners(t *testing.T) map[string]bool {
	t.Helper()
	listening := map[string]bool{}
	for _, f := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && fields[3] == "0A" {
				listening[fields[9]] = true
			}
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if ino, ok := strings.CutPrefix(l, "socket:["); ok && err == nil {
			if ino = strings.TrimSuffix(ino, "]"); listening[ino] {
				mine[ino] = true
			}
		}
	}
	return mine
}

// TestModelStreams: a model API's streamed answer reaches the client as it
// comes, not once the upstream is done (agent CLIs read server-sent
// events).
func TestModelStreams(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: last\n\n")
	}))
	defer up.Close()
	defer close(release)
	_, s, _ := serve(t, []string{"pypi.org:443"}, WithModel("m", up.URL, HeaderAPIKey, "k"))
	c, err := net.Dial("unix", s.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /model/m/v1/messages HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nContent-Length: 0\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the model API still streams: %v", err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first event: %q, %v (a proxy that buffers the answer blocks here)", line, err)
	}
}

// TestModelRouteRefusesOtherMethodsAndPaths (security review, finding 6):
// the model route adds the real key, so it forwards only the requests each
// provider's API needs for an agent: the methods and paths below, written
// plainly. Anything else, a dot segment, an encoded slash or dot, a double
// slash, another method, another endpoint of the API, is refused with 403
// and never reaches the model API.
func TestModelRouteRefusesOtherMethodsAndPaths(t *testing.T) {
	anth, open := &keySeen{}, &keySeen{}
	a := httptest.NewServer(anth)
	defer a.Close()
	o := httptest.NewServer(open)
	defer o.Close()
	_, s, rec := serve(t, nil,
		WithModel("anthropic", a.URL+"/v1base", HeaderAPIKey, "sk-real-anthropic"),
		WithModel("openai", o.URL, HeaderBearer, "sk-real-openai"))
	send := func(method, target string) (int, string) {
		resp, body := raw(t, s, method+" "+target+" HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		return resp.StatusCode, body
	}
	for _, attack := range []struct{ method, target string }{
		{"DELETE", "/model/anthropic/../../admin/x"},
		{"POST", "/model/anthropic/v1/messages/../../admin/x"},
		{"POST", "/model/anthropic/v1/%2e%2e/admin"},
		{"POST", "/model/anthropic/v1/messages%2F..%2F..%2Fadmin"},
		{"POST", "/model/anthropic/v1/messages%2fcount_tokens"},
		{"POST", "/model/anthropic//v1/messages"},
		{"POST", "/model/anthropic/v1//messages"},
		{"POST", "/model/anthropic/v1/messages/"},
		{"POST", "/model/anthropic/./v1/messages"},
		{"POST", `/model/anthropic/v1\messages`},
		{"DELETE", "/model/anthropic/v1/messages"},
		{"PUT", "/model/anthropic/v1/messages"},
		{"GET", "/model/anthropic/v1/messages"},
		{"POST", "/model/anthropic/v1/files"},
		{"DELETE", "/model/anthropic/v1/files/file_1"},
		{"GET", "/model/anthropic/v1/organizations/api_keys"},
		{"POST", "/model/anthropic/v1/responses"},
		{"POST", "/model/anthropic"},
		{"POST", "/model/anthropic/"},
		{"DELETE", "/model/openai/v1/models/ft:gpt-4o:org::abc"},
		{"POST", "/model/openai/v1/files"},
		{"POST", "/model/openai/v1/messages"},
		{"GET", "/model/openai/v1/models/../../dashboard"},
		{"GET", "/model/openai/v1/models/a%2Fb"},
		{"DELETE", "http://127.0.0.1:3128/model/openai/../admin"},
	} {
		code, body := send(attack.method, attack.target)
		if code != http.StatusForbidden && code != http.StatusBadRequest {
			t.Errorf("%s %s: %d %q, want refused", attack.method, attack.target, code, body)
		} else if code == http.StatusForbidden && !strings.Contains(body, "egress proxy: model API") {
			t.Errorf("%s %s: refused with %q, want the proxy's reason", attack.method, attack.target, body)
		}
	}
	for _, k := range []*keySeen{anth, open} {
		k.mu.Lock()
		for _, r := range k.reqs {
			t.Errorf("the model API received %s %s with the key", r.Method, r.URL.RequestURI())
		}
		k.mu.Unlock()
	}

	// The honest shape: what the CLIs and SDKs send still goes through.
	for _, ok := range []struct{ method, target, want string }{
		{"POST", "/model/anthropic/v1/messages?beta=true", "model saw POST /v1base/v1/messages"},
		{"POST", "/model/anthropic/v1/messages/count_tokens?beta=true", "model saw POST /v1base/v1/messages/count_tokens"},
		{"GET", "/model/anthropic/v1/models", "model saw GET /v1base/v1/models"},
		{"GET", "/model/anthropic/v1/models/claude-sonnet-4-5", "model saw GET /v1base/v1/models/claude-sonnet-4-5"},
		{"POST", "/model/openai/v1/responses", "model saw POST /v1/responses"},
		{"POST", "/model/openai/v1/chat/completions", "model saw POST /v1/chat/completions"},
		{"GET", "/model/openai/v1/models", "model saw GET /v1/models"},
		{"GET", "/model/openai/v1/models/ft:gpt-4o-mini:org::x1", "model saw GET /v1/models/ft:gpt-4o-mini:org::x1"},
		{"POST", "http://127.0.0.1:3128/model/openai/v1/responses", "model saw POST /v1/responses"},
	} {
		if code, body := send(ok.method, ok.target); code != 200 || body != ok.want {
			t.Errorf("%s %s: %d %q, want 200 %q", ok.method, ok.target, code, body, ok.want)
		}
	}
	s.Close()
	for _, e := range rec.all() {
		if e.Denied != "" && e.Status != http.StatusForbidden && e.Status != http.StatusBadRequest {
			t.Errorf("refusal logged as %+v", e)
		}
	}
}

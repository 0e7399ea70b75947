package fakee2b

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/testfirst-app/testfirst/sandbox/e2b"
)

// Domain is the fake's domain: the API at api.Domain, a sandbox's daemon
// at 49983-<id>.Domain.
const Domain = "e2b.test"

// LabelFake marks the fake's containers.
const LabelFake = "app.testfirst.fakee2b"

// Request is one request the fake received.
type Request struct {
	Method string
	Host   string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	Status int
	// Sandbox is true for a request to a sandbox's daemon: what it
	// carries reaches the sandbox.
	Sandbox bool
}

// Server is the fake.
type Server struct {
	srv    *httptest.Server
	docker *client.Client
	key    string

	mu        sync.Mutex
	templates map[string]string
	sandboxes map[string]*box
	requests  []Request
	faults    map[string][]fault
	created   []e2b.NewSandbox
	started   map[string]int
	exposed   []string
}

type box struct {
	id, template, token, container string
	meta                           map[string]string
	started, endAt                 time.Time
	timer                          *time.Timer
	net                            *links
}

type fault struct {
	status     int
	retryAfter string
}

// New starts the fake on 127.0.0.1, accepting the API key key, with
// sandboxes on the Docker engine of docker.
func New(docker *client.Client, key string) *Server {
	s := &Server{docker: docker, key: key, templates: map[string]string{}, sandboxes: map[string]*box{}, faults: map[string][]fault{}, started: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close kills every sandbox and stops the fake.
func (s *Server) Close() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.sandboxes))
	for id := range s.sandboxes {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.kill(id)
	}
	s.srv.Close()
}

// AddTemplate makes template name create sandboxes of the Docker image.
func (s *Server) AddTemplate(name, image string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.templates[name] = image
}

// Client returns a client of the fake with key: every host it asks for
// is the fake's listener.
func (s *Server) Client(key string) *e2b.Client { return ClientAt(s.Addr(), key) }

// Addr is the fake's listener, for ClientAt in another process.
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// ClientAt returns a client of the fake listening at addr with key, as
// Client does: for a process other than the fake's.
func ClientAt(addr, key string) *e2b.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	return &e2b.Client{APIURL: "http://api." + Domain, Domain: Domain, EnvdScheme: "http", Key: key, HTTP: &http.Client{Transport: tr}}
}

// FailNext answers the next n requests whose path is p (e.g.
// "/sandboxes") with status, and Retry-After when set.
func (s *Server) FailNext(p string, n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[p] = append(s.faults[p], fault{status, retryAfter})
	}
}

// Requests returns every request so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Created returns the bodies of every sandbox creation, in order.
func (s *Server) Created() []e2b.NewSandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]e2b.NewSandbox(nil), s.created...)
}

// Running lists the ids of the sandboxes alive.
func (s *Server) Running() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.sandboxes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Started returns the ids of the sandboxes a process was started in
// (its start event sent) that are still alive.
func (s *Server) Started() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.sandboxes {
		if s.started[id] > 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Container returns the Docker container of sandbox id.
func (s *Server) Container(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.sandboxes[id]; b != nil {
		return b.container
	}
	return ""
}

// Die kills sandbox id's container as a dead VM would end: its commands'
// streams break, and E2B then knows the sandbox no more.
func (s *Server) Die(id string) { s.kill(id) }

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(c int) {
	if r.status == 0 {
		r.status = c
	}
	r.ResponseWriter.WriteHeader(c)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{ResponseWriter: w}
	host, _, _ := strings.Cut(r.Host, ":")
	sandboxID, isEnvd := strings.CutPrefix(strings.TrimSuffix(host, "."+Domain), strconv.Itoa(e2b.EnvdPort)+"-")
	isEnvd = isEnvd && strings.HasSuffix(host, "."+Domain)
	defer func() {
		kept := body
		if len(kept) > 1<<20 {
			kept = kept[:1<<20]
		}
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(),
			Body: append([]byte(nil), kept...), Status: rec.status, Sandbox: isEnvd})
		s.mu.Unlock()
	}()
	s.mu.Lock()
	if fs := s.faults[r.URL.Path]; len(fs) > 0 {
		f := fs[0]
		s.faults[r.URL.Path] = fs[1:]
		s.mu.Unlock()
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		apiErr(rec, f.status, http.StatusText(f.status))
		return
	}
	s.mu.Unlock()
	if isEnvd {
		s.envd(rec, r, sandboxID)
		return
	}
	if host != "api."+Domain {
		apiErr(rec, http.StatusNotFound, "unknown host "+host)
		return
	}
	if r.Header.Get("X-API-Key") != s.key {
		apiErr(rec, http.StatusUnauthorized, "Invalid API key, it must start with e2b_ prefix and be followed by 40 hex characters")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/sandboxes":
		s.create(rec, r, body)
	case r.Method == http.MethodGet && r.URL.Path == "/v2/sandboxes":
		s.list(rec, r)
	case r.Method == http.MethodDelete && len(parts) == 2 && parts[0] == "sandboxes":
		if !s.kill(parts[1]) {
			apiErr(rec, http.StatusNotFound, fmt.Sprintf("sandbox %q not found", parts[1]))
			return
		}
		rec.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "sandboxes" && parts[2] == "timeout":
		var t struct {
			Timeout *int `json:"timeout"`
		}
		if json.Unmarshal(body, &t) != nil || t.Timeout == nil || *t.Timeout < 0 {
			apiErr(rec, http.StatusBadRequest, "timeout: want a non-negative integer")
			return
		}
		if !s.setTimeout(parts[1], time.Duration(*t.Timeout)*time.Second) {
			apiErr(rec, http.StatusNotFound, fmt.Sprintf("sandbox %q not found", parts[1]))
			return
		}
		rec.WriteHeader(http.StatusNoContent)
	default:
		apiErr(rec, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
}

// apiErr writes E2B's Error body.
func apiErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": status, "message": msg})
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, body []byte) {
	var n e2b.NewSandbox
	if err := json.Unmarshal(body, &n); err != nil || n.TemplateID == "" {
		apiErr(w, http.StatusBadRequest, fmt.Sprintf("request body: want NewSandbox JSON with templateID: %v", err))
		return
	}
	s.mu.Lock()
	img, ok := s.templates[n.TemplateID]
	s.created = append(s.created, n)
	s.mu.Unlock()
	if !ok {
		apiErr(w, http.StatusNotFound, fmt.Sprintf("template '%s' not found", n.TemplateID))
		return
	}
	timeout := time.Duration(n.Timeout) * time.Second
	if n.Timeout == 0 {
		timeout = 15 * time.Second
	}
	b := &box{id: "i" + randomHex(10), template: n.TemplateID, token: randomHex(16), meta: n.Metadata, started: time.Now()}
	ctx := r.Context()
	ports := s.reachable(n)
	nl, err := listen(ports)
	if err != nil {
		apiErr(w, http.StatusInternalServerError, "the sandbox's network: "+err.Error())
		return
	}
	b.net = nl
	c, err := s.docker.ContainerCreate(ctx, &container.Config{Image: img, Entrypoint: []string{"sleep", "infinity"}, User: "root",
		Labels: map[string]string{LabelFake: b.id}, Env: envList(n.EnvVars)},
		&container.HostConfig{NetworkMode: "none", AutoRemove: true, Binds: []string{nl.dir + ":" + socketDir}}, nil, nil, "fakee2b-"+b.id)
	if err != nil {
		nl.close()
		apiErr(w, http.StatusInternalServerError, "create the sandbox: "+err.Error())
		return
	}
	if err := s.docker.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		nl.close()
		s.docker.ContainerRemove(context.WithoutCancel(ctx), c.ID, container.RemoveOptions{Force: true})
		apiErr(w, http.StatusInternalServerError, "start the sandbox: "+err.Error())
		return
	}
	if len(ports) > 0 {
		if nl.forwarder, err = s.startForwarder(ctx, c.ID, ports); err != nil {
			nl.close()
			s.docker.ContainerRemove(context.WithoutCancel(ctx), c.ID, container.RemoveOptions{Force: true})
			apiErr(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	b.container = c.ID
	s.mu.Lock()
	s.sandboxes[b.id] = b
	s.mu.Unlock()
	s.setTimeout(b.id, timeout)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(e2b.Sandbox{TemplateID: n.TemplateID, SandboxID: b.id, ClientID: "6532622b", EnvdVersion: "0.2.0", EnvdAccessToken: b.token, Domain: Domain})
}

func envList(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// setTimeout makes sandbox id end d from now, as E2B does.
func (s *Server) setTimeout(id string, d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.sandboxes[id]
	if b == nil {
		return false
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.endAt = time.Now().Add(d)
	b.timer = time.AfterFunc(d, func() { s.kill(id) })
	return true
}

// kill removes sandbox id's container; false when there is none.
func (s *Server) kill(id string) bool {
	s.mu.Lock()
	b := s.sandboxes[id]
	delete(s.sandboxes, id)
	s.mu.Unlock()
	if b == nil {
		return false
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.docker.ContainerRemove(ctx, b.container, container.RemoveOptions{Force: true})
	b.net.close()
	return true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	want, err := url.ParseQuery(q.Get("metadata"))
	if err != nil {
		apiErr(w, http.StatusBadRequest, "metadata: "+err.Error())
		return
	}
	limit := 100
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 {
		limit = l
	}
	s.mu.Lock()
	var all []e2b.Listed
	for _, b := range s.sandboxes {
		ok := true
		for k := range want {
			if b.meta[k] != want.Get(k) {
				ok = false
			}
		}
		if ok {
			all = append(all, e2b.Listed{TemplateID: b.template, SandboxID: b.id, StartedAt: b.started, EndAt: b.endAt, State: "running", Metadata: b.meta})
		}
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].SandboxID < all[j].SandboxID })
	if next := q.Get("nextToken"); next != "" {
		i := sort.Search(len(all), func(i int) bool { return all[i].SandboxID > next })
		all = all[i:]
	}
	if len(all) > limit {
		all = all[:limit]
		w.Header().Set("X-Next-Token", all[limit-1].SandboxID)
	}
	if all == nil {
		all = []e2b.Listed{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(all)
}

// envdUser reads the Basic user; envd's default user otherwise.
func envdUser(r *http.Request) string {
	if u := r.URL.Query().Get("username"); u != "" {
		return u
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Basic "); ok {
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			u, _, _ := strings.Cut(string(b), ":")
			return u
		}
	}
	return "user"
}

func (s *Server) envd(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	b := s.sandboxes[id]
	s.mu.Unlock()
	if b == nil {
		// E2B's edge answers for a sandbox it does not know.
		w.WriteHeader(http.StatusBadGateway)
		json.NewEncoder(w).Encode(map[string]any{"sandboxId": id, "message": "The sandbox was not found", "code": 502})
		return
	}
	if r.Header.Get("X-Access-Token") != b.token {
		connectErr(w, http.StatusUnauthorized, "unauthenticated", "invalid access token")
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/process.Process/Start":
		s.start(w, r, b)
	case r.Method == http.MethodPost && r.URL.Path == "/files":
		s.upload(w, r, b)
	case r.Method == http.MethodGet && r.URL.Path == "/files":
		s.download(w, r, b)
	default:
		connectErr(w, http.StatusNotFound, "unimplemented", r.URL.Path+" is not served")
	}
}

func connectErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}

func (s *Server) start(w http.ResponseWriter, r *http.Request, b *box) {
	if r.Header.Get("Content-Type") != "application/connect+json" {
		connectErr(w, http.StatusUnsupportedMediaType, "invalid_argument", "want application/connect+json")
		return
	}
	_, msg, err := e2b.ReadEnvelope(r.Body)
	var req e2b.StartRequest
	if err == nil {
		err = json.Unmarshal(msg, &req)
	}
	if err != nil || req.Process.Cmd == "" {
		connectErr(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("want a process.StartRequest with a cmd: %v", err))
		return
	}
	ctx := r.Context()
	ex, err := s.docker.ContainerExecCreate(ctx, b.container, container.ExecOptions{Cmd: append([]string{req.Process.Cmd}, req.Process.Args...),
		Env: envList(req.Process.Envs), WorkingDir: req.Process.Cwd, User: envdUser(r), AttachStdout: true, AttachStderr: true})
	if err != nil {
		connectErr(w, http.StatusBadGateway, "unavailable", err.Error())
		return
	}
	att, err := s.docker.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		connectErr(w, http.StatusBadGateway, "unavailable", err.Error())
		return
	}
	defer att.Close()
	w.Header().Set("Content-Type", "application/connect+json")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	send := func(ev any) {
		data, _ := json.Marshal(map[string]any{"event": ev})
		mu.Lock()
		defer mu.Unlock()
		e2b.WriteEnvelope(w, 0, data)
		w.(http.Flusher).Flush()
	}
	insp, _ := s.docker.ContainerExecInspect(ctx, ex.ID)
	send(map[string]any{"start": map[string]any{"pid": insp.Pid}})
	s.mu.Lock()
	s.started[b.id]++
	s.mu.Unlock()
	stop := make(chan struct{})
	interval := 30 * time.Second
	if v, err := strconv.Atoi(r.Header.Get("Keepalive-Ping-Interval")); err == nil && v > 0 {
		interval = time.Duration(v) * time.Second
	}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				send(map[string]any{"keepalive": map[string]any{}})
			case <-stop:
				return
			}
		}
	}()
	_, err = stdcopy.StdCopy(streamWriter{send, "stdout"}, streamWriter{send, "stderr"}, att.Reader)
	close(stop)
	insp, ierr := s.docker.ContainerExecInspect(context.WithoutCancel(ctx), ex.ID)
	if err != nil || ierr != nil || insp.Running {
		// The VM is gone: the stream breaks without an end.
		panic(http.ErrAbortHandler)
	}
	s.mu.Lock()
	alive := s.sandboxes[b.id] != nil
	s.mu.Unlock()
	if !alive {
		panic(http.ErrAbortHandler)
	}
	status := fmt.Sprintf("exit status %d", insp.ExitCode)
	send(map[string]any{"end": map[string]any{"exitCode": insp.ExitCode, "exited": true, "status": status}})
	mu.Lock()
	e2b.WriteEnvelope(w, e2b.EndStream, []byte("{}"))
	mu.Unlock()
}

// streamWriter sends what it is given as data events of one stream, in
// pieces of at most 64 KiB.
type streamWriter struct {
	send func(any)
	name string
}

func (sw streamWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += 64 << 10 {
		end := min(off+64<<10, len(p))
		sw.send(map[string]any{"data": map[string]any{sw.name: p[off:end]}})
	}
	return len(p), nil
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request, b *box) {
	p := r.URL.Query().Get("path")
	if !path.IsAbs(p) || r.Header.Get("Content-Type") != "application/octet-stream" {
		apiErr(w, http.StatusBadRequest, "want an absolute path and an application/octet-stream body")
		return
	}
	if u := envdUser(r); u != "root" {
		apiErr(w, http.StatusUnauthorized, fmt.Sprintf("error looking up user '%s': this fake knows root only", u))
		return
	}
	data, _ := io.ReadAll(r.Body)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// The parents exist afterwards, as envd makes them.
	dir := strings.TrimPrefix(path.Dir(p), "/")
	var parents []string
	for d := dir; d != "." && d != ""; d = path.Dir(d) {
		parents = append([]string{d}, parents...)
	}
	for _, d := range parents {
		tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	}
	tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, "/"), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))})
	tw.Write(data)
	tw.Close()
	if err := s.docker.CopyToContainer(r.Context(), b.container, "/", &buf, container.CopyToContainerOptions{}); err != nil {
		apiErr(w, http.StatusInternalServerError, "write "+p+": "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode([]map[string]string{{"path": p, "name": path.Base(p), "type": "file"}})
}

func (s *Server) download(w http.ResponseWriter, r *http.Request, b *box) {
	p := r.URL.Query().Get("path")
	rc, _, err := s.docker.CopyFromContainer(r.Context(), b.container, p)
	if err != nil {
		apiErr(w, http.StatusNotFound, fmt.Sprintf("path '%s' does not exist", p))
		return
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil || h.Typeflag != tar.TypeReg {
		apiErr(w, http.StatusBadRequest, fmt.Sprintf("path '%s' is not a file", p))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	io.Copy(w, tr)
}

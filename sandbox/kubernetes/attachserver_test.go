package kubernetes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	criremotecommand "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// containerFunc plays the container's side of an attach: its stdin, stdout
// and stderr.
type containerFunc func(ctx context.Context, pod string, stdin io.Reader, stdout, stderr io.Writer) error

// attachServer is an API server's pods/attach endpoint on 127.0.0.1, on a
// real HTTP connection: WebSocket v5.channel.k8s.io served with
// k8s.io/streaming's wsstream (the library the API server's stream
// translator serves it with), and SPDY served by the kubelet's own handler
// (k8s.io/cri-streaming's ServeAttach). What the container does is
// container; the streams, their framing, the close of stdin and the status
// at the end are the protocol's.
type attachServer struct {
	t           *testing.T
	srv         *httptest.Server
	noWebSocket bool // answer WebSocket upgrades 400, as an old server would
	forbidden   bool // answer every attach 403, as RBAC without pods/attach would
	container   containerFunc

	mu       sync.Mutex
	requests []string // "protocol path?query" of each attach
}

var attachPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods/([^/]+)/attach$`)

func newAttachServer(t *testing.T, container containerFunc) *attachServer {
	a := &attachServer{t: t, container: container}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *attachServer) record(protocol string, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, fmt.Sprintf("%s %s %s?%s", protocol, r.Method, r.URL.Path, r.URL.RawQuery))
}

func (a *attachServer) Requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.requests...)
}

func (a *attachServer) serve(w http.ResponseWriter, r *http.Request) {
	m := attachPath.FindStringSubmatch(r.URL.Path)
	q := r.URL.Query()
	if m == nil || q.Get("container") != "sandbox" || q.Get("stdin") != "true" || q.Get("stdout") != "true" || q.Get("stderr") != "true" || q.Get("tty") == "true" {
		http.Error(w, "not an attach to the sandbox container with stdin, stdout and stderr: "+r.URL.String(), http.StatusBadRequest)
		return
	}
	pod := m[2]
	if a.forbidden {
		a.record("forbidden", r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"pods %q is forbidden: cannot create resource \"pods/attach\""}`, pod)
		return
	}
	if wsstream.IsWebSocketRequest(r) {
		if a.noWebSocket {
			a.record("refused-websocket", r)
			http.Error(w, "websocket not supported", http.StatusBadRequest)
			return
		}
		a.record("websocket", r)
		a.serveWebSocket(w, r, pod)
		return
	}
	a.record("spdy", r)
	criremotecommand.ServeAttach(w, r, attacherFunc(a.container), pod, "", "sandbox",
		&criremotecommand.Options{Stdin: true, Stdout: true, Stderr: true}, time.Minute, 10*time.Second,
		criremotecommand.SupportedStreamingProtocols)
}

// serveWebSocket serves the v5 channel protocol: channels 0 stdin, 1
// stdout, 2 stderr, 3 the status, 4 resize; v5 lets the client close stdin.
func (a *attachServer) serveWebSocket(w http.ResponseWriter, r *http.Request, pod string) {
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		"v5.channel.k8s.io": {Binary: true, Channels: []wsstream.ChannelType{
			wsstream.ReadChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.IgnoreChannel}},
	})
	conn.SetIdleTimeout(time.Minute)
	_, streams, err := conn.Open(w, r)
	if err != nil {
		a.t.Errorf("open websocket streams: %v", err)
		return
	}
	defer conn.Close()
	streams[1].Write([]byte{}) // the connection is established
	status := map[string]any{"metadata": map[string]any{}, "status": "Success"}
	if err := a.container(r.Context(), pod, streams[0], streams[1], streams[2]); err != nil {
		status = map[string]any{"metadata": map[string]any{}, "status": "Failure", "message": err.Error(), "reason": "InternalError", "code": 500}
	}
	b, _ := json.Marshal(status)
	streams[3].Write(b)
}

// attacherFunc is the kubelet's view of a container runtime's attach.
type attacherFunc containerFunc

func (f attacherFunc) AttachContainer(ctx context.Context, name, uid, container string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan criremotecommand.TerminalSize) error {
	defer out.Close()
	defer errw.Close()
	return f(ctx, name, in, out, errw)
}

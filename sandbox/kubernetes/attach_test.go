package kubernetes_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/testfirst-app/testfirst/sandbox/kubernetes"
)

// TestAttach streams a megabyte of random input through the attach and
// back out on stdout: the container's copy ends only when stdin is closed,
// so the input must reach its end, on WebSocket and on the SPDY fallback.
func TestAttach(t *testing.T) {
	for _, tt := range []struct {
		name        string
		noWebSocket bool
		want        []string
	}{
		{"websocket v5", false, []string{"websocket GET /api/v1/namespaces/sandboxes/pods/testfirst-p/attach?container=sandbox&stderr=true&stdin=true&stdout=true"}},
		{"spdy when websocket is refused", true, []string{
			"refused-websocket GET /api/v1/namespaces/sandboxes/pods/testfirst-p/attach?container=sandbox&stderr=true&stdin=true&stdout=true",
			"spdy POST /api/v1/namespaces/sandboxes/pods/testfirst-p/attach?container=sandbox&stderr=true&stdin=true&stdout=true",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAttachServer(t, func(ctx context.Context, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
				io.WriteString(stderr, "echo from "+pod+"\n")
				_, err := io.Copy(stdout, stdin)
				return err
			})
			srv.noWebSocket = tt.noWebSocket
			in := make([]byte, 1<<20)
			rand.Read(in)
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := kubernetes.NewAttacher(&rest.Config{Host: srv.srv.URL}).Attach(ctx, "sandboxes", "testfirst-p", bytes.NewReader(in), &out, &errOut)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), in) {
				t.Errorf("stdout has %d bytes, want the %d of stdin back", out.Len(), len(in))
			}
			if errOut.String() != "echo from testfirst-p\n" {
				t.Errorf("stderr = %q", errOut.String())
			}
			if got := srv.Requests(); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// A container that fails its attach is an error of the attach.
func TestAttachFailure(t *testing.T) {
	srv := newAttachServer(t, func(ctx context.Context, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		return io.ErrUnexpectedEOF
	})
	err := kubernetes.NewAttacher(&rest.Config{Host: srv.srv.URL}).Attach(context.Background(), "sandboxes", "testfirst-p", strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "attach to pod testfirst-p") || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("err = %v, want the pod and the container's error", err)
	}
}

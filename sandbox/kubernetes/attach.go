package kubernetes

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
)

// Attacher streams to and from the sandbox container of a running pod:
// stdin into the container's stdin, which is closed when stdin ends, and
// the container's stdout and stderr out until they end, when the container
// has exited. It returns an error when the stream could not be set up or
// broke; what the program did is not an error.
type Attacher interface {
	Attach(ctx context.Context, namespace, pod string, stdin io.Reader, stdout, stderr io.Writer) error
}

// executorAttacher attaches through the API server's pods/attach
// subresource with client-go's executors: WebSocket (protocol
// v5.channel.k8s.io, which can close stdin on its own) first, SPDY when the
// server refuses the WebSocket upgrade.
type executorAttacher struct {
	cfg *rest.Config
}

// NewAttacher returns the Attacher that speaks to the API server cfg names
// with cfg's credentials.
func NewAttacher(cfg *rest.Config) Attacher { return &executorAttacher{cfg: cfg} }

// attachURL is the pods/attach URL of pod's sandbox container, with every
// stream but a tty.
func attachURL(cfg *rest.Config, namespace, pod string) (*url.URL, error) {
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", cfg.Host, err)
	}
	u := *base
	u.Path = path.Join("/", u.Path, "api/v1/namespaces", namespace, "pods", pod, "attach")
	u.RawQuery = url.Values{"container": {ContainerName}, "stdin": {"true"}, "stdout": {"true"}, "stderr": {"true"}}.Encode()
	return &u, nil
}

func (a *executorAttacher) Attach(ctx context.Context, namespace, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
	u, err := attachURL(a.cfg, namespace, pod)
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(a.cfg, "GET", u.String())
	if err != nil {
		return fmt.Errorf("attach to pod %s: %w", pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(a.cfg, "POST", u)
	if err != nil {
		return fmt.Errorf("attach to pod %s: %w", pod, err)
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return fmt.Errorf("attach to pod %s: %w", pod, err)
	}
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr}); err != nil {
		return fmt.Errorf("attach to pod %s: %w", pod, err)
	}
	return nil
}

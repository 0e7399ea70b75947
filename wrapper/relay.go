package wrapper

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// Where the package index's proxy is reached inside a sandbox that may use
// it.
const (
	// ProxySocket is where the egress proxy's unix socket is mounted.
	ProxySocket = "/run/testfirst/egress.sock"
	// ProxyAddr is the loopback address the wrapper relays to ProxySocket;
	// pip and the tests name it as their proxy.
	ProxyAddr = "127.0.0.1:3128"
)

// relay accepts connections on addr and joins each to a fresh connection
// to the unix socket at socket, until the wrapper exits. Nothing else of
// the container's network is used: it has only loopback.
func relay(addr, socket string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("relay to the package index's proxy: listen on %s: %w", addr, err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go join(c, socket)
		}
	}()
	return l, nil
}

// join copies between c and a new connection to socket until both sides
// are done.
func join(c net.Conn, socket string) {
	defer c.Close()
	up, err := net.Dial("unix", socket)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\ntestfirst relay: the package index's proxy is not reachable: "+err.Error()+"\n")
		return
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
	}()
	io.Copy(c, up)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	wg.Wait()
}

// proxyEnv is the environment that sends HTTP clients to the relay.
func proxyEnv() []string {
	u := "http://" + ProxyAddr
	return []string{"http_proxy=" + u, "https_proxy=" + u, "HTTP_PROXY=" + u, "HTTPS_PROXY=" + u}
}

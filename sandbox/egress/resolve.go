package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// WithInternal lets the proxy reach these internal addresses (see
// internalKind) when an allowed name resolves to them: each an address
// ("10.1.2.3") or a prefix ("10.0.0.0/8"). An address written in the
// allowlist itself ("127.0.0.1:8080") or in a model API's URL is named
// already, on that port. Nothing else internal is reached: an allowed name
// that resolves to loopback, a private network, link-local (the cloud
// metadata service), ... is refused. New fails on what is neither an
// address nor a prefix.
func WithInternal(addrs ...string) Option {
	return func(p *Proxy) { p.internalSpec = append(p.internalSpec, addrs...) }
}

// metadataAddrs are cloud instance metadata services.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, most others
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// specialPrefixes are the other addresses that are nobody's public
// service: 0.0.0.0/8 reaches this host on Linux, the shared address space
// is a provider's inside (and holds a metadata service), fec0::/10 is
// IPv6's old private range. Documentation and benchmarking ranges are
// left alone: some resolvers answer with them for hosts they front.
var specialPrefixes = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// internalKind says what kind of internal address a is (loopback,
// private, link-local, metadata, ...), "" for a public one. An IPv6
// address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by
// the IPv4 one as well.
func internalKind(a netip.Addr) string {
	a = a.Unmap()
	for _, m := range metadataAddrs {
		if a == m {
			return "metadata"
		}
	}
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast or broadcast"
	}
	for _, s := range specialPrefixes {
		if s.prefix.Contains(a) {
			return s.kind
		}
	}
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a), netip.MustParsePrefix("::/96").Contains(a):
			v4 = netip.AddrFrom4([4]byte(b[12:16]))
		case netip.MustParsePrefix("2002::/16").Contains(a):
			v4 = netip.AddrFrom4([4]byte(b[2:6]))
		}
		if v4.IsValid() {
			if k := internalKind(v4); k != "" {
				return k + " (in IPv6)"
			}
		}
	}
	return ""
}

// InternalError is the refusal of an allowed name that resolves to an
// internal address only.
type InternalError struct {
	// Host is the name as asked for, with its port.
	Host string
	// Addr is the first internal address it resolved to, Kind its kind.
	Addr netip.Addr
	Kind string
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("%s resolves to %s, a %s address: the proxy reaches internal addresses only when the operator names them (the address itself in the allowlist, or the internal addresses allowed)",
		e.Host, e.Addr, e.Kind)
}

// internalAllowed reports whether the proxy may reach ap, an internal
// address: it is named in the allowlist or a model API's URL, or is in
// WithInternal's.
func (p *Proxy) internalAllowed(ap netip.AddrPort) bool {
	if p.named[ap] {
		return true
	}
	for _, pre := range p.internal {
		if pre.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// dialChecked connects to addr ("host:port") at one of the addresses its
// host resolves to, never an internal one the operator did not name (see
// WithInternal); the address dialled is the one checked, so a name that
// resolves differently a moment later changes nothing.
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portStr, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = p.resolve(ctx, host); err != nil {
		return nil, err
	}
	var refused *InternalError
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(port))
		if kind := internalKind(a); kind != "" && !p.internalAllowed(ap) {
			if refused == nil {
				refused = &InternalError{Host: addr, Addr: a.Unmap(), Kind: kind}
			}
			continue
		}
		c, err := p.dialer.DialContext(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 && refused != nil {
		return nil, refused
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%s: no address", host)
	}
	return nil, errors.Join(errs...)
}

// helloTimeout bounds how long a tunnel's ClientHello may take to come
// once its first byte has.
const helloTimeout = 30 * time.Second

// errHelloRead stops the TLS handshake sniffHello runs once the
// ClientHello is read.
var errHelloRead = errors.New("client hello read")

// sniffHello reads the TLS ClientHello a tunnel's client sends first, if
// it sends TLS, and returns its server name ("" when it names none) and
// the bytes read, which go upstream as they are. isTLS is false when the
// first byte is not a TLS handshake record's: nothing is read then.
func sniffHello(conn net.Conn, r *bufio.Reader) (name string, read []byte, isTLS bool, err error) {
	first, err := r.Peek(1)
	if err != nil {
		return "", nil, false, err
	}
	if first[0] != 0x16 { // a TLS handshake record
		return "", nil, false, nil
	}
	conn.SetReadDeadline(time.Now().Add(helloTimeout))
	defer conn.SetReadDeadline(time.Time{})
	sc := &sniffConn{r: r}
	err = tls.Server(sc, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		name = h.ServerName
		return nil, errHelloRead
	}}).Handshake()
	if !errors.Is(err, errHelloRead) {
		return "", sc.read.Bytes(), true, fmt.Errorf("tls client hello: %w", err)
	}
	return name, sc.read.Bytes(), true, nil
}

// sniffConn is the client's side of a tunnel as sniffHello's TLS server
// sees it: it reads through, keeping what it read, and its writes (the
// server's alert) go nowhere.
type sniffConn struct {
	r    io.Reader
	read bytes.Buffer
}

func (s *sniffConn) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	s.read.Write(b[:n])
	return n, err
}

func (s *sniffConn) Write(b []byte) (int, error)      { return len(b), nil }
func (s *sniffConn) Close() error                     { return nil }
func (s *sniffConn) LocalAddr() net.Addr              { return &net.UnixAddr{Net: "unix"} }
func (s *sniffConn) RemoteAddr() net.Addr             { return &net.UnixAddr{Net: "unix"} }
func (s *sniffConn) SetDeadline(time.Time) error      { return nil }
func (s *sniffConn) SetReadDeadline(time.Time) error  { return nil }
func (s *sniffConn) SetWriteDeadline(time.Time) error { return nil }

// sameHost reports whether a TLS server name is the host of hostPort.
func sameHost(serverName, hostPort string) bool {
	h, _, _ := net.SplitHostPort(hostPort)
	return strings.EqualFold(strings.TrimSuffix(serverName, "."), strings.TrimSuffix(h, "."))
}

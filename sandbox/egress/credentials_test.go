package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestIndexCredentials: the proxy adds the index's credentials to what
// the sandbox asks of the index's host, as plain http (upgraded to TLS for
// an https index), drops any the sandbox sent, and adds nothing for
// another host; the sandbox's requests carry none.
func TestIndexCredentials(t *testing.T) {
	for _, tlsToo := range []bool{false, true} {
		var got []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, _ := r.BasicAuth()
			got = append(got, u+":"+p)
			io.WriteString(w, r.URL.Path)
		})
		up := httptest.NewServer(h)
		scheme := "http"
		if tlsToo {
			up.Close()
			up, scheme = httptest.NewTLSServer(h), "https"
		}
		t.Cleanup(up.Close)
		other := upstream(t, false)
		host := hostOf(t, up)
		p, err := New([]string{host, hostOf(t, other)}, WithPeerUIDs(os.Getuid()),
			WithIndexCredentials(scheme+"://ci-user:S3CRET%2FTOKEN@"+host+"/simple/"), WithLog(func(Entry) {}))
		if err != nil {
			t.Fatal(err)
		}
		if tlsToo {
			pool := x509.NewCertPool()
			pool.AddCert(up.Certificate())
			p.rt.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
		}
		s, err := p.Listen(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		proxyURL, _ := url.Parse("http://egress")
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", s.Socket)
		}}}
		req, _ := http.NewRequest("GET", "http://"+host+"/simple/pkg/", nil)
		req.SetBasicAuth("sandbox", "guess")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "/simple/pkg/" || len(got) != 1 || got[0] != "ci-user:S3CRET/TOKEN" {
			t.Errorf("%s index: %d %q, upstream saw credentials %q: want the index's own", scheme, resp.StatusCode, body, got)
		}
		resp, err = c.Get(other.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || len(got) != 1 {
			t.Errorf("another host: %d, index saw %q", resp.StatusCode, got)
		}
	}
	if _, err := New([]string{"a:80"}, WithIndexCredentials("ftp://u:p@a/")); err == nil || !strings.Contains(err.Error(), "http or https") {
		t.Errorf("an ftp index: %v", err)
	}
}

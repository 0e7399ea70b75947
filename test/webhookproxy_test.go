package test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// smeeEvent is a delivery as a smee channel relays it: the headers by
// lowercase name and the body, in one JSON object.
func smeeEvent(t *testing.T, secret, event, id string, body []byte) string {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compact.Bytes(), body) {
		t.Fatal("the payload must be compact JSON, as GitHub sends it")
	}
	data := fmt.Sprintf(`{"x-github-event":%q,"x-github-delivery":%q,"x-hub-signature-256":%q,"content-type":"application/json","body":%s,"query":{},"timestamp":%d}`,
		event, id, "sha256="+hex.EncodeToString(mac.Sum(nil)), body, time.Now().UnixMilli())
	return "id: " + id + "\ndata: " + data + "\n\n"
}

// TestServeReadsWebhookProxy: with TESTFIRST_WEBHOOK_PROXY_URL the real
// binary reads deliveries from a smee-compatible channel (a stand-in on
// 127.0.0.1 here) and takes each through its intake: a delivery signed with
// the app's secret is accepted and its job runs, one signed with another
// secret is refused as it would be on POST /webhook, and the channel's
// own messages are skipped.
func TestServeReadsWebhookProxy(t *testing.T) {
	gh := fakegithub.New(t)
	gh.AddInstallation(957387, "Codertocat")
	gh.AddRepo(957387, "Codertocat", "Hello-World", "main")
	raw, err := os.ReadFile(filepath.Join(fixtures, "installation", "created.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	json.Compact(&body, raw)

	const secret = "proxy-secret"
	channel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "want an event stream", http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: ready\ndata: {}\n\n: keep-alive\n\n")
		fmt.Fprint(w, smeeEvent(t, "not-the-secret", "installation", "d-proxy-forged", body.Bytes()))
		fmt.Fprint(w, smeeEvent(t, secret, "installation", "d-proxy-1", body.Bytes()))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(channel.Close) // after serve stops, so its connection ends first
	if !strings.HasPrefix(channel.URL, "http://127.0.0.1:") {
		t.Fatalf("the channel listens on %s", channel.URL)
	}

	s := startServe(t, gh, secret, "TESTFIRST_WEBHOOK_PROXY_URL="+channel.URL+"/channel")
	want := "lane:pair,test-first,test-first:approved"
	waitFor(t, "the forwarded delivery's job", 60*time.Second, func() bool {
		return strings.Join(gh.RepoLabels("Codertocat", "Hello-World"), ",") == want
	}, s.log)
	logs := s.log()
	for _, line := range []string{
		`"delivery":"d-proxy-1","event":"installation","status":202`,
		`"delivery":"d-proxy-forged","event":"installation","status":401`,
	} {
		if !strings.Contains(logs, line) {
			t.Errorf("the log lacks %s:\n%s", line, logs)
		}
	}
	if strings.Contains(logs, `"msg":"webhook accepted","delivery":"d-proxy-forged"`) {
		t.Error("a delivery with a forged signature was accepted")
	}
}

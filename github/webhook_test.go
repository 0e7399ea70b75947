package github_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/github"
)

// webhookFixtures holds real webhook payloads as GitHub sends them.
var webhookFixtures = filepath.Join("..", "..", "shared", "fixtures", "github-webhooks")

func signBody(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func deliveryHeader(event, id, signature string) http.Header {
	h := http.Header{}
	for k, v := range map[string]string{"X-GitHub-Event": event, "X-GitHub-Delivery": id, "X-Hub-Signature-256": signature} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// TestVerifyDeliveryEveryFixture verifies every real payload of every
// event, signed, and compares what VerifyDelivery read with a generic
// decode of the same body.
func TestVerifyDeliveryEveryFixture(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(webhookFixtures, "*", "*.json"))
	if err != nil || len(files) < 20 {
		t.Fatalf("only %d fixtures under %s (%v): the fixtures live in shared/fixtures beside the checkout", len(files), webhookFixtures, err)
	}
	for _, f := range files {
		event := filepath.Base(filepath.Dir(f))
		name := event + "/" + filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := github.VerifyDelivery(deliveryHeader(event, name, signBody("s3cret", body)), body, [][]byte{[]byte("s3cret")})
			if err != nil {
				t.Fatalf("VerifyDelivery: %v", err)
			}
			var generic map[string]any
			if err := json.Unmarshal(body, &generic); err != nil {
				t.Fatal(err)
			}
			want := github.Delivery{ID: name, Event: event, Handled: slices.Contains(github.HandledEvents, event)}
			if want.Handled {
				want.Action, _ = generic["action"].(string)
				if in, ok := generic["installation"].(map[string]any); ok {
					want.Installation = int64(in["id"].(float64))
				}
			}
			if !bytes.Equal(got.Payload, body) {
				t.Error("Payload is not the body as signed")
			}
			got.Payload = nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("delivery (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyDeliveryRefuses(t *testing.T) {
	labeled, err := os.ReadFile(filepath.Join(webhookFixtures, "issues", "labeled.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := signBody("a", labeled)
	truncated := labeled[:len(labeled)/2]
	tests := []struct {
		name    string
		header  http.Header
		body    []byte
		secrets []string
		want    error
	}{
		{"no signature", deliveryHeader("issues", "d1", ""), labeled, []string{"a"}, github.ErrBadSignature},
		{"wrong secret", deliveryHeader("issues", "d1", signBody("b", labeled)), labeled, []string{"a"}, github.ErrBadSignature},
		{"no secrets", deliveryHeader("issues", "d1", good), labeled, nil, github.ErrBadSignature},
		{"empty secret never matches", deliveryHeader("issues", "d1", signBody("", labeled)), labeled, []string{""}, github.ErrBadSignature},
		{"body changed after signing", deliveryHeader("issues", "d1", good), append(slices.Clone(labeled), ' '), []string{"a"}, github.ErrBadSignature},
		{"sha1 scheme", deliveryHeader("issues", "d1", "sha1="+strings.TrimPrefix(good, "sha256=")), labeled, []string{"a"}, github.ErrBadSignature},
		{"no scheme", deliveryHeader("issues", "d1", strings.TrimPrefix(good, "sha256=")), labeled, []string{"a"}, github.ErrBadSignature},
		{"truncated digest", deliveryHeader("issues", "d1", good[:len(good)-2]), labeled, []string{"a"}, github.ErrBadSignature},
		{"not hex", deliveryHeader("issues", "d1", "sha256="+strings.Repeat("zz", 32)), labeled, []string{"a"}, github.ErrBadSignature},
		{"unsigned without event", deliveryHeader("", "d1", ""), labeled, []string{"a"}, github.ErrBadSignature},
		{"unsigned malformed", deliveryHeader("issues", "d1", ""), truncated, []string{"a"}, github.ErrBadSignature},
		{"signed without event", deliveryHeader("", "d1", good), labeled, []string{"a"}, github.ErrMalformed},
		{"signed without delivery id", deliveryHeader("issues", "", good), labeled, []string{"a"}, github.ErrMalformed},
		{"signed truncated json", deliveryHeader("issues", "d1", signBody("a", truncated)), truncated, []string{"a"}, github.ErrMalformed},
		{"signed empty body", deliveryHeader("issues", "d1", signBody("a", nil)), nil, []string{"a"}, github.ErrMalformed},
		{"signed array", deliveryHeader("issues", "d1", signBody("a", []byte(`[1]`))), []byte(`[1]`), []string{"a"}, github.ErrMalformed},
		{"signed trailing garbage", deliveryHeader("issues", "d1", signBody("a", []byte(`{"action":"x"} }`))), []byte(`{"action":"x"} }`), []string{"a"}, github.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var secrets [][]byte
			for _, s := range tt.secrets {
				secrets = append(secrets, []byte(s))
			}
			_, err := github.VerifyDelivery(tt.header, tt.body, secrets)
			if !errors.Is(err, tt.want) {
				t.Errorf("VerifyDelivery error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestVerifyDeliveryRotation accepts a delivery signed with any of the
// configured secrets, wherever it stands in the list.
func TestVerifyDeliveryRotation(t *testing.T) {
	body := []byte(`{"action":"created","installation":{"id":42}}`)
	secrets := [][]byte{[]byte("new"), []byte(""), []byte("old")}
	for _, s := range []string{"new", "old"} {
		d, err := github.VerifyDelivery(deliveryHeader("installation", "d1", signBody(s, body)), body, secrets)
		if err != nil || d.Action != "created" || d.Installation != 42 {
			t.Errorf("signed with %q: %+v, %v", s, d, err)
		}
	}
}

// TestVerifyDeliveryUnhandledEventUnread: a signed delivery of an event
// testfirst does not act on is verified but its body is not read, so even
// a body that is not JSON is not an error.
func TestVerifyDeliveryUnhandledEventUnread(t *testing.T) {
	body := []byte("not json")
	d, err := github.VerifyDelivery(deliveryHeader("deployment", "", signBody("a", body)), body, [][]byte{[]byte("a")})
	if err != nil || d.Handled || d.Event != "deployment" {
		t.Errorf("VerifyDelivery = %+v, %v; want an unhandled deployment delivery", d, err)
	}
}

// FuzzVerifyDelivery: whatever arrives, VerifyDelivery does not panic, a
// body verifies only under its own signature, and a verified delivery of
// a handled event carries its headers and the body as signed.
func FuzzVerifyDelivery(f *testing.F) {
	for _, p := range []string{"issues/labeled.payload.json", "installation/created.payload.json", "ping/" + "*"} {
		files, _ := filepath.Glob(filepath.Join(webhookFixtures, p))
		for _, file := range files {
			body, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(filepath.Base(filepath.Dir(file)), "d1", body, true)
		}
	}
	f.Add("issues", "d1", []byte(`{"action":"labeled","installation":{"id":"x"}}`), true)
	f.Add("", "", []byte{0xff, 0xfe}, false)
	f.Fuzz(func(t *testing.T, event, id string, body []byte, signed bool) {
		secrets := [][]byte{[]byte("fuzz-secret")}
		signature := "sha256=" + strings.Repeat("0", 64)
		if signed {
			signature = signBody("fuzz-secret", body)
		}
		h := http.Header{"X-Github-Event": {event}, "X-Github-Delivery": {id}, "X-Hub-Signature-256": {signature}}
		d, err := github.VerifyDelivery(h, body, secrets)
		switch {
		case !signed:
			if !errors.Is(err, github.ErrBadSignature) {
				t.Fatalf("unsigned body: %+v, %v; want ErrBadSignature", d, err)
			}
		case errors.Is(err, github.ErrBadSignature):
			t.Fatal("a correctly signed body was refused as unsigned")
		case err == nil && (d.Event != event || !bytes.Equal(d.Payload, body) || d.Handled && d.ID != id):
			t.Fatalf("verified delivery %+v does not carry its headers and body", d)
		}
	})
}

func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1000)
	tests := []struct {
		name     string
		body     []byte
		limit    int64
		size     int64
		want     []byte
		tooLarge bool
	}{
		{"announced size", body, 2000, 1000, body, false},
		{"unknown size", body, 2000, -1, body, false},
		{"announced too small", body, 2000, 10, body, false},
		{"announced too large", body, 2000, 1 << 40, body, false},
		{"at the limit", body, 1000, 1000, body, false},
		{"over the limit", body, 999, 1000, nil, true},
		{"over the limit, size unknown", body, 999, -1, nil, true},
		{"empty", nil, 10, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tooLarge, err := github.ReadBody(bytes.NewReader(tt.body), tt.limit, tt.size)
			if err != nil || tooLarge != tt.tooLarge || !bytes.Equal(got, tt.want) {
				t.Errorf("ReadBody = %d bytes, too large %t, %v; want %d bytes, %t", len(got), tooLarge, err, len(tt.want), tt.tooLarge)
			}
		})
	}
	if _, _, err := github.ReadBody(iotest.ErrReader(errors.New("connection reset")), 10, -1); err == nil {
		t.Error("ReadBody of a failing reader: nil error")
	}
}

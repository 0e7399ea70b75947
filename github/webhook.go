package github

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Webhook errors.
var (
	// ErrBadSignature: X-Hub-Signature-256 is missing or matches none of
	// the app's webhook secrets.
	ErrBadSignature = errors.New("webhook signature does not match any configured secret")
	// ErrMalformed: the delivery is signed but cannot be read.
	ErrMalformed = errors.New("malformed webhook delivery")
)

// HandledEvents are the webhook events testfirst acts on.
var HandledEvents = []string{
	"installation", "installation_repositories", "issues", "issue_comment",
	"pull_request", "pull_request_review", "pull_request_review_comment", "check_run", "check_suite", "ping",
}

// Delivery is a webhook delivery whose signature matched one of the app's
// secrets.
type Delivery struct {
	// ID is X-GitHub-Delivery, unique per delivery and kept on redelivery.
	ID           string
	Event        string
	Action       string
	Installation int64
	// Handled is false for events testfirst does not act on.
	Handled bool
	// Payload is the body exactly as signed.
	Payload []byte
}

// signaturePrefix starts every X-Hub-Signature-256 value GitHub sends.
const signaturePrefix = "sha256="

// VerifyDelivery checks a delivery's X-Hub-Signature-256 against every
// secret (more than one during rotation) before anything of the body or
// its other headers is read, then reads what intake needs: the event and
// delivery headers and the payload's top-level action and installation.id.
// It returns ErrBadSignature when the signature is missing or no secret
// matches, and ErrMalformed, wrapped, when a signed delivery of a handled
// event cannot be read (no event or delivery header, or a body that is not
// one JSON object). Deliveries of other events are returned with Handled
// false and their body unread.
//
// The signature is checked here with crypto/hmac, not through
// go-playground/webhooks: after its check that library decodes every
// payload into its typed structs, which took about 30 % of the intake's
// CPU, told intake nothing it needs, and fails on real payloads anyway
// (installation events carry Unix timestamps where its structs expect
// strings). testfirst no longer depends on it.
func VerifyDelivery(header http.Header, body []byte, secrets [][]byte) (Delivery, error) {
	if !signatureMatches(header.Get("X-Hub-Signature-256"), body, secrets) {
		return Delivery{}, ErrBadSignature
	}
	event := header.Get("X-GitHub-Event")
	if event == "" {
		return Delivery{}, fmt.Errorf("%w: no X-GitHub-Event header", ErrMalformed)
	}
	d := Delivery{ID: header.Get("X-GitHub-Delivery"), Event: event, Payload: body, Handled: slices.Contains(HandledEvents, event)}
	if !d.Handled {
		return d, nil
	}
	if d.ID == "" {
		return d, fmt.Errorf("%w: no X-GitHub-Delivery header", ErrMalformed)
	}
	var env envelope
	if err := readEnvelope(body, &env); err != nil {
		return d, fmt.Errorf("%w: decode payload: %v", ErrMalformed, err)
	}
	if err := env.checkShape(event); err != nil {
		return d, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	d.Action = env.Action
	if env.Installation != nil {
		d.Installation = env.Installation.ID
	}
	return d, nil
}

// checkShape checks a payload against the event it was sent as. Only the
// body is signed, not the X-GitHub-Event header: a body of one event sent
// as another (an issues.opened body as pull_request made a pull request
// numbered 0) lacks the objects the other event always carries. Every
// event but ping has an action; installation events an installation; the
// others the repository and the object they are about, with its number or
// id.
func (e *envelope) checkShape(event string) error {
	if event == "ping" {
		return nil
	}
	if e.Action == "" {
		return fmt.Errorf("%s delivery without an action", event)
	}
	var need []string
	switch event {
	case "installation", "installation_repositories":
		if e.Installation == nil || e.Installation.ID <= 0 {
			return fmt.Errorf("%s delivery without an installation id", event)
		}
		return nil
	case "issues":
		need = []string{"issue"}
	case "issue_comment":
		need = []string{"issue", "comment"}
	case "pull_request":
		need = []string{"pull_request"}
	case "pull_request_review":
		need = []string{"pull_request"}
	case "pull_request_review_comment":
		need = []string{"pull_request", "comment"}
	case "check_run":
		need = []string{"check_run"}
	case "check_suite":
		need = []string{"check_suite"}
	}
	for _, name := range append(need, "repository") {
		n, present := e.identity(name)
		switch {
		case !present:
			article := "a"
			if name == "issue" {
				article = "an"
			}
			return fmt.Errorf("%s delivery without %s %s object", event, article, name)
		case n <= 0:
			return fmt.Errorf("%s delivery whose %s has no positive number or id", event, name)
		}
	}
	if event == "pull_request" && (e.Number == nil || *e.Number != e.PullRequest.Number) {
		return fmt.Errorf("pull_request delivery whose number is not its pull_request's (%d)", e.PullRequest.Number)
	}
	return nil
}

// identity returns the number or id the envelope read of its object name,
// and whether the payload has that object.
func (e *envelope) identity(name string) (int64, bool) {
	switch name {
	case "issue":
		if e.Issue != nil {
			return e.Issue.Number, true
		}
	case "pull_request":
		if e.PullRequest != nil {
			return e.PullRequest.Number, true
		}
	case "repository":
		if e.Repository != nil {
			return e.Repository.ID, true
		}
	case "comment":
		if e.Comment != nil {
			return e.Comment.ID, true
		}
	case "check_run":
		if e.CheckRun != nil {
			return e.CheckRun.ID, true
		}
	case "check_suite":
		if e.CheckSuite != nil {
			return e.CheckSuite.ID, true
		}
	}
	return 0, false
}

// signatureMatches reports whether signature, an X-Hub-Signature-256
// value ("sha256=" and 64 hex digits), is the HMAC-SHA256 of body under at
// least one of secrets. Every non-empty secret is tried and each
// comparison takes constant time; an empty secret never matches, so a
// blank line in the secret file cannot turn verification off.
func signatureMatches(signature string, body []byte, secrets [][]byte) bool {
	digits, ok := strings.CutPrefix(signature, signaturePrefix)
	if !ok || len(digits) != hex.EncodedLen(sha256.Size) {
		return false
	}
	var got [sha256.Size]byte
	if _, err := hex.Decode(got[:], []byte(digits)); err != nil {
		return false
	}
	matched := false
	for _, secret := range secrets {
		if len(secret) == 0 {
			continue
		}
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		if hmac.Equal(mac.Sum(nil), got[:]) {
			matched = true
		}
	}
	return matched
}

// maxBodyPresize bounds the buffer ReadBody allocates on the sender's word
// (Content-Length) before any byte has arrived.
const maxBodyPresize = 64 << 10

// ReadBody reads at most limit bytes of a request body; it reports whether
// the body was larger. size is the length the sender announced (the
// request's ContentLength, -1 when unknown): a body of up to 64 KiB is read
// into a buffer of that size at once instead of a growing one.
func ReadBody(r io.Reader, limit, size int64) ([]byte, bool, error) {
	var buf bytes.Buffer
	if size >= 0 && size <= min(limit, maxBodyPresize) {
		buf.Grow(int(size) + bytes.MinRead) // room to see the end
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, false, err
	}
	if int64(buf.Len()) > limit {
		return nil, true, nil
	}
	return buf.Bytes(), false, nil
}

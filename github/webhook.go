package github

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	ghwebhook "github.com/go-playground/webhooks/v6/github"
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
	"pull_request", "check_run", "check_suite", "ping",
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

// VerifyDelivery checks a delivery's X-Hub-Signature-256 against every
// secret (more than one during rotation) before anything of the body is
// read, then parses it. It returns ErrBadSignature when no secret matches,
// and ErrMalformed, wrapped, when a signed delivery cannot be read.
func VerifyDelivery(header http.Header, body []byte, secrets [][]byte) (Delivery, error) {
	event := header.Get("X-GitHub-Event")
	id := header.Get("X-GitHub-Delivery")
	if event == "" {
		return Delivery{}, fmt.Errorf("%w: no X-GitHub-Event header", ErrMalformed)
	}
	verified := false
	for _, secret := range secrets {
		hook, err := ghwebhook.New(ghwebhook.Options.Secret(string(secret)))
		if err != nil {
			return Delivery{}, err
		}
		r, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		if err != nil {
			return Delivery{}, err
		}
		r.Header = header.Clone()
		// Parsing exactly the delivery's own event makes the library check
		// the signature of every event, known to it or not.
		_, err = hook.Parse(r, ghwebhook.Event(event))
		switch {
		case errors.Is(err, ghwebhook.ErrHMACVerificationFailed), errors.Is(err, ghwebhook.ErrMissingHubSignatureHeader):
			continue
		case errors.Is(err, ghwebhook.ErrParsingPayload):
			return Delivery{}, fmt.Errorf("%w: empty body", ErrMalformed)
		}
		// The signature matched. The library's typed decode may still have
		// failed: its structs refuse real payloads (installation events
		// carry Unix timestamps where it expects strings), so it decides
		// nothing here; the envelope below does.
		verified = true
		break
	}
	if !verified {
		return Delivery{}, ErrBadSignature
	}
	d := Delivery{ID: id, Event: event, Payload: body}
	for _, e := range HandledEvents {
		if e == event {
			d.Handled = true
		}
	}
	if !d.Handled {
		return d, nil
	}
	if id == "" {
		return d, fmt.Errorf("%w: no X-GitHub-Delivery header", ErrMalformed)
	}
	var envelope struct {
		Action       string `json:"action"`
		Installation *struct {
			ID int64 `json:"id"`
		} `json:"installation"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return d, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	d.Action = envelope.Action
	if envelope.Installation != nil {
		d.Installation = envelope.Installation.ID
	}
	return d, nil
}

// ReadBody reads at most limit bytes of a request body; it reports whether
// the body was larger.
func ReadBody(r io.Reader, limit int64) ([]byte, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}

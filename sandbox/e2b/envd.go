package e2b

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Envd talks to the daemon of one sandbox.
type Envd struct {
	c     *Client
	id    string
	base  string
	token string
}

// Envd returns the daemon of sandbox s.
func (c *Client) Envd(s Sandbox) *Envd {
	domain := s.Domain
	if domain == "" {
		domain = c.domain()
	}
	scheme := c.EnvdScheme
	if scheme == "" {
		scheme = "https"
	}
	return &Envd{c: c, id: s.SandboxID, base: fmt.Sprintf("%s://%d-%s.%s", scheme, EnvdPort, s.SandboxID, domain), token: s.EnvdAccessToken}
}

// Connect content types and the envelope's end-of-stream flag.
const (
	connectJSON       = "application/connect+json"
	connectEndStream  = 0x02
	maxEnvelope       = 32 << 20
	keepaliveInterval = "30"
)

// Process is process.ProcessConfig.
type Process struct {
	Cmd  string            `json:"cmd"`
	Args []string          `json:"args,omitempty"`
	Envs map[string]string `json:"envs,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
}

// StartRequest is process.StartRequest.
type StartRequest struct {
	Process Process `json:"process"`
	Tag     string  `json:"tag,omitempty"`
}

// ProcessEvent is process.ProcessEvent: one of its fields is set.
type ProcessEvent struct {
	Start *struct {
		Pid uint32 `json:"pid"`
	} `json:"start,omitempty"`
	Data *struct {
		Stdout []byte `json:"stdout,omitempty"`
		Stderr []byte `json:"stderr,omitempty"`
	} `json:"data,omitempty"`
	End       *EndEvent `json:"end,omitempty"`
	Keepalive *struct{} `json:"keepalive,omitempty"`
}

// EndEvent is process.ProcessEvent.EndEvent.
type EndEvent struct {
	ExitCode int32  `json:"exitCode"`
	Exited   bool   `json:"exited"`
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
}

// ConnectError is the error of a Connect call: its code ("not_found",
// "unavailable", ...) and message.
type ConnectError struct {
	Op      string
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *ConnectError) Error() string {
	s := fmt.Sprintf("E2B sandbox daemon: %s: %s: %s", e.Op, e.Code, e.Message)
	if e.Status == http.StatusUnauthorized || e.Code == "unauthenticated" {
		s += " (the sandbox's access token was refused: the sandbox may have been replaced; create a new one)"
	}
	return s
}

// ErrNoEnd is a process stream that ended without the process's end: the
// sandbox died (killed, out of memory, past its E2B timeout) or the
// connection to it broke.
var ErrNoEnd = errors.New("the sandbox's process stream ended without the process's end: the sandbox died or the connection to it broke")

func (e *Envd) header(h http.Header, user string) {
	if e.token != "" {
		h.Set("X-Access-Token", e.token)
	}
	if user != "" {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	}
	h.Set("E2b-Sandbox-Id", e.id)
	h.Set("E2b-Sandbox-Port", strconv.Itoa(EnvdPort))
}

// Start runs p as user and streams its stdout and stderr to the writers
// until it ends, returning its end. A stream that breaks first is
// ErrNoEnd; ctx's end stops waiting (the process goes on until the
// sandbox is killed).
func (e *Envd) Start(ctx context.Context, p Process, user string, stdout, stderr io.Writer) (EndEvent, error) {
	msg, err := json.Marshal(StartRequest{Process: p})
	if err != nil {
		return EndEvent{}, err
	}
	var body bytes.Buffer
	writeEnvelope(&body, 0, msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/process.Process/Start", &body)
	if err != nil {
		return EndEvent{}, err
	}
	e.header(req.Header, user)
	req.Header.Set("Content-Type", connectJSON)
	req.Header.Set("Connect-Protocol-Version", "1")
	req.Header.Set("Keepalive-Ping-Interval", keepaliveInterval)
	resp, err := e.c.http().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return EndEvent{}, ctx.Err()
		}
		return EndEvent{}, fmt.Errorf("E2B sandbox daemon: start %s: %w", p.Cmd, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return EndEvent{}, connectError("start "+p.Cmd, resp)
	}
	r := bufio.NewReader(resp.Body)
	var end *EndEvent
	for {
		flags, data, err := readEnvelope(r)
		if err != nil {
			if ctx.Err() != nil {
				return EndEvent{}, ctx.Err()
			}
			if end != nil {
				return *end, nil
			}
			return EndEvent{}, fmt.Errorf("%w (%v)", ErrNoEnd, err)
		}
		if flags&connectEndStream != 0 {
			var trailer struct {
				Error *ConnectError `json:"error"`
			}
			if json.Unmarshal(data, &trailer) == nil && trailer.Error != nil {
				trailer.Error.Op = "start " + p.Cmd
				return EndEvent{}, trailer.Error
			}
			if end == nil {
				return EndEvent{}, ErrNoEnd
			}
			return *end, nil
		}
		var ev struct {
			Event ProcessEvent `json:"event"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return EndEvent{}, fmt.Errorf("E2B sandbox daemon: start %s: an event is not process.StartResponse JSON: %v", p.Cmd, err)
		}
		switch {
		case ev.Event.Data != nil:
			if len(ev.Event.Data.Stdout) > 0 && stdout != nil {
				stdout.Write(ev.Event.Data.Stdout)
			}
			if len(ev.Event.Data.Stderr) > 0 && stderr != nil {
				stderr.Write(ev.Event.Data.Stderr)
			}
		case ev.Event.End != nil:
			end = ev.Event.End
		}
	}
}

// WriteFile uploads data to path in the sandbox, owned by user.
func (e *Envd) WriteFile(ctx context.Context, path, user string, data []byte) error {
	q := url.Values{"path": {path}}
	if user != "" {
		q.Set("username", user)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/files?"+q.Encode(), bytes.NewReader(data))
	if err != nil {
		return err
	}
	e.header(req.Header, user)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := e.c.http().Do(req)
	if err != nil {
		return fmt.Errorf("E2B sandbox daemon: write %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return apiError("write "+path+" in sandbox "+e.id, resp.StatusCode, b)
	}
	return nil
}

// ReadFile downloads path from the sandbox, at most limit bytes.
func (e *Envd) ReadFile(ctx context.Context, path, user string, limit int64) ([]byte, error) {
	q := url.Values{"path": {path}}
	if user != "" {
		q.Set("username", user)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/files?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	e.header(req.Header, user)
	resp, err := e.c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("E2B sandbox daemon: read %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, apiError("read "+path+" in sandbox "+e.id, resp.StatusCode, b)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("E2B sandbox daemon: read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("E2B sandbox daemon: read %s: more than %d bytes", path, limit)
	}
	return b, nil
}

// connectError reads a Connect error answer (a JSON {code, message}).
func connectError(op string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	ce := &ConnectError{Op: op, Status: resp.StatusCode}
	if json.Unmarshal(b, ce) != nil || ce.Code == "" {
		ce.Code = http.StatusText(resp.StatusCode)
		ce.Message = string(b)
	}
	return ce
}

// writeEnvelope writes one Connect streaming envelope.
func writeEnvelope(w io.Writer, flags byte, data []byte) error {
	var h [5]byte
	h[0] = flags
	binary.BigEndian.PutUint32(h[1:], uint32(len(data)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// readEnvelope reads one Connect streaming envelope.
func readEnvelope(r io.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxEnvelope {
		return 0, nil, fmt.Errorf("a Connect message of %d bytes, more than %d", n, maxEnvelope)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return 0, nil, err
	}
	return h[0], data, nil
}

// WriteEnvelope and ReadEnvelope are the Connect framing, for the fake.
func WriteEnvelope(w io.Writer, flags byte, data []byte) error { return writeEnvelope(w, flags, data) }

// ReadEnvelope reads one Connect streaming envelope.
func ReadEnvelope(r io.Reader) (byte, []byte, error) { return readEnvelope(r) }

// EndStream is the flag of a Connect stream's last envelope.
const EndStream = connectEndStream

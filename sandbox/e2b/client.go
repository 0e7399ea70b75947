package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultDomain is E2B's public cloud.
const DefaultDomain = "e2b.app"

// EnvdPort is the port of the daemon inside a sandbox.
const EnvdPort = 49983

// Client talks to E2B's sandboxes API and to the daemons of its sandboxes.
type Client struct {
	// APIURL is the REST API's base URL; https://api.<Domain> when empty.
	APIURL string
	// Domain is where sandboxes are reached: envd of sandbox id at
	// https://49983-<id>.<Domain>. DefaultDomain when empty.
	Domain string
	// Key is the team's API key, sent as X-API-Key to the REST API only.
	Key string
	// HTTP is the client of every request; http.DefaultClient when nil.
	HTTP *http.Client
	// EnvdScheme is https unless set (the fake serves http).
	EnvdScheme string
	// Attempts bounds the tries of a request E2B answers 429 or 5xx;
	// DefaultAttempts when 0.
	Attempts int
	// Wait sleeps between tries; a timer when nil.
	Wait func(ctx context.Context, d time.Duration) error
}

// DefaultAttempts is how many times a request is tried.
const DefaultAttempts = 4

// maxRetryAfter bounds how long a Retry-After makes a request wait.
const maxRetryAfter = time.Minute

// NewSandbox is the body of POST /sandboxes.
type NewSandbox struct {
	TemplateID string `json:"templateID"`
	// Timeout is the sandbox's time to live in seconds: E2B kills it then.
	Timeout  int               `json:"timeout"`
	Secure   bool              `json:"secure,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	EnvVars  map[string]string `json:"envVars,omitempty"`
	// AllowInternetAccess false is denyOut 0.0.0.0/0.
	AllowInternetAccess *bool    `json:"allow_internet_access,omitempty"`
	Network             *Network `json:"network,omitempty"`
}

// Network is E2B's SandboxNetworkConfig: allowOut entries (CIDR, IP or
// domain) take precedence over denyOut ones (CIDR or IP only).
type Network struct {
	AllowOut []string `json:"allowOut,omitempty"`
	DenyOut  []string `json:"denyOut,omitempty"`
	// AllowPublicTraffic false makes the sandbox's URLs need the traffic
	// token.
	AllowPublicTraffic *bool `json:"allowPublicTraffic,omitempty"`
}

// Sandbox is the answer to POST /sandboxes.
type Sandbox struct {
	TemplateID      string `json:"templateID"`
	SandboxID       string `json:"sandboxID"`
	ClientID        string `json:"clientID"`
	EnvdVersion     string `json:"envdVersion"`
	EnvdAccessToken string `json:"envdAccessToken,omitempty"`
	Domain          string `json:"domain,omitempty"`
}

// Listed is one sandbox of GET /v2/sandboxes.
type Listed struct {
	TemplateID string            `json:"templateID"`
	SandboxID  string            `json:"sandboxID"`
	StartedAt  time.Time         `json:"startedAt"`
	EndAt      time.Time         `json:"endAt"`
	State      string            `json:"state"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// APIError is an answer of E2B that is not a success.
type APIError struct {
	// Op is what was asked, e.g. "create a sandbox from template x".
	Op     string
	Status int
	// Message is E2B's message (its Error body), or the body's start.
	Message string
	// Hint says what a person can do about it, when known.
	Hint string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("E2B: %s: %d %s", e.Op, e.Status, e.Message)
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return s
}

// IsNotFound reports whether err is E2B's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) domain() string {
	if c.Domain != "" {
		return c.Domain
	}
	return DefaultDomain
}

func (c *Client) apiURL() string {
	if c.APIURL != "" {
		return strings.TrimSuffix(c.APIURL, "/")
	}
	return "https://api." + c.domain()
}

// Create creates a sandbox. A 404 names the template.
func (c *Client) Create(ctx context.Context, n NewSandbox) (Sandbox, error) {
	var s Sandbox
	body, err := json.Marshal(n)
	if err != nil {
		return s, err
	}
	op := "create a sandbox from template " + n.TemplateID
	err = c.do(ctx, op, http.MethodPost, "/sandboxes", body, http.StatusCreated, &s)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		ae.Hint = fmt.Sprintf("the team of this API key has no template %q: build it (e2b template build, see docs/e2b.md) or set e2b.template", n.TemplateID)
	}
	if err == nil && s.SandboxID == "" {
		return s, fmt.Errorf("E2B: %s: the answer names no sandbox", op)
	}
	return s, err
}

// Kill kills sandbox id. One that is gone already is IsNotFound.
func (c *Client) Kill(ctx context.Context, id string) error {
	return c.do(ctx, "kill sandbox "+id, http.MethodDelete, "/sandboxes/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
}

// SetTimeout makes sandbox id expire d from now.
func (c *Client) SetTimeout(ctx context.Context, id string, d time.Duration) error {
	body, _ := json.Marshal(map[string]int{"timeout": seconds(d)})
	return c.do(ctx, "set the timeout of sandbox "+id, http.MethodPost, "/sandboxes/"+url.PathEscape(id)+"/timeout", body, http.StatusNoContent, nil)
}

// List lists the running sandboxes whose metadata hold every pair of
// metadata, following the pages.
func (c *Client) List(ctx context.Context, metadata map[string]string) ([]Listed, error) {
	mq := url.Values{}
	for k, v := range metadata {
		mq.Set(k, v)
	}
	var all []Listed
	next := ""
	for page := 0; ; page++ {
		q := url.Values{"state": {"running"}, "limit": {"100"}}
		if len(mq) > 0 {
			q.Set("metadata", mq.Encode())
		}
		if next != "" {
			q.Set("nextToken", next)
		}
		var got []Listed
		h, err := c.doHeader(ctx, "list sandboxes", http.MethodGet, "/v2/sandboxes?"+q.Encode(), nil, http.StatusOK, &got)
		if err != nil {
			return nil, err
		}
		all = append(all, got...)
		next = h.Get("X-Next-Token")
		if next == "" || len(got) == 0 || page > 1000 {
			return all, nil
		}
	}
}

func (c *Client) do(ctx context.Context, op, method, path string, body []byte, want int, out any) error {
	_, err := c.doHeader(ctx, op, method, path, body, want, out)
	return err
}

// doHeader sends one REST request, retrying 429 and 5xx answers and
// failed connections a bounded number of times, and decodes the answer
// into out.
func (c *Client) doHeader(ctx context.Context, op, method, path string, body []byte, want int, out any) (http.Header, error) {
	if c.Key == "" {
		return nil, fmt.Errorf("E2B: %s: no API key (set e2b.api_key_file)", op)
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	var last error
	for try := 0; try < attempts; try++ {
		req, err := http.NewRequestWithContext(ctx, method, c.apiURL()+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-API-Key", c.Key)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.http().Do(req)
		var wait time.Duration
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("E2B: %s: %w", op, ctx.Err())
			}
			last = fmt.Errorf("E2B: %s: %w", op, err)
			wait = backoff(try)
		} else {
			data, rerr := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
			resp.Body.Close()
			switch {
			case resp.StatusCode == want && rerr == nil:
				if out != nil {
					if err := json.Unmarshal(data, out); err != nil {
						return nil, fmt.Errorf("E2B: %s: the answer is not the API's JSON: %v", op, err)
					}
				}
				return resp.Header, nil
			case resp.StatusCode == want:
				last = fmt.Errorf("E2B: %s: reading the answer: %w", op, rerr)
				wait = backoff(try)
			default:
				ae := apiError(op, resp.StatusCode, data)
				if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
					return nil, ae
				}
				last = ae
				wait = retryAfter(resp.Header.Get("Retry-After"), try)
			}
		}
		if try == attempts-1 {
			break
		}
		if err := c.wait(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w (while waiting to retry: %v)", last, err)
		}
	}
	return nil, fmt.Errorf("%w (gave up after %d tries)", last, attempts)
}

func (c *Client) wait(ctx context.Context, d time.Duration) error {
	if c.Wait != nil {
		return c.Wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// apiError reads E2B's Error body ({"code", "message"}) and says what a
// person can do about the common answers.
func apiError(op string, status int, data []byte) *APIError {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		msg = e.Message
	}
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	ae := &APIError{Op: op, Status: status, Message: msg}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		ae.Hint = "E2B refused the API key: put a valid key of the team that owns the template in e2b.api_key_file (e2b.dev dashboard, API keys)"
	case http.StatusNotFound:
		ae.Hint = "the sandbox is gone (it was killed, or its timeout passed)"
	case http.StatusTooManyRequests:
		ae.Hint = "E2B's rate or concurrent-sandbox limit of the team was reached: run fewer agents at once or raise the team's limit"
	}
	return ae
}

// backoff is the wait before try+1 when E2B said nothing: 0.5 s doubling.
func backoff(try int) time.Duration {
	return min(500*time.Millisecond<<try, 8*time.Second)
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h string, try int) time.Duration {
	if h == "" {
		return backoff(try)
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(h); err == nil {
		return min(max(time.Until(t), 0), maxRetryAfter)
	}
	return backoff(try)
}

// seconds rounds d up to whole seconds, at least one.
func seconds(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// failure is an upstream the proxy could not reach, or that failed.
type failure struct {
	at   time.Time
	what string
}

// maxFailures bounds the failures a proxy keeps.
const maxFailures = 64

// noteFailure keeps what happened when hostPort could not be reached
// (err) or answered with a server error (status).
func (p *Proxy) noteFailure(hostPort string, err error, status int) {
	what := hostPort + " " + describeUpstream(err, status)
	p.failMu.Lock()
	defer p.failMu.Unlock()
	if n := len(p.failures); n > 0 && p.failures[n-1].what == what {
		p.failures[n-1].at = time.Now()
		return
	}
	p.failures = append(p.failures, failure{at: time.Now(), what: what})
	if len(p.failures) > maxFailures {
		p.failures = p.failures[len(p.failures)-maxFailures:]
	}
}

// Failures says, in the proxy's own words and without duplicates, what
// went wrong upstream since since: "pypi.org:443 could not be resolved",
// "10.0.0.5:8080 refused the connection", "... timed out", "... answered
// 503". A build that failed reads them to say what really happened,
// rather than guess from its client's text.
func (p *Proxy) Failures(since time.Time) []string {
	p.failMu.Lock()
	defer p.failMu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, f := range p.failures {
		if !f.at.Before(since) && !seen[f.what] {
			seen[f.what] = true
			out = append(out, f.what)
		}
	}
	return out
}

// describeUpstream says what err (or, without one, a server error status)
// means of an upstream.
func describeUpstream(err error, status int) string {
	if err == nil {
		return fmt.Sprintf("answered %d", status)
	}
	var dns *net.DNSError
	var internal *InternalError
	switch {
	case errors.As(err, &internal):
		return "was refused by the proxy: " + internal.Error()
	case errors.As(err, &dns) && dns.IsNotFound:
		return "could not be resolved (no such host)"
	case errors.As(err, &dns) && dns.IsTimeout:
		return "could not be resolved (the lookup timed out)"
	case errors.As(err, &dns):
		return "could not be resolved (" + dns.Err + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused the connection"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return "timed out"
	case errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH):
		return "is unreachable (no route)"
	}
	return "could not be reached (" + err.Error() + ")"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

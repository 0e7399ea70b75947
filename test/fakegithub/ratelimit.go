package fakegithub

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	// rateLimitAuthenticated is the hourly core limit of an app or installation.
	rateLimitAuthenticated = 5000
	// rateLimitAnonymous is the hourly core limit without credentials.
	rateLimitAnonymous = 60
	// rateDocs is where GitHub points a primary rate-limit error.
	rateDocs = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"
	// secondaryRateDocs is where GitHub points a secondary rate-limit error;
	// go-github recognises it by its "secondary-rate-limits" suffix.
	secondaryRateDocs = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)

// rateWindow is one caller's hourly core rate-limit window.
type rateWindow struct {
	limit int
	used  int
	reset time.Time
}

// window returns the caller's current window, starting a new one when the
// old one has reset. Callers hold s.mu.
func (s *Server) window(key string) *rateWindow {
	now := s.now()
	w := s.rates[key]
	if w == nil || !now.Before(w.reset) {
		limit := rateLimitAuthenticated
		if key == "anonymous" {
			limit = rateLimitAnonymous
		}
		w = &rateWindow{limit: limit, reset: now.Add(time.Hour)}
		s.rates[key] = w
	}
	return w
}

// countRate counts one request against the caller's window, answering
// GitHub's 403 once the window is spent.
func (s *Server) countRate(who caller) *response {
	w := s.window(who.rateKey())
	if w.used >= w.limit {
		return errorResponse(http.StatusForbidden, rateLimitMessage(who.rateKey(), who.remote), rateDocs)
	}
	w.used++
	return nil
}

// rateHeaders are the X-RateLimit-* headers of a caller's window.
func (s *Server) rateHeaders(key string) http.Header {
	w := s.window(key)
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(w.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(w.limit-w.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(w.reset.Unix(), 10))
	h.Set("X-RateLimit-Used", strconv.Itoa(w.used))
	h.Set("X-RateLimit-Resource", "core")
	return h
}

// rateLimitMessage is GitHub's primary rate-limit message for a caller.
func rateLimitMessage(key, remote string) string {
	switch {
	case strings.HasPrefix(key, "installation:"):
		return "API rate limit exceeded for installation ID " + strings.TrimPrefix(key, "installation:") + "."
	case key == "app":
		return "API rate limit exceeded for app ID " + strconv.FormatInt(fakeAppID, 10) + "."
	default:
		return "API rate limit exceeded for " + remote + "."
	}
}

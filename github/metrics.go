package github

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count what GitHub refused for a passing reason and how the
// clients waited. A nil *Metrics records nothing.
type Metrics struct {
	retries   *prometheus.CounterVec
	secondary prometheus.Counter
	waited    prometheus.Counter
}

// NewMetrics registers the GitHub clients' metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_github_retries_total",
			Help: "GitHub calls tried again, by reason (server_error, unreachable, secondary_rate_limit, token_expired).",
		}, []string{"reason"}),
		secondary: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "testfirst_github_secondary_rate_limits_total",
			Help: "Secondary rate limits GitHub answered (403 with its message, or 429).",
		}),
		waited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "testfirst_github_retry_wait_seconds_total",
			Help: "Time spent waiting before trying a GitHub call again (backoff and Retry-After).",
		}),
	}
	reg.MustRegister(m.retries, m.secondary, m.waited)
	return m
}

func (m *Metrics) retried(reason string, wait time.Duration) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(reason).Inc()
	m.waited.Add(wait.Seconds())
}

func (m *Metrics) rateLimited() {
	if m == nil {
		return
	}
	m.secondary.Inc()
}

// WaitedSeconds is the counter of time spent waiting to try again.
func (m *Metrics) WaitedSeconds() prometheus.Counter { return m.waited }

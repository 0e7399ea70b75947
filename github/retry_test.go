package github_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// TestTransientFaultsAreAbsorbed: a blip of GitHub does not fail the call.
// Each case injects a fault in the fake, makes one call, and counts what
// reached GitHub: the call succeeds, with few requests (no storm) and,
// where GitHub asked to wait, after the wait.
func TestTransientFaultsAreAbsorbed(t *testing.T) {
	const runs = "/repos/octo-org/widgets/check-runs"
	// Each case's state: main's commit, and a check run made before the
	// fault, keyed by the installation client of the case.
	var (
		mu    sync.Mutex
		heads = map[*github.Installation]string{}
		runs1 = map[*github.Installation]int64{}
	)
	createRun := func(ctx context.Context, in *github.Installation) error {
		mu.Lock()
		head := heads[in]
		mu.Unlock()
		id, err := in.CreateCheckRun(ctx, "octo-org", "widgets", checkrun.Run{Name: "testfirst", HeadSHA: head, Status: checkrun.StatusInProgress})
		mu.Lock()
		if _, ok := runs1[in]; !ok {
			runs1[in] = id
		}
		mu.Unlock()
		return err
	}
	tarball := func(ctx context.Context, in *github.Installation) error {
		rc, err := in.Tarball(ctx, "octo-org", "widgets", "main")
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = github.ExtractTarball(rc)
		return err
	}
	cases := []struct {
		name     string
		inject   func(s *fakegithub.Server)
		call     func(context.Context, *github.Installation) error
		prefix   string // the route whose requests are counted
		maxCalls int
		minWait  time.Duration
	}{
		{"502 twice on check-run create", func(s *fakegithub.Server) {
			s.FailNextN(2, "POST", runs, http.StatusBadGateway, nil)
		}, createRun, runs, 3, 0},
		{"502 twice on check-run update", func(s *fakegithub.Server) {
			s.FailNextN(2, "PATCH", runs, http.StatusBadGateway, nil)
		}, func(ctx context.Context, in *github.Installation) error {
			mu.Lock()
			id := runs1[in]
			mu.Unlock()
			return in.UpdateCheckRun(ctx, "octo-org", "widgets", id, checkrun.Run{Name: "testfirst", Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionSuccess})
		}, runs, 3, 0},
		{"503 on the archive download", func(s *fakegithub.Server) {
			s.FailNextN(2, "GET", "/_codeload", http.StatusServiceUnavailable, nil)
		}, tarball, "/_codeload", 3, 0},
		{"502 on the archive link", func(s *fakegithub.Server) {
			s.FailNext("GET", "/repos/octo-org/widgets/tarball", http.StatusBadGateway, nil)
		}, tarball, "/repos/octo-org/widgets/tarball", 2, 0},
		{"secondary rate limit, 403 with Retry-After", func(s *fakegithub.Server) {
			s.FailNext("POST", runs, http.StatusForbidden, http.Header{"Retry-After": {"1"}})
		}, createRun, runs, 2, time.Second},
		{"secondary rate limit, 429 with Retry-After", func(s *fakegithub.Server) {
			s.FailNext("POST", runs, http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}})
		}, createRun, runs, 2, time.Second},
		{"installation token expired", func(s *fakegithub.Server) {
			s.ExpireTokens()
		}, createRun, runs, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits, none works
			s, _, in := setup(t)
			ctx := context.Background()
			head, err := in.BranchHead(ctx, "octo-org", "widgets", "main") // and a token
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			heads[in] = head
			mu.Unlock()
			if err := createRun(ctx, in); err != nil {
				t.Fatal(err)
			}
			tc.inject(s)
			mark := s.RequestCount()
			start := time.Now()
			if err := tc.call(ctx, in); err != nil {
				t.Fatalf("the call failed: %v", err)
			}
			took := time.Since(start)
			reqs := s.RequestsSince(mark)
			if n := fakegithub.CallsTo(reqs, "", tc.prefix); n > tc.maxCalls {
				t.Errorf("%d calls to %s, want at most %d: %v", n, tc.prefix, tc.maxCalls, fakegithub.CallsByRoute(reqs))
			}
			if took < tc.minWait {
				t.Errorf("tried again after %v; GitHub asked to wait %v", took, tc.minWait)
			}
			if s.PendingFaults() != 0 {
				t.Errorf("%d injected faults never reached GitHub", s.PendingFaults())
			}
		})
	}
}

// TestUnreachableIsBounded: while GitHub cannot be reached, a call is
// tried a few times with backoff and then fails as retryable, without a
// storm of connections; once GitHub is back the same client works.
func TestUnreachableIsBounded(t *testing.T) {
	t.Parallel()
	s, _, in := setup(t)
	ctx := context.Background()
	if _, err := in.Repository(ctx, "octo-org", "widgets"); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	start := time.Now()
	_, err := in.Repository(ctx, "octo-org", "widgets")
	took := time.Since(start)
	if ok, _ := github.IsRetryable(err); err == nil || !ok {
		t.Fatalf("GitHub unreachable: %v, want a retryable error", err)
	}
	if took < time.Second || took > 10*time.Second {
		t.Errorf("gave up after %v; want a few backed-off attempts (about 3.5 s)", took)
	}
	s.Start()
	if _, err := in.Repository(ctx, "octo-org", "widgets"); err != nil {
		t.Fatalf("GitHub back: %v", err)
	}
}

// TestLongRateLimitIsLeftToTheCaller: a Retry-After longer than a call
// may wait is not waited inside the call: it fails at once, retryable
// after what GitHub said, having sent one request.
func TestLongRateLimitIsLeftToTheCaller(t *testing.T) {
	t.Parallel()
	s, _, in := setup(t)
	ctx := context.Background()
	s.FailNext("GET", "/repos/octo-org/widgets", http.StatusForbidden, http.Header{"Retry-After": {"120"}})
	mark := s.RequestCount()
	_, err := in.Repository(ctx, "octo-org", "widgets")
	if ok, after := github.IsRetryable(err); !ok || after != 120*time.Second {
		t.Errorf("403 Retry-After 120: %v (%v), want retryable after 120s", err, after)
	}
	if n := len(s.RequestsSince(mark)); n > 2 { // the token, the call
		t.Errorf("%d requests, want the call once: %v", n, fakegithub.CallsByRoute(s.RequestsSince(mark)))
	}
}

// TestRetriesAreCounted: the metrics say why calls were tried again and
// how many secondary rate limits GitHub answered.
func TestRetriesAreCounted(t *testing.T) {
	t.Parallel()
	s, _, _ := setup(t)
	reg := prometheus.NewRegistry()
	m := github.NewMetrics(reg)
	c, err := github.NewClients(github.AppConfig{AppID: s.AppID(), PrivateKey: s.PrivateKeyPEM(), BaseURL: s.URL(), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := c.Installation(installation)
	ctx := context.Background()
	s.FailNext("GET", "/repos/octo-org/widgets", http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}})
	s.FailNext("GET", "/repos/octo-org/widgets", http.StatusBadGateway, nil)
	if _, err := in.Repository(ctx, "octo-org", "widgets"); err != nil {
		t.Fatal(err)
	}
	s.ExpireTokens()
	if _, err := in.Repository(ctx, "octo-org", "widgets"); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP testfirst_github_retries_total GitHub calls tried again, by reason (server_error, unreachable, secondary_rate_limit, token_expired).
# TYPE testfirst_github_retries_total counter
testfirst_github_retries_total{reason="secondary_rate_limit"} 1
testfirst_github_retries_total{reason="server_error"} 1
testfirst_github_retries_total{reason="token_expired"} 1
# HELP testfirst_github_secondary_rate_limits_total Secondary rate limits GitHub answered (403 with its message, or 429).
# TYPE testfirst_github_secondary_rate_limits_total counter
testfirst_github_secondary_rate_limits_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "testfirst_github_retries_total", "testfirst_github_secondary_rate_limits_total"); err != nil {
		t.Error(err)
	}
	if w := testutil.ToFloat64(m.WaitedSeconds()); w < 1 {
		t.Errorf("waited %v s in all; GitHub asked for 1 s", w)
	}
}

// TestServerErrorIgnoresRateReset: a 502 that carries the rate-limit
// window's reset (GitHub sends it on every answer) is retryable at once,
// not after the window resets an hour later.
func TestServerErrorIgnoresRateReset(t *testing.T) {
	s, _, in := setup(t)
	s.FailNextN(github.DefaultRetryAttempts, "GET", "/repos/octo-org/widgets", http.StatusBadGateway, nil)
	_, err := in.Repository(context.Background(), "octo-org", "widgets")
	if ok, after := github.IsRetryable(err); !ok || after != 0 {
		t.Errorf("502 with X-RateLimit-Reset an hour ahead: %v, retry after %v; want retryable with no wait", err, after)
	}
}

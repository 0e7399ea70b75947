package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

func TestRecentDeliveriesPaginatesUntilSince(t *testing.T) {
	s, c, _ := setup(t)
	now := time.Now().UTC().Truncate(time.Second)
	since := now.Add(-72 * time.Hour)
	// 230 attempts inside the window, newest last, and 120 older ones
	// added before them (so listed after them, newest first).
	for i := range 120 {
		s.AddDelivery(fakegithub.Delivery{GUID: fmt.Sprintf("old-%d", i), Event: "ping", StatusCode: 202, Status: "OK",
			DeliveredAt: since.Add(-time.Duration(120-i) * time.Minute)})
	}
	var want []github.HookDelivery
	for i := range 230 {
		d := fakegithub.Delivery{GUID: fmt.Sprintf("guid-%d", i), Event: "issues", Action: "labeled", InstallationID: installation,
			StatusCode: 502, Status: "Invalid HTTP Response: 502", Redelivery: i%2 == 1, DeliveredAt: since.Add(time.Duration(i+1) * time.Minute)}
		id := s.AddDelivery(d)
		want = append([]github.HookDelivery{{ID: id, GUID: d.GUID, Event: d.Event, Action: d.Action, Installation: installation,
			Status: d.Status, StatusCode: d.StatusCode, DeliveredAt: d.DeliveredAt, Redelivery: d.Redelivery}}, want...)
	}
	got, err := c.RecentDeliveries(context.Background(), since)
	if err != nil {
		t.Fatalf("RecentDeliveries: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RecentDeliveries (-want +got):\n%s", diff)
	}
	// 230 in the window are three pages of 100; the third page holds the
	// first old ones, so listing stops there.
	var pages []string
	for _, r := range s.Requests() {
		if r.Path == "/app/hook/deliveries" {
			pages = append(pages, r.Query.Get("per_page")+" "+r.Query.Get("cursor"))
		}
	}
	if len(pages) != 3 || pages[0] != "100 " {
		t.Errorf("listed pages %q, want 3 of 100 starting without a cursor", pages)
	}
}

func TestRecentDeliveriesEmptyLog(t *testing.T) {
	_, c, _ := setup(t)
	got, err := c.RecentDeliveries(context.Background(), time.Now().Add(-time.Hour))
	if err != nil || len(got) != 0 {
		t.Errorf("RecentDeliveries = %v, %v; want none, nil", got, err)
	}
}

func TestRecentDeliveriesErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		retryable bool
	}{
		{http.StatusBadGateway, true},
		{http.StatusTooManyRequests, true},
		{http.StatusUnauthorized, false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			s, c, _ := setup(t)
			s.AddDelivery(fakegithub.Delivery{GUID: "g", Event: "ping", StatusCode: 500})
			// A server error is tried again inside the call; one that
			// lasts through every attempt is the caller's.
			s.FailNextN(github.DefaultRetryAttempts, "GET", "/app/hook/deliveries", tc.status, nil)
			_, err := c.RecentDeliveries(context.Background(), time.Now().Add(-time.Hour))
			var apiErr *github.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.status {
				t.Fatalf("RecentDeliveries: %v, want an *APIError with status %d", err, tc.status)
			}
			if got, _ := github.IsRetryable(err); got != tc.retryable {
				t.Errorf("retryable = %v, want %v (%v)", got, tc.retryable, err)
			}
		})
	}
}

func TestRedeliver(t *testing.T) {
	s, c, _ := setup(t)
	ctx := context.Background()
	id := s.AddDelivery(fakegithub.Delivery{GUID: "g-1", Event: "issues", StatusCode: 503})
	if err := c.Redeliver(ctx, id); err != nil {
		t.Fatalf("Redeliver: %v (GitHub's 202 must count as success)", err)
	}
	if diff := cmp.Diff([]int64{id}, s.Redeliveries()); diff != "" {
		t.Errorf("redeliveries (-want +got):\n%s", diff)
	}
	err := c.Redeliver(ctx, id+1000)
	if !errors.Is(err, github.ErrNotFound) {
		t.Errorf("Redeliver of an unknown attempt: %v, want ErrNotFound", err)
	}
	s.FailNext("POST", "/app/hook/deliveries/", http.StatusBadGateway, nil)
	if retry, _ := github.IsRetryable(c.Redeliver(ctx, id)); !retry {
		t.Error("Redeliver on a 502: want a retryable error")
	}
}

package handlers

import (
	"testing"
	"time"
)

// TestSetupStates: a state is good once, for an hour, and a flood of page
// views forgets the oldest first.
func TestSetupStates(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSetupStates(func() time.Time { return now })
	a, b := s.issue(), s.issue()
	if a == b || len(a) != 43 {
		t.Fatalf("states %q, %q: want two distinct 256-bit values", a, b)
	}
	if _, ok := s.take(a); !ok {
		t.Error("a fresh state was refused")
	}
	if _, ok := s.take(a); ok {
		t.Error("a state was taken twice")
	}
	release, ok := s.take(b)
	if !ok {
		t.Fatal("b refused")
	}
	release()
	if _, ok := s.take(b); !ok {
		t.Error("a released state was refused")
	}
	if _, ok := s.take("forged"); ok {
		t.Error("a forged state was taken")
	}

	old := s.issue()
	now = now.Add(setupStateTTL)
	if _, ok := s.take(old); ok {
		t.Error("an hour-old state was taken")
	}

	first := s.issue()
	now = now.Add(time.Second)
	var last string
	for range maxSetupStates {
		last = s.issue()
	}
	if len(s.issued) != maxSetupStates {
		t.Errorf("%d states kept, want at most %d", len(s.issued), maxSetupStates)
	}
	if _, ok := s.take(first); ok {
		t.Error("the oldest state survived the flood")
	}
	if _, ok := s.take(last); !ok {
		t.Error("the newest state was forgotten")
	}
}

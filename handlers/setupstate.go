package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// setupStateTTL is how long a registration may take on GitHub's page:
// GitHub keeps the code it returns for an hour.
const setupStateTTL = time.Hour

// maxSetupStates bounds the states kept: every view of the setup page
// issues one, and anyone who reaches the page can view it.
const maxSetupStates = 1000

// setupStates are the state values handed to GitHub with a manifest. Each
// is random, kept in memory, good once and for setupStateTTL: a redirect
// back from GitHub must carry one this process issued.
type setupStates struct {
	mu     sync.Mutex
	now    func() time.Time
	issued map[string]time.Time
}

func newSetupStates(now func() time.Time) *setupStates {
	return &setupStates{now: now, issued: map[string]time.Time{}}
}

// issue returns a fresh state, forgetting expired ones and, when full, the
// oldest.
func (s *setupStates) issue() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	state := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var oldest string
	for st, at := range s.issued {
		if now.Sub(at) >= setupStateTTL {
			delete(s.issued, st)
			continue
		}
		if oldest == "" || at.Before(s.issued[oldest]) {
			oldest = st
		}
	}
	if len(s.issued) >= maxSetupStates {
		delete(s.issued, oldest)
	}
	s.issued[state] = now
	return state
}

// take reports whether state was issued here and is unexpired, and uses
// it up; release gives it back.
func (s *setupStates) take(state string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.issued[state]
	if !ok {
		return nil, false
	}
	delete(s.issued, state)
	if s.now().Sub(at) >= setupStateTTL {
		return nil, false
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.issued[state] = at
	}, true
}

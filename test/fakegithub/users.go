package fakegithub

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// userID returns a login's stable user id, registering the login as an
// existing GitHub user. Callers hold s.mu.
func (s *Server) userID(login string) int64 {
	key := strings.ToLower(login)
	if id, ok := s.users[key]; ok {
		return id
	}
	id := s.newID()
	s.users[key] = id
	return id
}

// userJSON is the simple user object GitHub embeds everywhere.
func (s *Server) userJSON(login, typ string) obj {
	id := s.userID(login)
	return obj{
		"login":      login,
		"id":         id,
		"node_id":    nodeID("U_", id),
		"avatar_url": "https://avatars.githubusercontent.com/u/" + fmt.Sprint(id) + "?v=4",
		"url":        s.apiURL("users/" + login),
		"html_url":   "https://github.com/" + login,
		"type":       typ,
		"site_admin": false,
	}
}

// botLogin is the login of the app's bot user.
func botLogin() string { return fakeAppSlug + "[bot]" }

// ts formats a time like GitHub: RFC 3339 in UTC, whole seconds.
func ts(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// tsOrNil is ts, or JSON null for the zero time.
func tsOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

// nodeID makes a GraphQL node id for an object.
func nodeID(prefix string, id int64) string {
	return prefix + strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("fake%d", id))), "=")
}

// requestID makes an X-GitHub-Request-Id.
func requestID(seq int64) string {
	return fmt.Sprintf("FA4E:%04X:%06X:%06X:%08X", seq%0xFFFF, seq*7919%0xFFFFFF, seq*104729%0xFFFFFF, seq)
}

// strOrNil is s, or JSON null for "".
func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// UserID returns login's user id, registering the login as an existing
// GitHub user.
func (s *Server) UserID(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userID(login)
}

// ClaimLogin gives login to a new account, as GitHub lets anyone take a
// login its owner renamed away from: the login's user id changes. The
// login's repository permissions stay as set (SetPermission them anew).
// It returns the new id.
func (s *Server) ClaimLogin(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newID()
	s.users[strings.ToLower(login)] = id
	return id
}

// RenameLogin renames the account that holds login to newLogin, as GitHub
// lets a user do: the account keeps its user id and its repository
// permissions; the old login is free for anyone (ClaimLogin) and, until
// claimed, names no one.
func (s *Server) RenameLogin(login, newLogin string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	old, key := strings.ToLower(login), strings.ToLower(newLogin)
	id, ok := s.users[old]
	if !ok {
		s.fatalf("RenameLogin: no user %q", login)
	}
	if _, taken := s.users[key]; taken {
		s.fatalf("RenameLogin: %q is taken", newLogin)
	}
	delete(s.users, old)
	s.users[key] = id
	for _, rp := range s.repos {
		if p, ok := rp.perms[old]; ok {
			delete(rp.perms, old)
			rp.perms[key] = p
		}
	}
}

package app

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// minSessionKey is the shortest key that may sign session cookies.
const minSessionKey = 32

// readSessionKey reads a session key file: its content, surrounding
// whitespace trimmed, of at least minSessionKey bytes.
func readSessionKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key := bytes.TrimSpace(data)
	if len(key) < minSessionKey {
		return nil, fmt.Errorf("%s holds %d bytes, want %d or more: write a random key, e.g. head -c 32 /dev/urandom | base64 > %s", path, len(key), minSessionKey, path)
	}
	return key, nil
}

// cardSessionKey returns the configured session key, or the one at path,
// creating it (0600, in a 0700 directory) on first use.
func cardSessionKey(configured []byte, path string) ([]byte, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	key, err := readSessionKey(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session key: %w: set TESTFIRST_SESSION_KEY_FILE", err)
	}
	b := make([]byte, minSessionKey)
	rand.Read(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return readSessionKey(path) // another process made it meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("session key: %w: set TESTFIRST_SESSION_KEY_FILE", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(b) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("session key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("session key %s: %w", path, err)
	}
	return readSessionKey(path)
}

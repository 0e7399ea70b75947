package test

import (
	"os"
	"testing"
)

// TestMain removes what the process built once for all its tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinary.dir != "" {
		os.RemoveAll(builtBinary.dir)
	}
	os.Exit(code)
}

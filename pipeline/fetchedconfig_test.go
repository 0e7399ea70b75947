package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// configFile is a ConfigSource holding one file, or failing.
type configFile struct {
	data []byte
	err  error
}

func (f configFile) File(context.Context, string, string, string, string) ([]byte, error) {
	return f.data, f.err
}

func TestFetchConfig(t *testing.T) {
	failed := errors.New("GitHub answered 502")
	tests := []struct {
		name                 string
		src                  configFile
		missing, load, parse bool
		policy               string
	}{
		{"no file", configFile{err: fmt.Errorf("get file: %w", fs.ErrNotExist)}, true, false, false, PolicySingle},
		{"GitHub failed", configFile{err: failed}, false, true, false, PolicySingle},
		{"a broken file", configFile{data: []byte("approval:\n  policy: both\n")}, false, false, true, PolicySingle},
		{"a good file", configFile{data: []byte("approval:\n  policy: enforce\n")}, false, false, false, PolicyEnforce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := FetchConfig(t.Context(), tt.src, "octo-org", "widgets", "main")
			if fc.Missing != tt.missing || (fc.LoadError != nil) != tt.load || (fc.ParseError != nil) != tt.parse || fc.Config.Policy != tt.policy {
				t.Errorf("FetchConfig = %+v", fc)
			}
			if tt.load && !errors.Is(fc.LoadError, failed) {
				t.Errorf("LoadError %v does not wrap the failure", fc.LoadError)
			}
		})
	}
}

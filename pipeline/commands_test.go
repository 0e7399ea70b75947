package pipeline

import "testing"

func TestParseCommand(t *testing.T) {
	tests := []struct {
		body  string
		want  Command
		found bool
		known bool
	}{
		{"no command here", "", false, false},
		{"/testfirst status", CommandStatus, true, true},
		{"Please\n  /testfirst   REGRADE now\n/testfirst status", CommandRegrade, true, true},
		{"/testfirst", "", true, false},
		{"/testfirst deploy", "deploy", true, false},
		{"/testfirsts status", "", false, false},
		{"say /testfirst status inline", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			got, found := ParseCommand(tt.body)
			if got != tt.want || found != tt.found || got.Known() != tt.known {
				t.Errorf("ParseCommand = %q, %t (known %t); want %q, %t (known %t)", got, found, got.Known(), tt.want, tt.found, tt.known)
			}
		})
	}
}

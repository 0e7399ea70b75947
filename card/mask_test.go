package card

import "testing"

func TestMaskCanaries(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# testfirst-canary: tfc-0123456789abcdef0123456789abcdef\n", "# testfirst-canary: tfc-masked\n"},
		{"  #testfirst-canary:abcdefgh12\n", "  #testfirst-canary:tfc-masked\n"},
		{"printed tfc-0123456789abcdef0123456789abcdef in a test", "printed tfc-masked in a test"},
		{"tfc-masked stays", "tfc-masked stays"},
		{"tfc-short is not a token", "tfc-short is not a token"},
		{"no canary", "no canary"},
	}
	for _, tt := range tests {
		if got := maskCanaries(tt.in); got != tt.want {
			t.Errorf("maskCanaries(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

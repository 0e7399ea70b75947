package wrapper

import (
	"errors"
	"strings"
	"testing"
)

// TestProveIsolation: the uid split is proven from /proc's status lines,
// and, on a runtime whose /proc lacks some (gVisor has no NoNewPrivs and no
// CapAmb line), from what the kernel guarantees; a missing line is never
// taken for a good value.
func TestProveIsolation(t *testing.T) {
	id := identity{split: true, uid: 123456}
	linux := map[string]string{"Uid": "123456\t123456\t123456\t123456", "Gid": "123456\t123456\t123456\t123456", "Groups": "",
		"CapPrm": "0000000000000000", "CapEff": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"}
	gvisor := map[string]string{}
	for k, v := range linux {
		if k != "CapAmb" && k != "NoNewPrivs" {
			gvisor[k] = v
		}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range m {
			out[a] = b
		}
		out[k] = v
		return out
	}
	yes := func() (bool, error) { return true, nil }
	no := func() (bool, error) { return false, nil }
	fails := func() (bool, error) { return false, errors.New("EINVAL") }
	tests := []struct {
		name     string
		st       map[string]string
		own      func() (bool, error)
		proven   bool
		inferred string
	}{
		{"linux", linux, no, true, ""},
		{"linux without no_new_privs", with(linux, "NoNewPrivs", "0"), yes, false, ""},
		{"linux with an ambient capability", with(linux, "CapAmb", "0000000000000080"), yes, false, ""},
		{"gvisor, wrapper with no_new_privs", gvisor, yes, true, "no_new_privs from the wrapper's own"},
		{"gvisor, wrapper without no_new_privs", gvisor, no, false, "not set on the wrapper"},
		{"gvisor, prctl fails", gvisor, fails, false, "prctl failed"},
		{"gvisor, a permitted capability", with(gvisor, "CapPrm", "0000000000000080"), yes, false, ""},
		{"gvisor, root", with(gvisor, "Uid", "0\t0\t0\t0"), yes, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iso := proveIsolation(tt.st, id, tt.own)
			if iso.Proven != tt.proven {
				t.Errorf("proven %v; want %v (%+v)", iso.Proven, tt.proven, iso)
			}
			if !strings.Contains(iso.Inferred, tt.inferred) || (tt.inferred == "" && iso.Inferred != "" && tt.st["NoNewPrivs"] != "") {
				t.Errorf("inferred %q; want %q", iso.Inferred, tt.inferred)
			}
		})
	}
}

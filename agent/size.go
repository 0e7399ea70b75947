package agent

import (
	"fmt"
	"strconv"
	"strings"
)

// parseMemory reads a memory size such as "2GiB", "512m", "1g" or "65536"
// (bytes): k, m, g, t in powers of 1024, optionally followed by "b" or
// "ib".
func parseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, sfx := t, ""
	if i >= 0 {
		num, sfx = t[:i], strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	mul := map[string]float64{"": 1, "b": 1}
	for j, u := range []string{"k", "m", "g", "t"} {
		f := float64(int64(1) << (10 * (j + 1)))
		mul[u], mul[u+"b"], mul[u+"ib"] = f, f, f
	}
	m, ok := mul[sfx]
	if !ok {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return int64(v * m), nil
}

package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// binarySizes are the multiples a memory size may name: k, m, g, t, p, in
// powers of 1024.
var binarySizes = map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40, 'p': 1 << 50}

// parseMemory reads a memory size such as "512m", "1g", "1.5GiB" or
// "65536" (bytes), as the sandbox's own flags spell them. It reads what
// docker/go-units' RAMInBytes reads, without pulling the engine's packages
// into the domain.
func parseMemory(s string) (int64, error) {
	sep := strings.LastIndexAny(s, "01234567890. ")
	if sep == -1 {
		return -1, fmt.Errorf("invalid size: '%s'", s)
	}
	num, sfx := s[:sep+1], s[sep+1:]
	if s[sep] == ' ' {
		num = s[:sep]
	}
	size, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return -1, err
	}
	if size < 0 {
		return -1, fmt.Errorf("invalid size: '%s'", s)
	}
	if sfx == "" {
		return int64(size), nil
	}
	bad := fmt.Errorf("invalid suffix: '%s'", strings.ToLower(sfx))
	if len(sfx) > 3 {
		return -1, bad
	}
	sfx = strings.ToLower(sfx)
	if sfx[0] == 'b' {
		if len(sfx) > 1 {
			return -1, bad
		}
		return int64(size), nil
	}
	mul, ok := binarySizes[sfx[0]]
	if !ok || (len(sfx) == 2 && sfx[1] != 'b') || (len(sfx) == 3 && sfx[1:] != "ib") {
		return -1, bad
	}
	return int64(size * float64(mul)), nil
}

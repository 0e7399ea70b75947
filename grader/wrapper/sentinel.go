package wrapper

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// sentinelModule makes a test module with random names holding one test
// that must pass and one that must fail. If the runner reports either the
// other way round, or not at all, something bent it.
func sentinelModule() (file string, source []byte, sentinels []Sentinel) {
	id := func() string {
		b := make([]byte, 8)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	module := "test_" + id()
	pass, fail := "test_"+id(), "test_"+id()
	source = fmt.Appendf(nil, "def %s():\n    assert sum([1, 2]) == 3\n\n\ndef %s():\n    assert sum([1, 2]) == 4\n", pass, fail)
	return module + ".py", source, []Sentinel{
		{ClassName: module, Name: pass, MustPass: true},
		{ClassName: module, Name: fail, MustPass: false},
	}
}

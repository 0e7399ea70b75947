package wrapper

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
)

// CheckStatic checks that bin is a statically linked Linux executable, as
// the wrapper must be to run in any image.
func CheckStatic(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("wrapper binary is not a Linux executable: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("wrapper binary is dynamically linked: build it with CGO_ENABLED=0 (make build)")
		}
	}
	return nil
}

package sandbox

import (
	"io"
	"strings"
	"testing"
)

func TestLimitedBuffer(t *testing.T) {
	b := NewLimitedBuffer(5)
	if _, err := io.Copy(b, strings.NewReader("abcdefgh")); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Write([]byte("ij")); n != 2 || err != nil {
		t.Errorf("a write past the limit = %d, %v; want it taken and dropped", n, err)
	}
	got, cut := b.Seal()
	if string(got) != "abcde" || !cut {
		t.Errorf("Seal = %q, %t; want \"abcde\", true", got, cut)
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Error("a write after Seal succeeded")
	}
	if got, cut := NewLimitedBuffer(0).Seal(); len(got) != 0 || cut {
		t.Errorf("an empty buffer seals %q, %t", got, cut)
	}
}

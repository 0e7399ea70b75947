package grader

import (
	"bytes"
	"context"
	"debug/elf"
	_ "embed"
	"errors"
	"fmt"
	"io"

	"github.com/testfirst-app/testfirst/grader/wrapper"
	"github.com/testfirst-app/testfirst/sandbox"
)

//go:embed pyplugin/testfirst_syspath.py
var pluginSource []byte

//go:embed pyplugin/testfirst_evidence.py
var evidencePluginSource []byte

// BaseRecipe is the grader's base image: Debian's python3 and pytest, built
// locally because no image registry is needed.
var BaseRecipe = sandbox.DebianRecipe{
	Name:     "testfirst-python",
	Suite:    "bookworm",
	Variant:  "apt",
	Packages: []string{"python3", "python3-pytest"},
}

// ImageName is the name of grader images; the tag is a content hash.
const ImageName = "testfirst-grader"

// imageBuilder is what the grader needs to build its image.
type imageBuilder interface {
	EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error)
	EnsureLayer(ctx context.Context, l sandbox.Layer) (ref, id string, err error)
}

// EnsureImage returns the grader image built from base (BaseRecipe's image
// when base is empty) plus the wrapper binary and the pytest plugin,
// building what is missing. Progress goes to progress.
func EnsureImage(ctx context.Context, b imageBuilder, base string, wrapperBinary []byte, progress io.Writer) (ref, id string, err error) {
	if err := CheckStatic(wrapperBinary); err != nil {
		return "", "", err
	}
	if base == "" {
		if base, err = b.EnsureDebianImage(ctx, BaseRecipe, progress); err != nil {
			return "", "", err
		}
	}
	return b.EnsureLayer(ctx, sandbox.Layer{
		Name: ImageName,
		Base: base,
		Files: []sandbox.LayerFile{
			{Path: wrapper.BinaryPath, Mode: 0o755, Data: wrapperBinary},
			{Path: "/usr/lib/python3/dist-packages/" + wrapper.PluginModule + ".py", Mode: 0o644, Data: pluginSource},
			{Path: "/usr/lib/python3/dist-packages/" + wrapper.EvidenceModule + ".py", Mode: 0o644, Data: evidencePluginSource},
		},
		Entrypoint: []string{wrapper.BinaryPath},
	})
}

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

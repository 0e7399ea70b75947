package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// DebianRecipe describes a root filesystem built from Debian's packages
// with mmdebstrap. No image registry is needed: the tarball mmdebstrap
// writes is imported through the engine API.
type DebianRecipe struct {
	// Name is the image name; the tag is a hash of the recipe.
	Name string
	// Suite is the Debian suite, e.g. "bookworm".
	Suite string
	// Variant is mmdebstrap's --variant.
	Variant string
	// Packages are installed beyond the variant's.
	Packages []string
}

// MmdebstrapArgs are the arguments that build the recipe to a tar stream
// on stdout.
func (r DebianRecipe) MmdebstrapArgs() []string {
	return []string{
		"--variant=" + r.Variant,
		"--include=" + strings.Join(r.Packages, ","),
		"--format=tar",
		r.Suite, "-",
	}
}

// Ref is the image reference, tagged by a hash of the recipe: of
// mmdebstrap's arguments, not of the packages it installs, which Debian
// may update under the same recipe.
func (r DebianRecipe) Ref() string {
	h := sha256.New()
	fmt.Fprintf(h, "mmdebstrap\x00%s", strings.Join(r.MmdebstrapArgs(), "\x00"))
	return r.Name + ":" + hex.EncodeToString(h.Sum(nil))[:16]
}

// LayerFile is a file added to an image by a Layer.
type LayerFile struct {
	Path string // absolute
	Mode int64
	Data []byte
}

// Layer is an image made of a base image plus a few files and an
// entrypoint. It is how the wrapper joins the grader image.
type Layer struct {
	// Name is the image name; the tag is a hash of the base image id, the
	// files and the entrypoint.
	Name       string
	Base       string
	Files      []LayerFile
	Entrypoint []string
}

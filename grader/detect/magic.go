package detect

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"path"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// binaryKind is a kind of file known by its magic bytes.
type binaryKind struct {
	// reason is the tamper signal it raises.
	reason string
	// named reports whether f's name already raises a signal that says as
	// much, so its content need not.
	named func(name string) bool
}

// Kinds of binary content the scan flags whatever the file is called: an
// archive on sys.path is importable, a shared object is native code, and
// none of them is read by the pattern scan.
var (
	kindZip = binaryKind{reason: report.ReasonZip}
	kindELF = binaryKind{reason: report.ReasonELF, named: func(n string) bool {
		return strings.HasSuffix(n, ".so")
	}}
	kindPyc = binaryKind{reason: report.ReasonPyc, named: func(n string) bool {
		return isCompiledPython(n) || underPycache(n)
	}}
	kindGzip  = binaryKind{reason: report.ReasonGzip}
	kindBzip2 = binaryKind{reason: report.ReasonBzip2}
	kindXz    = binaryKind{reason: report.ReasonXz}
	kindZstd  = binaryKind{reason: report.ReasonZstd}
	kind7z    = binaryKind{reason: report.Reason7z}
	kindTar   = binaryKind{reason: report.ReasonTar}
)

// binaryKinds lists every kind.
var binaryKinds = []binaryKind{kindZip, kindELF, kindPyc, kindGzip, kindBzip2, kindXz, kindZstd, kind7z, kindTar}

// zipTailWindow is how far from the end zipimport looks for the end of a
// zip's central directory: the record plus the largest comment.
const zipTailWindow = 22 + 1<<16

// sniffBinary returns the kind of binary content data holds, if any.
func sniffBinary(data []byte) (binaryKind, bool) {
	has := func(prefix string) bool { return bytes.HasPrefix(data, []byte(prefix)) }
	switch {
	case has("PK\x03\x04"), has("PK\x05\x06"), has("PK\x07\x08"):
		return kindZip, true
	case has("\x7fELF"):
		return kindELF, true
	case has("\x1f\x8b"):
		return kindGzip, true
	case has("BZh") && len(data) > 3 && '1' <= data[3] && data[3] <= '9':
		return kindBzip2, true
	case has("\xfd7zXZ\x00"):
		return kindXz, true
	case has("\x28\xb5\x2f\xfd"):
		return kindZstd, true
	case has("7z\xbc\xaf\x27\x1c"):
		return kind7z, true
	case len(data) >= 262 && bytes.Equal(data[257:262], []byte("ustar")):
		return kindTar, true
	case isPycHeader(data):
		return kindPyc, true
	}
	// zipimport reads a zip from its end, so data before it does not hide it.
	tail := data[max(0, len(data)-zipTailWindow):]
	if bytes.Contains(tail, []byte("PK\x05\x06")) && bytes.Contains(data, []byte("PK\x01\x02")) {
		return kindZip, true
	}
	return binaryKind{}, false
}

// isPycHeader reports whether data starts like a CPython 3 .pyc: a magic
// number (3000 and up for Python 3) followed by "\r\n", then at least the
// flags, date and size words.
func isPycHeader(data []byte) bool {
	if len(data) < 16 || data[2] != '\r' || data[3] != '\n' {
		return false
	}
	magic := binary.LittleEndian.Uint16(data)
	return magic >= 3000 && magic < 4000
}

// binarySignal flags f by its content when its name does not already say
// what it is.
func binarySignal(f *tree.File) string {
	kind, ok := sniffBinary(f.Data)
	if !ok || kind.named != nil && kind.named(f.Path) {
		return ""
	}
	return kind.reason
}

// Bounds of the scan of a zip archive's members: a zip bomb or an archive of
// many members costs no more than this, and what is past the bounds is
// flagged as unscanned.
const (
	maxZipMembers    = 1000
	maxZipTotalBytes = 16 << 20
)

// zipMemberSignals reads the *.py and *.pth members of a zip archive as
// Python would import them from it and returns their pattern signals, so
// that a payload inside an archive under an innocent name is seen.
func zipMemberSignals(data []byte) []string {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return []string{report.ReasonZipUnscanned}
	}
	var out []string
	total := 0
	for i, m := range zr.File {
		ext := path.Ext(m.Name)
		if ext != ".py" && ext != ".pth" {
			continue
		}
		if i >= maxZipMembers || m.UncompressedSize64 > MaxPatternScanBytes || total+int(m.UncompressedSize64) > maxZipTotalBytes {
			return append(out, report.ReasonZipUnscanned)
		}
		rc, err := m.Open()
		if err != nil {
			return append(out, report.ReasonZipUnscanned)
		}
		body, err := io.ReadAll(io.LimitReader(rc, MaxPatternScanBytes+1))
		rc.Close()
		if err != nil {
			return append(out, report.ReasonZipUnscanned)
		}
		total += len(body)
		out = append(out, patternSignals(&tree.File{Path: m.Name, Data: body})...)
	}
	return out
}

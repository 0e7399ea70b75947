package agent

import (
	"bytes"
	"fmt"
	"io/fs"

	"github.com/testfirst-app/testfirst/tree"
)

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// maxDiffCells bounds the line-matching table of one file; a larger
// change is written as the old lines removed and the new ones added.
const maxDiffCells = 4 << 20

// unifiedDiff writes changes against base as a git-style patch (a/ and b/
// prefixes, file modes, "Binary files ... differ" for binary content), so
// that git apply applies it to the base.
func unifiedDiff(base *tree.Tree, changes []Change) []byte {
	var out bytes.Buffer
	for _, c := range changes {
		var old *tree.File
		if base != nil {
			old, _ = base.Lookup(c.Path)
		}
		var oldData, newData []byte
		oldMode, newMode := "", ""
		if old != nil {
			oldData, oldMode = fileBytes(old), gitMode(old.Mode)
		}
		if !c.Deleted {
			newData, newMode = c.Content, changeMode(c)
		}
		if old == nil && c.Deleted {
			continue
		}
		fmt.Fprintf(&out, "diff --git a/%s b/%s\n", c.Path, c.Path)
		from, to := "a/"+c.Path, "b/"+c.Path
		switch {
		case old == nil:
			fmt.Fprintf(&out, "new file mode %s\n", newMode)
			from = "/dev/null"
		case c.Deleted:
			fmt.Fprintf(&out, "deleted file mode %s\n", oldMode)
			to = "/dev/null"
		case oldMode != newMode:
			fmt.Fprintf(&out, "old mode %s\nnew mode %s\n", oldMode, newMode)
		}
		if old != nil && !c.Deleted && bytes.Equal(oldData, newData) {
			continue
		}
		if bytes.IndexByte(oldData, 0) >= 0 || bytes.IndexByte(newData, 0) >= 0 {
			fmt.Fprintf(&out, "Binary files %s and %s differ\n", from, to)
			continue
		}
		if len(oldData) == 0 && len(newData) == 0 {
			continue
		}
		fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
		writeHunks(&out, splitLines(oldData), splitLines(newData))
	}
	return out.Bytes()
}

func fileBytes(f *tree.File) []byte {
	if f.IsSymlink() {
		return []byte(f.Link)
	}
	return f.Data
}

func gitMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "120000"
	case m&0o111 != 0:
		return "100755"
	}
	return "100644"
}

func changeMode(c Change) string {
	switch {
	case c.Symlink:
		return "120000"
	case c.Executable:
		return "100755"
	}
	return "100644"
}

// splitLines splits b after each newline; the last line may lack one.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i+1])
		b = b[i+1:]
	}
	return lines
}

// edit is one line of the edit script: ' ' kept, '-' removed, '+' added.
type edit struct {
	kind byte
	line []byte
}

// editScript matches a's and b's lines (common prefix and suffix first,
// then a longest common subsequence of the middle).
func editScript(a, b [][]byte) []edit {
	p := 0
	for p < len(a) && p < len(b) && bytes.Equal(a[p], b[p]) {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && bytes.Equal(a[len(a)-1-s], b[len(b)-1-s]) {
		s++
	}
	var out []edit
	for _, l := range a[:p] {
		out = append(out, edit{' ', l})
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > maxDiffCells {
		for _, l := range ma {
			out = append(out, edit{'-', l})
		}
		for _, l := range mb {
			out = append(out, edit{'+', l})
		}
	} else {
		// lcs[i][j]: the longest common subsequence of ma[i:] and mb[j:].
		w := len(mb) + 1
		lcs := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if bytes.Equal(ma[i], mb[j]) {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && bytes.Equal(ma[i], mb[j]):
				out = append(out, edit{' ', ma[i]})
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				out = append(out, edit{'-', ma[i]})
				i++
			default:
				out = append(out, edit{'+', mb[j]})
				j++
			}
		}
	}
	for _, l := range a[len(a)-s:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// writeHunks writes the hunks that turn a into b.
func writeHunks(out *bytes.Buffer, a, b [][]byte) {
	ed := editScript(a, b)
	// oldAt[k] and newAt[k] count the old and new lines before edit k.
	oldAt, newAt := make([]int, len(ed)+1), make([]int, len(ed)+1)
	for k, e := range ed {
		oldAt[k+1], newAt[k+1] = oldAt[k], newAt[k]
		if e.kind != '+' {
			oldAt[k+1]++
		}
		if e.kind != '-' {
			newAt[k+1]++
		}
	}
	for k := 0; k < len(ed); {
		if ed[k].kind == ' ' {
			k++
			continue
		}
		start := max(0, k-diffContext)
		end := k // one past the last change of the hunk
		for j := k; j < len(ed); j++ {
			if ed[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		stop := min(len(ed), end+diffContext)
		oldN, newN := oldAt[stop]-oldAt[start], newAt[stop]-newAt[start]
		oldStart, newStart := oldAt[start]+1, newAt[start]+1
		if oldN == 0 {
			oldStart--
		}
		if newN == 0 {
			newStart--
		}
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(oldStart, oldN), hunkRange(newStart, newN))
		for _, e := range ed[start:stop] {
			out.WriteByte(e.kind)
			out.Write(e.line)
			if !bytes.HasSuffix(e.line, []byte("\n")) {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = stop
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

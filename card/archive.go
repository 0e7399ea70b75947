package card

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/report"
)

// TestsArchive implements handlers.Cards: version k's tests as the writer
// wrote them (the store's canary lines, masked on the card, taken out),
// with the reference patch, for those who may see the card: a reviewer
// grades a pull request's head with them on their own machine
// (reproduceCommand). Readers of the repository get ErrNotFound.
func (s *Service) TestsArchive(ctx context.Context, viewer string, ref handlers.TicketRef, k int) ([]byte, error) {
	ct, err := s.resolve(ctx, viewer, ref)
	if err != nil {
		return nil, err
	}
	card, err := s.store.Card(ctx, ct.st, k)
	if err != nil {
		return nil, handlers.ErrNotFound
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Unix(0, 0).UTC()})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	for _, f := range card.Files {
		if err := add("tests/"+f.Path, withoutCanaryLines(f.Data)); err != nil {
			return nil, err
		}
	}
	if len(card.Reference) > 0 {
		if err := add("reference.patch", card.Reference); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withoutCanaryLines takes out the lines the store added (a canary, masked
// on the card's copy): what is left is the file as its writer wrote it.
func withoutCanaryLines(data []byte) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	for _, l := range lines {
		if detect.CanaryLine.MatchString(strings.TrimRight(l, "\n")) {
			continue
		}
		b.WriteString(l)
	}
	return []byte(b.String())
}

// reproduceCommand is how someone with a version's tests grades a pull
// request's head again on their own machine, with the bounds the grade ran
// with: the head checked out, the tests unpacked, testfirst grade.
func reproduceCommand(pr int, head string, version int, settings *report.Settings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "git fetch origin pull/%d/head && git checkout %s\n", pr, head)
	fmt.Fprintf(&b, "unzip -o tests-v%d.zip -d /tmp/testfirst-v%d    # the tests of v%d, downloaded from this page\n", version, version, version)
	b.WriteString("testfirst grade --repo . --tests /tmp/testfirst-v" + fmt.Sprint(version) + "/tests")
	if settings != nil {
		fmt.Fprintf(&b, " --timeout %s --memory %d --cpus %g --pids %d",
			time.Duration(settings.TimeoutSeconds*float64(time.Second)).String(), settings.Memory, float64(settings.NanoCPUs)/1e9, settings.Pids)
	}
	b.WriteString("\n")
	return b.String()
}

package handlers

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
)

// Bounds of an upload: the whole form, and the files it unpacks to.
const (
	maxUpload         = 16 << 20
	maxUploadFiles    = 1000
	maxUnpackedUpload = 32 << 20
)

// uploadForm shows the upload page: files, the criteria map prefilled
// with the criteria, a reference patch.
func (c *Card) uploadForm(w http.ResponseWriter, r *http.Request) {
	viewer, t, _, ok := c.viewerTicket(w, r)
	if !ok {
		return
	}
	page, err := c.cards.UploadForm(r.Context(), viewer, t)
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "upload", pageData{Title: "Upload tests for " + t.String(), Viewer: viewer, Upload: page, Mapped: page.Mapped})
}

// upload reads the form and stores the version; a refused upload shows
// the form again with why and the criteria as they were typed.
func (c *Card) upload(w http.ResponseWriter, r *http.Request) {
	viewer, t, _, ok := c.viewerTicket(w, r)
	if !ok {
		return
	}
	page, err := c.cards.UploadForm(r.Context(), viewer, t)
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	mapped := map[string]string{}
	refuse := func(msg string) {
		c.render(w, r, http.StatusBadRequest, "upload", pageData{Title: "Upload tests for " + t.String(), Viewer: viewer, Upload: page,
			Refusal: msg + " Nothing was stored; choose the files again (a browser does not keep them) and upload.", Mapped: mapped})
	}
	if err := r.ParseMultipartForm(maxUpload); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(fmt.Sprintf("The upload is larger than %d MiB: a version holds at most 16 MiB of tests.", maxUpload>>20))
			return
		}
		refuse("The form could not be read: " + err.Error() + ".")
		return
	}
	defer r.MultipartForm.RemoveAll()
	u := Upload{Criteria: map[string][]string{}}
	for key, vals := range r.MultipartForm.Value {
		id, ok := strings.CutPrefix(key, "criterion.")
		if !ok || len(vals) == 0 {
			continue
		}
		mapped[id] = vals[0]
		if ids := strings.Fields(strings.ReplaceAll(vals[0], ",", " ")); len(ids) > 0 {
			u.Criteria[id] = ids
		}
	}
	if len(u.Criteria) == 0 {
		u.Criteria = nil
	}
	files, err := uploadedFiles(r)
	if err != nil {
		refuse(err.Error())
		return
	}
	u.Files = files
	if refs := r.MultipartForm.File["reference"]; len(refs) > 0 && refs[0].Size > 0 {
		data, err := readPart(refs[0].Open)
		if err != nil {
			refuse("The reference patch could not be read: " + err.Error() + ".")
			return
		}
		u.Reference = data
	} else {
		if page.HasReference && r.MultipartForm.Value["keep_reference"] != nil {
			u.KeepReferenceOf = page.Newest
		}
	}
	k, err := c.cards.Upload(r.Context(), viewer, t, u)
	var refusal *Refusal
	if errors.As(err, &refusal) {
		refuse(refusal.Message)
		return
	}
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.log.InfoContext(r.Context(), "tests uploaded", "ticket", t.String(), "version", k, "login", viewer, "files", len(u.Files))
	http.Redirect(w, r, t.VersionPath(k)+"?decided=uploaded", http.StatusSeeOther)
}

// uploadedFiles reads the test files of the form: several files, or one
// .zip, .tar.gz or .tgz unpacked. Paths must be clean and relative, and
// among them a Python test file.
func uploadedFiles(r *http.Request) ([]UploadFile, error) {
	parts := r.MultipartForm.File["files"]
	var files []UploadFile
	if len(parts) == 1 && isArchive(parts[0].Filename) {
		data, err := readPart(parts[0].Open)
		if err != nil {
			return nil, fmt.Errorf("%s could not be read: %v.", parts[0].Filename, err)
		}
		if files, err = unpack(parts[0].Filename, data); err != nil {
			return nil, fmt.Errorf("%s: %v.", parts[0].Filename, err)
		}
	} else {
		for _, p := range parts {
			if p.Size == 0 && p.Filename == "" {
				continue
			}
			data, err := readPart(p.Open)
			if err != nil {
				return nil, fmt.Errorf("%s could not be read: %v.", p.Filename, err)
			}
			files = append(files, UploadFile{Path: p.Filename, Data: data})
		}
	}
	if len(files) == 0 {
		return nil, errors.New("Choose the test files, or one .zip or .tar.gz of them.")
	}
	hasTest := false
	for _, f := range files {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || path.Clean(f.Path) != f.Path || f.Path == ".." || strings.HasPrefix(f.Path, "../") || strings.Contains(f.Path, "\\") {
			return nil, fmt.Errorf("%q is not a clean relative path: an archive's files must stay inside it (no ../, no absolute paths).", f.Path)
		}
		b := path.Base(f.Path)
		hasTest = hasTest || (strings.HasSuffix(b, ".py") && (strings.HasPrefix(b, "test_") || strings.HasSuffix(b, "_test.py")))
	}
	if !hasTest {
		return nil, errors.New("None of the files is a pytest test file (test_*.py or *_test.py).")
	}
	return files, nil
}

func isArchive(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".zip") || strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tgz")
}

func readPart(open func() (multipart.File, error)) ([]byte, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxUpload+1))
}

// unpack reads the regular files of a zip or gzipped tar archive; a link,
// a device or a path that leaves the archive is refused, and so is an
// archive that unpacks to more than maxUnpackedUpload bytes.
func unpack(name string, data []byte) ([]UploadFile, error) {
	var files []UploadFile
	total := 0
	add := func(p string, r io.Reader) error {
		b, err := io.ReadAll(io.LimitReader(r, int64(maxUnpackedUpload-total+1)))
		if err != nil {
			return err
		}
		if total += len(b); total > maxUnpackedUpload {
			return fmt.Errorf("it unpacks to more than %d MiB", maxUnpackedUpload>>20)
		}
		if len(files) >= maxUploadFiles {
			return fmt.Errorf("it holds more than %d files", maxUploadFiles)
		}
		files = append(files, UploadFile{Path: p, Data: b})
		return nil
	}
	if strings.HasSuffix(strings.ToLower(name), ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, fmt.Errorf("not a zip archive: %v", err)
		}
		for _, f := range zr.File {
			switch {
			case f.FileInfo().IsDir():
				continue
			case !f.Mode().IsRegular():
				return nil, fmt.Errorf("%q is not a regular file: a version holds regular files only", f.Name)
			}
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("%q: %v", f.Name, err)
			}
			err = add(f.Name, rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
		}
		return files, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a gzipped tar archive: %v", err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not a tar archive: %v", err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%q is not a regular file: a version holds regular files only", h.Name)
		}
		if err := add(strings.TrimPrefix(h.Name, "./"), tr); err != nil {
			return nil, err
		}
	}
}

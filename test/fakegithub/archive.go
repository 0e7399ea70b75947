package fakegithub

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"
)

const (
	// codeloadPrefix is the first path segment of the fake's
	// codeload.github.com: tarball downloads.
	codeloadPrefix = "_codeload"
	// rawPrefix is the first path segment of the fake's
	// raw.githubusercontent.com: download_url of contents.
	rawPrefix = "_raw"
	// archiveLinkLifetime is how long a private-repository download link
	// works, as on GitHub.
	archiveLinkLifetime = 5 * time.Minute
)

// archiveLink is one short-lived download link of a private repository.
type archiveLink struct {
	repo      string // repoKey
	sha       string
	expiresAt time.Time
}

// newLink stores a download link token for a commit of a repository.
func (s *Server) newLink(rp *repository, sha string) string {
	tok := strings.TrimPrefix(newTokenValue(), "ghs_")
	s.links[tok] = &archiveLink{repo: repoKey(rp.owner, rp.name), sha: sha, expiresAt: s.now().Add(archiveLinkLifetime)}
	return tok
}

// rawURL is a file's download_url, with its own token like GitHub's.
func (s *Server) rawURL(rp *repository, cm *commit, p string) string {
	return s.ts.URL + "/" + rawPrefix + "/" + rp.fullName() + "/" + cm.sha + "/" + p + "?token=" + s.newLink(rp, cm.sha)
}

// getTarball serves GET /repos/{owner}/{repo}/tarball/{ref}: a 302 to a
// short-lived download link on the fake's codeload.
func (c *call) getTarball() *response {
	cm := c.s.resolveRef(c.repo, c.params["ref"])
	if cm == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	loc := c.s.ts.URL + "/" + codeloadPrefix + "/" + c.repo.fullName() + "/legacy.tar.gz/" + cm.sha + "?token=" + c.s.newLink(c.repo, cm.sha)
	h := http.Header{}
	h.Set("Location", loc)
	h.Set("Content-Type", "text/html;charset=utf-8")
	return &response{status: http.StatusFound, header: h}
}

// serveArchive serves the codeload and raw download links. They need no
// Authorization, only a live token from the link; anything else is a plain
// 404 like codeload's.
func (s *Server) serveArchive(r *http.Request, segs []string) *response {
	notFound := &response{status: http.StatusNotFound, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: []byte("404: Not Found")}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return notFound
	}
	link := s.links[r.URL.Query().Get("token")]
	if link == nil || !s.now().Before(link.expiresAt) {
		return notFound
	}
	switch {
	case segs[0] == codeloadPrefix && len(segs) == 5 && segs[3] == "legacy.tar.gz":
		rp := s.repos[repoKey(segs[1], segs[2])]
		if rp == nil || link.repo != repoKey(rp.owner, rp.name) || link.sha != segs[4] {
			return notFound
		}
		body, err := tarball(rp, s.commits[link.sha])
		if err != nil {
			return &response{status: http.StatusInternalServerError, header: http.Header{}, body: []byte(err.Error())}
		}
		top := archiveTop(rp, link.sha)
		return &response{status: http.StatusOK, body: body, header: http.Header{
			"Content-Type":        {"application/x-gzip"},
			"Content-Disposition": {"attachment; filename=" + top + ".tar.gz"},
			"Etag":                {`"` + link.sha + `"`},
		}}
	case segs[0] == rawPrefix && len(segs) >= 5:
		rp := s.repos[repoKey(segs[1], segs[2])]
		if rp == nil || link.repo != repoKey(rp.owner, rp.name) || link.sha != segs[3] {
			return notFound
		}
		content, ok := s.commits[link.sha].files[strings.Join(segs[4:], "/")]
		if !ok {
			return notFound
		}
		return &response{status: http.StatusOK, body: []byte(content), header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}}
	}
	return notFound
}

// archiveTop is the single top directory of a GitHub tarball.
func archiveTop(rp *repository, sha string) string {
	return rp.owner + "-" + rp.name + "-" + sha[:7]
}

// tarball builds a gzip tarball of a commit the way GitHub (git archive)
// does: a pax global header carrying the commit id, then one top directory
// "{owner}-{repo}-{sha7}/" with directory entries (0775) and files (0664),
// all owned by root and dated at the commit.
func tarball(rp *repository, cm *commit) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	top := archiveTop(rp, cm.sha) + "/"
	if err := tw.WriteHeader(&tar.Header{
		Typeflag:   tar.TypeXGlobalHeader,
		Name:       "pax_global_header",
		PAXRecords: map[string]string{"comment": cm.sha},
	}); err != nil {
		return nil, err
	}
	dirs := map[string]bool{top: true}
	paths := make([]string, 0, len(cm.files))
	for p := range cm.files {
		paths = append(paths, p)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[top+d+"/"] = true
		}
	}
	names := make([]string, 0, len(dirs)+len(paths))
	for d := range dirs {
		names = append(names, d)
	}
	for _, p := range paths {
		names = append(names, top+p)
	}
	sort.Strings(names)
	for _, name := range names {
		hdr := &tar.Header{Name: name, ModTime: cm.time, Uname: "root", Gname: "root"}
		var content string
		if dirs[name] {
			hdr.Typeflag = tar.TypeDir
			hdr.Mode = 0o775
		} else {
			content = cm.files[strings.TrimPrefix(name, top)]
			hdr.Typeflag = tar.TypeReg
			hdr.Mode = 0o664
			hdr.Size = int64(len(content))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

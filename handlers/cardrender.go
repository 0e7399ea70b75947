package handlers

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/*
var staticFiles embed.FS

// pageData is what every page template gets.
type pageData struct {
	Title   string
	Viewer  string
	Status  int
	Message string
	Notice  string
	Refusal string

	Tickets        []TicketItem
	ConfigProblems []ConfigProblem
	Card           *CardPage
	Summary        *TicketSummary
	Files          []highlighted
	Reference      template.HTML
	Grade          *GradePage
	// Install is where to install the app, on the home page.
	Install installLink
	Audit   *AuditPage
	Upload  *UploadPage
	// Mapped is the criteria map an upload form posted, kept when the
	// upload is refused.
	Mapped map[string]string
}

// pages are the parsed templates, one set per page so each can define
// its own "content".
type pages struct {
	byName map[string]*template.Template
	css    []byte
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"seconds": func(s int64) string { return (time.Duration(s) * time.Second).String() },
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"join":   strings.Join,
	"eqfold": strings.EqualFold,
}

func newPages() (*pages, error) {
	p := &pages{byName: map[string]*template.Template{}}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("card template %s: %w", n, err)
		}
		p.byName[base] = t
	}
	own, err := staticFiles.ReadFile("static/card.css")
	if err != nil {
		return nil, err
	}
	var css bytes.Buffer
	css.Write(own)
	if err := formatter.WriteCSS(&css, styles.Get(codeStyle)); err != nil {
		return nil, fmt.Errorf("card code style: %w", err)
	}
	p.css = css.Bytes()
	return p, nil
}

// render writes page name with status.
func (c *Card) render(w http.ResponseWriter, r *http.Request, status int, name string, data pageData) {
	t := c.pages.byName[name]
	var buf bytes.Buffer
	if t == nil {
		c.log.ErrorContext(r.Context(), "card page missing", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.Execute(&buf, data); err != nil {
		c.log.ErrorContext(r.Context(), "card page failed to render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// static serves the stylesheet: the card's own rules and the code style.
func (c *Card) static(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("file") != "card.css" {
		c.notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(c.pages.css)
}

// codeStyle is chroma's style for test files.
const codeStyle = "github"

// formatter renders code with CSS classes (the stylesheet carries the
// colours: no inline styles) and line numbers in a table, so copying the
// code leaves them out.
var formatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithLineNumbers(true), chromahtml.LineNumbersInTable(true))

// highlighted is one file rendered for the card.
type highlighted struct {
	FileView
	HTML template.HTML
	// CanaryLines are the lines that carry the masked canary.
	CanaryLines []int
}

// canaryMarker starts the line the store adds to every Python file.
const canaryMarker = "testfirst-canary:"

// highlightFiles renders each file with syntax highlighting and line
// numbers, marking the canary lines.
func highlightFiles(files []FileView) ([]highlighted, error) {
	out := make([]highlighted, 0, len(files))
	for i, f := range files {
		h := highlighted{FileView: f}
		var ranges [][2]int
		for n, line := range strings.Split(f.Text, "\n") {
			if strings.Contains(line, canaryMarker) {
				h.CanaryLines = append(h.CanaryLines, n+1)
				ranges = append(ranges, [2]int{n + 1, n + 1})
			}
		}
		lexer := lexers.Match(f.Path)
		if lexer == nil {
			lexer = lexers.Fallback
		}
		html, err := render(chroma.Coalesce(lexer), f.Text, chromahtml.HighlightLines(ranges), chromahtml.WithLinkableLineNumbers(true, fmt.Sprintf("f%d-L", i+1)))
		if err != nil {
			return nil, fmt.Errorf("highlight %s: %w", f.Path, err)
		}
		h.HTML = html
		out = append(out, h)
	}
	return out, nil
}

// highlightPatch renders a reference patch as a diff; "" when there is
// none.
func highlightPatch(patch string) template.HTML {
	if patch == "" {
		return ""
	}
	html, err := render(lexers.Get("diff"), patch)
	if err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(patch) + "</pre>")
	}
	return html
}

// render highlights text with lexer. Chroma escapes the text it writes.
func render(lexer chroma.Lexer, text string, opts ...chromahtml.Option) (template.HTML, error) {
	it, err := lexer.Tokenise(nil, text)
	if err != nil {
		return "", err
	}
	f := formatter
	if len(opts) > 0 {
		f = chromahtml.New(append([]chromahtml.Option{chromahtml.WithClasses(true), chromahtml.WithLineNumbers(true), chromahtml.LineNumbersInTable(true)}, opts...)...)
	}
	var buf bytes.Buffer
	if err := f.Format(&buf, styles.Get(codeStyle), it); err != nil {
		return "", err
	}
	return template.HTML(buf.String()), nil
}

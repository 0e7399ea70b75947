// Command pkgstats measures how the module's packages are cut: for each
// package, the lines of its non-test Go files, how many files it has, and
// its file-to-file arrows. File a has an arrow to file b of the same package
// when a uses an identifier (a function, type, variable, constant, method or
// field) that b declares. An arrow is "in a cycle" when b also reaches a
// through other arrows: those are the arrows that make a package's files
// impossible to read top-down.
//
// Run it from the module root, with package patterns as arguments
// (default ./...):
//
//	go run ./scripts/pkgstats ./...
//
// Add -arrows to list every arrow.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// pkg is one package as go list describes it.
type pkg struct {
	dir, path string
	files     []string
}

// stats are the figures of one package.
type stats struct {
	path            string
	files, lines    int
	arrows, inCycle int
	edges           map[[2]string]bool
}

func main() {
	listArrows := flag.Bool("arrows", false, "list every file-to-file arrow")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	pkgs, exports, err := list(patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pkgstats:", err)
		os.Exit(1)
	}
	var all []stats
	total := 0
	for _, p := range pkgs {
		s, err := measure(p, exports)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pkgstats:", err)
			os.Exit(1)
		}
		all = append(all, s)
		total += s.lines
	}
	module := moduleOf(pkgs)
	fmt.Printf("%-28s %6s %6s %6s %7s %8s\n", "package", "files", "lines", "share", "arrows", "in-cycle")
	for _, s := range all {
		fmt.Printf("%-28s %6d %6d %5.1f%% %7d %8d\n", strings.TrimPrefix(strings.TrimPrefix(s.path, module), "/"), s.files, s.lines, 100*float64(s.lines)/float64(total), s.arrows, s.inCycle)
		if *listArrows {
			var keys []string
			for e := range s.edges {
				keys = append(keys, e[0]+" -> "+e[1])
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Println("    " + k)
			}
		}
	}
	fmt.Printf("%-28s %6s %6d\n", "total", "", total)
}

// moduleOf returns the path of the module the packages belong to, as
// the go command names it.
func moduleOf(pkgs []pkg) string {
	if len(pkgs) == 0 {
		return ""
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}}")
	cmd.Dir = pkgs[0].dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// list asks the go command for the packages matching patterns, and for
// the compiled export data of everything they import.
func list(patterns []string) ([]pkg, map[string]string, error) {
	args := append([]string{"list", "-f", "{{.Dir}}\t{{.ImportPath}}\t{{join .GoFiles \" \"}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[2] == "" {
			continue
		}
		pkgs = append(pkgs, pkg{dir: f[0], path: f[1], files: strings.Fields(f[2])})
	}
	args = append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, patterns...)
	out, err = exec.Command("go", args...).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list -export: %w", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return pkgs, exports, nil
}

// measure type-checks p's non-test files and counts its lines and arrows.
func measure(p pkg, exports map[string]string) (stats, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	s := stats{path: p.path, files: len(p.files), edges: map[[2]string]bool{}}
	for _, name := range p.files {
		path := filepath.Join(p.dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return s, err
		}
		s.lines += strings.Count(string(src), "\n")
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return s, err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	var typeErrs []error
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}), Error: func(err error) { typeErrs = append(typeErrs, err) }}
	tp, _ := conf.Check(p.path, fset, files, info)
	if len(typeErrs) > 0 {
		return s, fmt.Errorf("type-check %s: %w", p.path, typeErrs[0])
	}
	add := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != tp || !obj.Pos().IsValid() {
			return
		}
		from := filepath.Base(fset.Position(at).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			return
		}
		// Locals live in the file that uses them; only package-level
		// names, methods and fields make arrows.
		if obj.Parent() != nil && obj.Parent() != tp.Scope() {
			return
		}
		s.edges[[2]string{from, to}] = true
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	for sel, x := range info.Selections {
		add(sel.Sel.Pos(), x.Obj())
	}
	s.arrows = len(s.edges)
	reach := closure(s.edges)
	for e := range s.edges {
		if reach[[2]string{e[1], e[0]}] {
			s.inCycle++
		}
	}
	return s, nil
}

// closure returns every pair (a, b) such that a reaches b along edges.
func closure(edges map[[2]string]bool) map[[2]string]bool {
	next := map[string][]string{}
	for e := range edges {
		next[e[0]] = append(next[e[0]], e[1])
	}
	reach := map[[2]string]bool{}
	for from := range next {
		seen := map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, m := range next[n] {
				if !seen[m] {
					seen[m] = true
					reach[[2]string{from, m}] = true
					stack = append(stack, m)
				}
			}
		}
	}
	return reach
}

package archcheck

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Interface is a named interface and the size of its method set.
type Interface struct {
	// Name is the package directory (slash, relative to the root) and
	// the type name: "forge.Resolver".
	Name    string
	Methods int
}

type declared struct {
	file *ast.File
	dir  string
	spec *ast.InterfaceType
}

// scan holds every interface declared in a module, for resolving
// embedded ones.
type scan struct {
	root, module string
	byKey        map[string]declared // dir + "." + name
	std          types.Importer
}

// Interfaces returns every interface declared in the non-test Go files of
// the module at root (testdata and hidden directories skipped), with its
// method count: embedded interfaces of the module are resolved from their
// source, others (the standard library's) through go/importer.
func Interfaces(root string) ([]Interface, error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("reading the module's go.mod: %w", err)
	}
	fset := token.NewFileSet()
	s := &scan{root: root, byKey: map[string]declared{}, std: importer.ForCompiler(fset, "source", nil)}
	for _, l := range strings.Split(string(gomod), "\n") {
		if m, ok := strings.CutPrefix(l, "module "); ok {
			s.module = strings.TrimSpace(m)
		}
	}
	err = walkSources(root, func(p string) error {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					s.byKey[filepath.Dir(p)+"."+ts.Name.Name] = declared{f, filepath.Dir(p), it}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Interface
	for k, d := range s.byKey {
		names := map[string]bool{}
		if err := s.collect(d, names); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		rel, _ := filepath.Rel(root, k)
		out = append(out, Interface{Name: filepath.ToSlash(rel), Methods: len(names)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// collect adds d's method names, its embedded interfaces' included.
func (s *scan) collect(d declared, names map[string]bool) error {
	for _, m := range d.spec.Methods.List {
		switch t := m.Type.(type) {
		case *ast.FuncType:
			for _, n := range m.Names {
				names[n.Name] = true
			}
		case *ast.Ident:
			if e, ok := s.byKey[d.dir+"."+t.Name]; ok {
				if err := s.collect(e, names); err != nil {
					return err
				}
			}
		case *ast.SelectorExpr:
			pkg, ok := t.X.(*ast.Ident)
			if !ok {
				continue
			}
			path := importPath(d.file, pkg.Name)
			if rest, ok := strings.CutPrefix(path, s.module+"/"); ok {
				if e, ok := s.byKey[filepath.Join(s.root, rest)+"."+t.Sel.Name]; ok {
					if err := s.collect(e, names); err != nil {
						return err
					}
				}
				continue
			}
			p, err := s.std.Import(path)
			if err != nil {
				return fmt.Errorf("resolving %s.%s: %w", path, t.Sel.Name, err)
			}
			if ti, ok := p.Scope().Lookup(t.Sel.Name).Type().Underlying().(*types.Interface); ok {
				for i := 0; i < ti.NumMethods(); i++ {
					names[ti.Method(i).Name()] = true
				}
			}
		}
	}
	return nil
}

// importPath is the path file imports as name.
func importPath(f *ast.File, name string) string {
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if im.Name != nil && im.Name.Name == name || im.Name == nil && filepath.Base(p) == name {
			return p
		}
	}
	return name
}

package mcp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtocolTypesDocumented keeps the protocol types documented: every
// exported type in the files that define the wire types, and every exported
// field of their structs, has a doc comment.
func TestProtocolTypesDocumented(t *testing.T) {
	for _, file := range []string{"protocol.go", "content.go"} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				if ts.Doc == nil && (gd.Doc == nil || len(gd.Specs) > 1) {
					t.Errorf("%s: type %s has no doc comment", fset.Position(ts.Pos()), ts.Name.Name)
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					names := field.Names
					if len(names) == 0 { // embedded: named by its type
						if id := embeddedName(field.Type); id != nil {
							names = []*ast.Ident{id}
						}
					}
					for _, n := range names {
						if n.IsExported() && field.Doc == nil {
							t.Errorf("%s: field %s.%s has no doc comment", fset.Position(n.Pos()), ts.Name.Name, n.Name)
						}
					}
				}
			}
		}
	}
}

// embeddedName returns the identifier naming an embedded field of type x.
func embeddedName(x ast.Expr) *ast.Ident {
	switch x := x.(type) {
	case *ast.Ident:
		return x
	case *ast.StarExpr:
		return embeddedName(x.X)
	case *ast.SelectorExpr:
		return x.Sel
	case *ast.IndexExpr:
		return embeddedName(x.X)
	case *ast.IndexListExpr:
		return embeddedName(x.X)
	}
	return nil
}

// TestPackagesDocumented checks that every public package of the module
// has a package doc comment that starts "Package <name>".
func TestPackagesDocumented(t *testing.T) {
	for _, dir := range []string{".", "../jsonrpc", "../transport", "../schema", "../auth"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("the package in %s has no package doc comment", dir)
		}
	}
}

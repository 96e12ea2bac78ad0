package main

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpToDate fails when mcp/jsonmethods.go is not what the generator
// writes for the current protocol types: run go generate ./mcp.
func TestUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..", "mcp")
	src, test, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{output: src, testOutput: test} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("mcp/%s is out of date: run go generate ./mcp", name)
		}
	}
}

// TestNoEngineMethodsInAPI fails when an exported type of mcp or jsonrpc
// has a method named MarshalJSONTo or UnmarshalJSONFrom, whose parameters
// would put the pre-release engine's jsontext types into the API and onto
// the type's go doc page. The wire encoding goes through unexported
// methods registered in the engine's options instead (see mcp/jsonstd.go).
func TestNoEngineMethodsInAPI(t *testing.T) {
	for _, pkg := range []string{"mcp", "jsonrpc"} {
		t.Run(pkg, func(t *testing.T) {
			dir := filepath.Join("..", "..", pkg)
			names, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			var files []*ast.File
			for _, name := range names {
				if strings.HasSuffix(name, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			p, err := doc.NewFromFiles(fset, files, "github.com/mcpkit/mcpkit/"+pkg, doc.AllMethods)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Types) == 0 {
				t.Fatal("no exported types found")
			}
			for _, typ := range p.Types {
				for _, m := range typ.Methods {
					if m.Name == "MarshalJSONTo" || m.Name == "UnmarshalJSONFrom" {
						t.Errorf("%s.%s.%s is in the API", pkg, typ.Name, m.Name)
					}
				}
			}
		})
	}
}

package mcpkit_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exportedAPI returns the exported API of the package in dir, as go doc
// shows it: each top-level name, each exported method and field as
// "Type.Name" (methods promoted from unexported embedded types included),
// mapped to a short description of its declaration.
func exportedAPI(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/mcpkit/mcpkit/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	api := make(map[string]string)
	sig := func(n ast.Node) string {
		var b strings.Builder
		printer.Fprint(&b, fset, n)
		return b.String()
	}
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			for _, name := range v.Names {
				api[name] = kind
			}
		}
	}
	funcs := func(fs []*doc.Func, recv string) {
		for _, f := range fs {
			name := f.Name
			if recv != "" {
				name = recv + "." + name
			}
			api[name] = sig(f.Decl.Type) // func(...) ...
		}
	}
	values(p.Consts, "const")
	values(p.Vars, "var")
	funcs(p.Funcs, "")
	for _, typ := range p.Types {
		api[typ.Name] = "type"
		values(typ.Consts, "const")
		values(typ.Vars, "var")
		funcs(typ.Funcs, "")
		funcs(typ.Methods, typ.Name)
		for _, spec := range typ.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != typ.Name {
				continue
			}
			var fields *ast.FieldList
			switch tt := ts.Type.(type) {
			case *ast.StructType:
				fields = tt.Fields
			case *ast.InterfaceType:
				fields = tt.Methods
			}
			if fields == nil {
				continue
			}
			for _, f := range fields.List {
				for _, n := range f.Names {
					if n.IsExported() {
						api[typ.Name+"."+n.Name] = "member"
					}
				}
			}
		}
	}
	return api
}

// TestPublicSurface holds the rule of docs/ARCHITECTURE.md ("Who the
// exported names are for"): every exported name of jsonrpc, transport and
// mcp is there for users or for authors of transports. The names below
// served only mcpkit's own packages and moved behind the API (unexported,
// or into internal/rpclink, internal/mcplink and internal/mcpheader), or
// were replaced before 1.0 with no alias; none may come back. And one
// name is one thing: a function exported by two of the packages under the
// same name is refused (mcp.NewSSEHandler and transport.NewSSEHandler
// once took different arguments).
func TestPublicSurface(t *testing.T) {
	moved := map[string][]string{
		"jsonrpc": {
			"BaseContexter",                   // a stream's BaseContext method is found without it
			"WithRelatedRequest",              // only Conn sets a handler's related request
			"WithCallID",                      // mcp's subscriptions/listen: internal/rpclink
			"DecodeOwnedMessage",              // the HTTP transports: internal/rpclink
			"DecodeLimits.DecodeOwnedMessage", // likewise
		},
		"transport": {
			"ConnectFunc",                 // mcp's server connector: internal/mcplink
			"NewStreamableHTTPHandler",    // users call mcp.NewStreamableHTTPHandler
			"NewSSEHandler",               // users call mcp.NewSSEHandler
			"ProtocolVersionSetter",       // mcp's client asks it: internal/mcplink
			"HandshakeOnlyConn",           // likewise
			"StatelessConn",               // mcp's server asks it: internal/mcplink
			"EncodeHeaderValue",           // internal/mcpheader
			"DecodeHeaderValue",           // internal/mcpheader
			"HTTPRequestInfo.BindContext", // jsonrpc binds through the stream
		},
		"mcp": {
			"ServerSession.Handle", // the connection's handler, unexported
			"ClientSession.Handle", // likewise
			"OutgoingRequest",      // sending middleware sees the Request interface
			// Replaced before 1.0, with no alias: one way to configure.
			"ServerOptions.RequestStateKeys", // ServerOptions.Keys, a KeyRing
		},
	}
	apis := make(map[string]map[string]string)
	for _, pkg := range []string{"jsonrpc", "transport", "mcp"} {
		apis[pkg] = exportedAPI(t, pkg)
		for _, name := range moved[pkg] {
			if decl, ok := apis[pkg][name]; ok {
				t.Errorf("%s.%s is exported (%s), but it serves only mcpkit's own packages: keep it behind the API", pkg, name, decl)
			}
		}
	}
	pkgs := slices.Sorted(maps.Keys(apis))
	for i, a := range pkgs {
		for _, b := range pkgs[i+1:] {
			for name, decl := range apis[a] {
				if strings.Contains(name, ".") || !strings.HasPrefix(decl, "func") {
					continue
				}
				if other, ok := apis[b][name]; ok && strings.HasPrefix(other, "func") {
					t.Errorf("%s.%s (%s) and %s.%s (%s): two functions of one name", a, name, decl, b, name, other)
				}
			}
		}
	}
}

package mcp

import (
	"context"
	"fmt"
	"testing"
)

// TestResourceTemplateVars checks that a template's handler gets the
// variables the server matched, percent-decoded.
func TestResourceTemplateVars(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	read := func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		text := fmt.Sprint(req.Extra.TemplateVars)
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Text: text}}}, nil
	}
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "greeting://{name}", Name: "greeting"}, read))
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "file:///{+path}", Name: "file"}, read))
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "search://q{?term,lang}", Name: "search"}, read))
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	tests := []struct{ uri, want string }{
		{"greeting://Ada%20Lovelace", "map[name:Ada Lovelace]"},
		{"greeting://%E2%82%AC%2F", "map[name:€/]"},
		{"file:///docs/read%20me.txt", "map[path:docs/read me.txt]"},
		{"search://q?term=go%2Bmcp&lang=en", "map[lang:en term:go+mcp]"},
	}
	for _, tt := range tests {
		res, err := cs.ReadResource(context.Background(), &ReadResourceParams{URI: tt.uri})
		if err != nil {
			t.Errorf("%s: %v", tt.uri, err)
			continue
		}
		if got := res.Contents[0].Text; got != tt.want {
			t.Errorf("%s: vars %s; want %s", tt.uri, got, tt.want)
		}
	}
}

package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// FuzzStreamableHTTPPost throws arbitrary bodies and headers at a
// Streamable HTTP handler: it must answer every one with a status the
// specification allows, never panic and never hang.
func FuzzStreamableHTTPPost(f *testing.F) {
	for _, seed := range []struct{ body, accept, ctype, version string }{
		{`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`, "application/json, text/event-stream", "application/json", "2025-11-25"},
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "*/*", "application/json; charset=utf-8", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","method":"n"}]`, "application/json, text/event-stream", "application/json", "2025-03-26"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "application/*, text/*", "application/json", "2025-06-18"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "application/json;q=0, text/event-stream", "application/json", "2025-11-25"},
		{`[`, "application/json, text/event-stream", "text/plain", "x"},
	} {
		f.Add(seed.body, seed.accept, seed.ctype, seed.version)
	}
	// An echo backend: nothing the fuzzer sends can make it block.
	echo := func(ctx context.Context, c Conn) error {
		jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
			AllowBatch: func() bool { return true },
			Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				return req.Params, nil
			}),
		}).Start()
		return nil
	}
	h := newStreamableHTTPHandler(echo, &StreamableHTTPOptions{Stateless: true, MaxBodyBytes: 4096})
	f.Cleanup(func() { h.Close() })
	allowed := map[int]bool{200: true, 202: true, 400: true, 405: true, 406: true, 413: true, 415: true}
	f.Fuzz(func(t *testing.T, body, accept, ctype, version string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Accept", accept)
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("MCP-Protocol-Version", version)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !allowed[rec.Code] {
			t.Fatalf("status %d for body %q accept %q type %q version %q", rec.Code, body, accept, ctype, version)
		}
	})
}

// FuzzStreamableHTTPSessionBatch throws arbitrary bodies, batches above
// all, at the sessions of a stateful Streamable HTTP handler: one of
// revision 2025-03-26 (batches allowed), one of 2025-11-25 (batches
// refused by the transport), and one of 2025-03-26 whose connection
// refuses batches itself. Every POST must end, with a status the
// specification allows, and answer every request it carried that was not
// cancelled in the same body.
func FuzzStreamableHTTPSessionBatch(f *testing.F) {
	for _, seed := range []struct {
		body    string
		session uint8
	}{
		{`[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},{"jsonrpc":"2.0","id":1,"method":"echo"}]`, 0},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":"b","method":"echo"}]`, 0},
		{`[[{"jsonrpc":"2.0","id":1,"method":"echo"}]]`, 0},
		{`[5]`, 0},
		{`[{"foo":1}]`, 0},
		{`[5,{"jsonrpc":"2.0","id":7,"method":"echo"}]`, 0},
		{`[{"jsonrpc":"2.0","id":8,"foo":1}]`, 0},
		{`[{"jsonrpc":"2.0","id":3,"method":"echo"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}]`, 0},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}]`, 0},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`, 1},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`, 2},
		{`{"jsonrpc":"2.0","id":null,"method":"echo"}`, 0},
		{`[]`, 0},
	} {
		f.Add(seed.body, seed.session)
	}
	connect := func(allowBatch bool) connectFunc {
		return func(ctx context.Context, c Conn) error {
			jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
				AllowBatch: func() bool { return allowBatch },
				Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
					if req.Method == "initialize" {
						var p struct {
							ProtocolVersion string `json:"protocolVersion"`
						}
						json.Unmarshal(req.Params, &p)
						return map[string]string{"protocolVersion": p.ProtocolVersion}, nil
					}
					return req.Params, nil
				}),
			}).Start()
			return nil
		}
	}
	type session struct {
		h       *StreamableHTTPHandler
		id      string
		version string
	}
	var sessions []session
	for _, s := range []struct {
		version    string
		allowBatch bool
	}{{"2025-03-26", true}, {"2025-11-25", true}, {"2025-03-26", false}} {
		h := newStreamableHTTPHandler(connect(s.allowBatch), &StreamableHTTPOptions{MaxBodyBytes: 1 << 16})
		f.Cleanup(func() { h.Close() })
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+s.version+`"}}`))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		id := rec.Header().Get("Mcp-Session-Id")
		if rec.Code != 200 || id == "" {
			f.Fatalf("initialize %s: %d %s", s.version, rec.Code, rec.Body)
		}
		sessions = append(sessions, session{h, id, s.version})
	}
	allowed := map[int]bool{200: true, 202: true, 400: true, 413: true}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		s := sessions[int(which)%len(sessions)]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", s.version)
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if ctx.Err() != nil {
			t.Fatalf("the exchange did not end: body %q on %s", body, s.version)
		}
		if !allowed[rec.Code] {
			t.Fatalf("status %d for body %q on %s", rec.Code, body, s.version)
		}
		if rec.Code != 200 {
			return
		}
		// Every request not cancelled in the same body is answered.
		want := fuzzRequestIDs(body)
		for _, id := range fuzzAnswerIDs(t, rec) {
			delete(want, id)
		}
		if len(want) > 0 && !strings.Contains(rec.Body.String(), `"id":null`) {
			t.Fatalf("requests %v unanswered; body %q answered %q", want, body, rec.Body)
		}
	})
}

// fuzzRequestIDs returns the IDs of the requests in body that expect an
// answer (decoded as the handler decodes it), leaving out those cancelled
// in the same body.
func fuzzRequestIDs(body string) map[string]bool {
	m, err := jsonrpc.DecodeMessage([]byte(body))
	if err != nil {
		return nil
	}
	msgs := []jsonrpc.Message{m}
	if b, ok := m.(jsonrpc.Batch); ok {
		msgs = b
	}
	ids := map[string]bool{}
	var cancelled []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Request:
			if !m.IsNotification() {
				ids[m.ID.String()] = true
			} else if m.Method == "notifications/cancelled" {
				var p struct {
					RequestID jsonrpc.ID `json:"requestId"`
				}
				if json.Unmarshal(m.Params, &p) == nil {
					cancelled = append(cancelled, p.RequestID.String())
				}
			}
		case *jsonrpc.DecodeError:
			if m.ID.IsValid() {
				ids[m.ID.String()] = true
			}
		}
	}
	for _, id := range cancelled {
		delete(ids, id)
	}
	return ids
}

// fuzzAnswerIDs returns the IDs of the responses in an answer, JSON or SSE.
func fuzzAnswerIDs(t *testing.T, rec *httptest.ResponseRecorder) []string {
	var datas []string
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(rec.Body.String(), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				datas = append(datas, d)
			}
		}
	} else {
		datas = []string{rec.Body.String()}
	}
	var ids []string
	for _, d := range datas {
		m, err := jsonrpc.DecodeMessage([]byte(d))
		if err != nil {
			t.Fatalf("answer %q: %v", d, err)
		}
		msgs := []jsonrpc.Message{m}
		if b, ok := m.(jsonrpc.Batch); ok {
			msgs = b
		}
		for _, m := range msgs {
			if r, ok := m.(*jsonrpc.Response); ok {
				ids = append(ids, r.ID.String())
			}
		}
	}
	return ids
}

// FuzzScanModernBody feeds arbitrary params to the scan that the
// 2026-07-28 header checks use: it must not panic, and on a JSON object
// whose members it found it must agree with a full decode about name,
// uri and the revision in _meta.
func FuzzScanModernBody(f *testing.F) {
	for _, s := range []string{
		`{"name":"echo","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`{"uri":"file:///a b","_meta":{"io.modelcontextprotocol/protocolVersion":7}}`,
		`{"name":"\u00e9\"x","_meta":null}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"_meta":{}}`,
		`[1,2]`, `"x"`, `{`, `{"name":}`, ``,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"e\"cho","arguments":{"name":"x"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"uri":"file:///a","name":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		// One scan for each member a header mirrors, and one for none.
		var (
			found = map[string]modernBody{}
			err   error
			memo  metaMemo
		)
		for _, member := range []string{"name", "uri", "taskId", ""} {
			b, berr := scanModernBody(params, member, nil)
			// With a memo, the second scan reads _meta from it: the
			// same findings as without.
			for range 2 {
				mb, merr := scanModernBody(params, member, &memo)
				if (merr == nil) != (berr == nil) || merr == nil && !sameModernBody(mb, b) {
					t.Fatalf("%q with a memo: %+v, %v; without: %+v, %v", member, mb, merr, b, berr)
				}
			}
			found[member], err = b, berr
		}
		if err != nil {
			return
		}
		// The short way agrees with the scan on params that the JSON-RPC
		// layer passes (valid, no name twice), for every method's member.
		if jsontext.Value(params).IsValid() {
			for _, method := range []string{"tools/call", "resources/read", "tasks/get", "tools/list"} {
				member := mirroredMember(method)
				lb, ok := leadingModernBody(params, member, &memo)
				if !ok {
					continue
				}
				mb, _ := scanModernBody(params, member, &memo)
				if !bytes.Equal(lb.Meta, mb.Meta) || !bytes.Equal(lb.ProtocolVersion, mb.ProtocolVersion) ||
					!bytes.Equal(lb.ClientCapabilities, mb.ClientCapabilities) {
					t.Fatalf("%s: the short way's _meta %+v, the scan's %+v, in %s", method, lb, mb, params)
				}
				if !bytes.Equal(lb.Mirrored, mb.Mirrored) {
					t.Fatalf("%s: the short way found %s, the scan %s, in %s", method, lb.Mirrored, mb.Mirrored, params)
				}
			}
		}
		var full struct {
			Name *string `json:"name"`
			URI  *string `json:"uri"`
			Meta *struct {
				Version *string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		}
		if jsonv2.Unmarshal(params, &full) != nil {
			return // types the scan does not look at, or duplicate names
		}
		for _, m := range []struct {
			raw  jsontext.Value
			want *string
		}{{found["name"].Mirrored, full.Name}, {found["uri"].Mirrored, full.URI}} {
			got, ok := jsonString(m.raw)
			if ok != (m.want != nil) || (ok && got != *m.want) {
				t.Fatalf("scan %q (%v), decode %v, in %s", got, ok, m.want, params)
			}
		}
		if full.Meta != nil && full.Meta.Version != nil {
			if !jsonStringIs(found[""].ProtocolVersion, *full.Meta.Version) {
				t.Fatalf("scan version %s, decode %q, in %s", found[""].ProtocolVersion, *full.Meta.Version, params)
			}
		}
	})
}

// sameModernBody reports whether a and b found the same values.
func sameModernBody(a, b modernBody) bool {
	return bytes.Equal(a.Mirrored, b.Mirrored) &&
		bytes.Equal(a.Meta, b.Meta) && bytes.Equal(a.ProtocolVersion, b.ProtocolVersion) &&
		bytes.Equal(a.ClientCapabilities, b.ClientCapabilities)
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// TestClientSessionIdentity checks that a host connected to two servers
// through one Client can tell, in its handlers, which session and which
// server each message came from, without a map of its own: the name it
// gave each connection (ClientSession.Name) and what each server said
// about itself (ClientSession.ServerInfo), in both eras.
func TestClientSessionIdentity(t *testing.T) {
	checkGoroutines(t)
	for _, era := range []Era{EraHandshake, EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			record := func(kind string, cs *ClientSession, text string) {
				info := cs.ServerInfo()
				if info == nil {
					t.Errorf("%s %q: ServerInfo is nil", kind, text)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, fmt.Sprintf("%s from session %q (server %s %s): %s", kind, cs.Name(), info.Name, info.Version, text))
			}
			c := NewClient(&Implementation{Name: "host", Version: "1"}, &ClientOptions{
				Era: era,
				LoggingMessageHandler: func(ctx context.Context, req *LoggingMessageNotification) {
					record("log", req.Session, fmt.Sprint(req.Params.Data))
				},
				CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
					record("sampling", req.Session, req.Params.Messages[0].Content[0].(*TextContent).Text)
					return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: Contents{&TextContent{Text: "ok"}}}, nil
				},
			})
			sessions := map[string]*ClientSession{}
			for _, name := range []string{"weather", "notes"} {
				s := NewServer(&Implementation{Name: name + "-server", Version: "2." + fmt.Sprint(len(name))}, nil)
				must(t, AddTool(s, &Tool{Name: "work"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
					// Once: on 2026-07-28 the handler runs again with the answer.
					if _, err := Once(ctx, "log", func(ctx context.Context) (bool, error) {
						return true, req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelInfo, Data: "hello from " + name})
					}); err != nil {
						return "", err
					}
					if _, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 5, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "ask of " + name}}}}}); err != nil {
						return "", err
					}
					return "done", nil
				}))
				ct, st := transport.NewInMemoryTransports()
				ss, err := s.Connect(t.Context(), st)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := c.Connect(t.Context(), ct, &ConnectOptions{Name: name})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close(); ss.Close(); cs.Wait(); ss.Wait() })
				sessions[name] = cs
			}
			for _, name := range []string{"notes", "weather"} {
				if _, err := sessions[name].CallTool(t.Context(), &CallToolParams{Name: "work"}); err != nil {
					t.Fatal(err)
				}
			}
			want := []string{
				`log from session "notes" (server notes-server 2.5): hello from notes`,
				`log from session "weather" (server weather-server 2.7): hello from weather`,
				`sampling from session "notes" (server notes-server 2.5): ask of notes`,
				`sampling from session "weather" (server weather-server 2.7): ask of weather`,
			}
			mu.Lock()
			got := slices.Clone(seen)
			mu.Unlock()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the handlers saw\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestConnectOptions checks Connect's optional argument: omitted or nil
// is the zero value (no name), and more than one is refused before the
// transport is connected.
func TestConnectOptions(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	tests := []struct {
		name    string
		opts    []*ConnectOptions
		want    string
		wantErr bool
	}{
		{"omitted", nil, "", false},
		{"nil", []*ConnectOptions{nil}, "", false},
		{"zero", []*ConnectOptions{{}}, "", false},
		{"named", []*ConnectOptions{{Name: "a"}}, "a", false},
		{"two", []*ConnectOptions{{Name: "a"}, {Name: "b"}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, st := transport.NewInMemoryTransports()
			ss, err := s.Connect(t.Context(), st)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { ss.Close(); ss.Wait() }()
			cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), ct, tt.opts...)
			if tt.wantErr {
				if err == nil {
					cs.Close()
					t.Fatal("Connect succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { cs.Close(); cs.Wait() }()
			if got := cs.Name(); got != tt.want {
				t.Errorf("Name() = %q; want %q", got, tt.want)
			}
			if info := cs.ServerInfo(); info == nil || info.Name != "s" {
				t.Errorf("ServerInfo() = %+v", info)
			}
		})
	}
}

// TestClientLogsDroppedResponses checks that the client's logger, with
// the session's name, receives the Streamable HTTP transport's report of
// the responses a client of 2026-07-28 does not send to requests its
// server pushes (the transport's own test covers the bounds).
func TestClientLogsDroppedResponses(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		t.Run(fmt.Sprint("wrapped=", wrapped), func(t *testing.T) { testClientLogsDroppedResponses(t, wrapped) })
	}
}

// testClientLogsDroppedResponses is TestClientLogsDroppedResponses with
// the transport used as is, or wrapped in a LoggingTransport, which must
// pass the logger on.
func testClientLogsDroppedResponses(t *testing.T, wrapped bool) {
	checkGoroutines(t)
	var responsePOSTs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch m.Method {
		case MethodServerDiscover:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":[%q],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pusher","version":"0"}}}}`, m.ID, Version20260728)
		case MethodToolsCall:
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"push-%d\",\"method\":\"roots/list\"}\n\n", i)
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",\"content\":[]}}\n\n", m.ID)
		case "":
			responsePOSTs.Add(1)
			w.WriteHeader(http.StatusAccepted)
		default:
			http.Error(w, "unexpected", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	logged := make(chan string, 16)
	logger := slog.New(slog.NewTextHandler(chanWriter(logged), &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	c := NewClient(&Implementation{Name: "host", Version: "1"}, &ClientOptions{Era: EraModern, Logger: logger})
	var tr transport.Transport = &transport.StreamableClientTransport{URL: srv.URL}
	if wrapped {
		tr = &transport.LoggingTransport{Transport: tr, Writer: io.Discard}
	}
	cs, err := c.Connect(t.Context(), tr, &ConnectOptions{Name: "pushy"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); cs.Wait() }()
	if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(time.Minute)  // a bound for the failure only
	for reported := false; !reported; { // the first drop is always reported
		select {
		case line := <-logged:
			if strings.Contains(line, "not sending a response") {
				if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "session=pushy") || !strings.Contains(line, "id=push-") {
					t.Errorf("the report lacks the level, the session or the id: %s", line)
				}
				reported = true
			}
		case <-timeout:
			t.Fatal("no dropped response was reported to the client's logger")
		}
	}
	if n := responsePOSTs.Load(); n != 0 {
		t.Errorf("%d responses POSTed", n)
	}
}

// chanWriter sends each write to its channel as a line.
type chanWriter chan<- string

func (w chanWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

func TestElicitationChecks(t *testing.T) {
	checkGoroutines(t)
	var schemaJSON string
	var mode ElicitMode
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		p := &ElicitParams{Message: "?", Mode: mode}
		if mode == ElicitModeURL {
			p.URL, p.ElicitationID = "https://example.com/x", "id-1"
		} else {
			p.RequestedSchema = json.RawMessage(schemaJSON)
		}
		res, err := req.Elicit(ctx, p)
		if err != nil {
			return "", err
		}
		b, _ := jsonv2.Marshal(res, jsonv2.Deterministic(true))
		return string(b), nil
	}))
	answer := map[string]any{"name": "Ada"}
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		URLElicitation: true,
		ElicitationHandler: func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
			if req.Params.Mode == ElicitModeURL {
				return &ElicitResult{Action: ElicitActionAccept}, nil
			}
			return &ElicitResult{Action: ElicitActionAccept, Content: answer}, nil
		},
	})
	cs, _ := connect(t, s, c)
	tests := []struct {
		name    string
		mode    ElicitMode
		schema  string
		answer  map[string]any
		want    string // substring of the tool's text
		isError bool
	}{
		{"form ok with default", "", `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","default":7}},"required":["name"]}`, map[string]any{"name": "Ada"}, `"content":{"age":7,"name":"Ada"}`, false},
		{"nested object refused", "", `{"type":"object","properties":{"a":{"type":"object"}}}`, nil, "not allowed", true},
		{"not an object", "", `{"type":"string"}`, nil, `type must be "object"`, true},
		{"answer breaks schema", "", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, map[string]any{"n": "x"}, "does not match", true},
		{"enum array allowed", "", `{"type":"object","properties":{"c":{"type":"array","items":{"enum":["a","b"]}}}}`, map[string]any{"c": []any{"a"}}, `"action":"accept"`, false},
		{"url mode", ElicitModeURL, "", nil, `{"action":"accept"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schemaJSON, mode, answer = tt.schema, tt.mode, tt.answer
			// The client refuses bad requests and bad answers with
			// protocol errors, which the tool reports as its own failure.
			res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "ask"})
			must(t, err)
			text := res.Content[0].(*TextContent).Text
			if res.IsError != tt.isError || !strings.Contains(text, tt.want) {
				t.Errorf("got %q (isError %v), want %q (isError %v)", text, res.IsError, tt.want, tt.isError)
			}
		})
	}
}

func TestElicitationModeCapability(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "url"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		_, err := req.Elicit(ctx, &ElicitParams{Mode: ElicitModeURL, Message: "go", URL: "https://x", ElicitationID: "1"})
		return "", err
	}))
	// Form-only client: URL mode must not be sent.
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			t.Error("handler called for an undeclared mode")
			return nil, nil
		},
	})
	cs, _ := connect(t, s, c)
	res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "url"})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "elicitation.url") {
		t.Errorf("res = %+v, err = %v", res, err)
	}
}

func TestLoggingHandler(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "log"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		l := slog.New(NewLoggingHandler(req.Session, &LoggingHandlerOptions{Name: "tool"}))
		l.Debug("hidden")
		l.With("k", 1).WithGroup("g").Info("shown", "x", "y")
		l.Error("bad", slog.Group("err", "code", 7))
		return "ok", nil
	}))
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *ClientRequest[*LoggingMessageParams]) {
			p := req.Params
			b, _ := jsonv2.Marshal(p, jsonv2.Deterministic(true))
			mu.Lock()
			got = append(got, string(b))
			if len(got) == 2 {
				close(done)
			}
			mu.Unlock()
		},
	})
	cs, _ := connect(t, s, c)
	must(t, cs.SetLoggingLevel(context.Background(), LoggingLevelInfo))
	_, err := cs.CallTool(context.Background(), &CallToolParams{Name: "log"})
	must(t, err)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("logs: %v", got)
	}
	want := []string{
		`{"level":"info","logger":"tool","data":{"g":{"x":"y"},"k":1,"message":"shown"}}`,
		`{"level":"error","logger":"tool","data":{"err":{"code":7},"message":"bad"}}`,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("log %d\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestSamplingWithTools(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "agent"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		res, err := req.CreateMessage(ctx, &CreateMessageParams{
			MaxTokens:  10,
			Messages:   []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "weather?"}}}},
			Tools:      []*Tool{{Name: "get_weather", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			ToolChoice: &ToolChoice{Mode: "auto"},
		})
		if err != nil {
			return "", err
		}
		use := res.Content[0].(*ToolUseContent)
		return use.Name + ":" + use.ID, nil
	}))
	withTools := &ClientCapabilities{Sampling: &SamplingCapabilities{Tools: &struct{}{}}}
	for _, tt := range []struct {
		caps *ClientCapabilities
		want string
	}{{withTools, "get_weather:u1"}, {nil, "sampling.tools"}} {
		c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
			Capabilities: tt.caps,
			CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
				return &CreateMessageResult{Role: RoleAssistant, Model: "m", StopReason: "toolUse",
					Content: Contents{&ToolUseContent{ID: "u1", Name: req.Params.Tools[0].Name, Input: json.RawMessage(`{}`)}}}, nil
			},
		})
		cs, _ := connect(t, s, c)
		res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "agent"})
		var text string
		if err == nil {
			text = res.Content[0].(*TextContent).Text
		} else {
			text = err.Error()
		}
		if !strings.Contains(text, tt.want) {
			t.Errorf("got %q, want %q", text, tt.want)
		}
	}
}

func TestKeepAliveClosesDeadPeer(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{KeepAlive: 20 * time.Millisecond})
	// A client that answers nothing: its transport is read by no one who replies.
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st)
	must(t, err)
	conn, err := ct.Connect(context.Background())
	must(t, err)
	defer conn.Close()
	go func() { // drain, never answer
		for {
			if _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	select {
	case <-ss.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("keepalive did not close the session")
	}
	ss.Wait()
}

func TestServerSessions(t *testing.T) {
	checkGoroutines(t)
	s := testServer(t, nil)
	_, ss1 := connect(t, s, NewClient(&Implementation{Name: "a", Version: "1"}, nil))
	_, ss2 := connect(t, s, NewClient(&Implementation{Name: "b", Version: "1"}, nil))
	if n := len(s.Sessions()); n != 2 {
		t.Fatalf("Sessions() = %d", n)
	}
	if ss1.ID() == ss2.ID() || len(ss1.ID()) != 32 {
		t.Errorf("session IDs %q %q", ss1.ID(), ss2.ID())
	}
	if ss1.ClientInfo().Name != "a" || ss1.ProtocolVersion() != LatestVersion {
		t.Errorf("client info %+v, version %q", ss1.ClientInfo(), ss1.ProtocolVersion())
	}
	ss1.Close()
	ss1.Wait()
	if n := len(s.Sessions()); n != 1 {
		t.Errorf("after close, Sessions() = %d", n)
	}
}

func TestClientRejectsUnknownVersion(t *testing.T) {
	checkGoroutines(t)
	ct, st := transport.NewInMemoryTransports()
	sconn, err := st.Connect(context.Background())
	must(t, err)
	// A fake server that answers initialize with a revision we do not speak.
	fake := jsonrpc.NewConn(sconn, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return json.RawMessage(`{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`), nil
	})})
	fake.Start()
	defer func() { fake.Close(); fake.Wait() }()
	_, err = NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct)
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Offered != "1999-01-01" {
		t.Fatalf("err = %v", err)
	}
}

func TestWireLogging(t *testing.T) {
	checkGoroutines(t)
	var buf bytes.Buffer
	var mu sync.Mutex
	ct, st := transport.NewInMemoryTransports()
	s := testServer(t, nil)
	ss, err := s.Connect(context.Background(), st)
	must(t, err)
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), &transport.LoggingTransport{Transport: ct, Writer: lockedWriter{&mu, &buf}})
	must(t, err)
	must(t, cs.Ping(context.Background()))
	cs.Close()
	ss.Wait()
	mu.Lock()
	defer mu.Unlock()
	// The default client asks server/discover first (EraAuto), finds
	// 2026-07-28, and pings with server/discover too.
	if n := strings.Count(buf.String(), `send {"jsonrpc":"2.0","id":`); n != 2 || strings.Count(buf.String(), `"method":"server/discover"`) != 2 {
		t.Errorf("wire log:\n%s", buf.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestCancellationServerToClient(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "impatient"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1})
		if !errors.Is(err, context.DeadlineExceeded) {
			return "", errors.New("unexpected: " + err.Error())
		}
		return "gave up", nil
	}))
	handlerCancelled := make(chan error, 1)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
			<-ctx.Done() // released only by the server's notifications/cancelled
			handlerCancelled <- ctx.Err()
			return nil, ctx.Err()
		},
	})
	cs, _ := connect(t, s, c)
	res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "impatient"})
	must(t, err)
	if got := res.Content[0].(*TextContent).Text; got != "gave up" {
		t.Fatalf("tool said %q", got)
	}
	if err := <-handlerCancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("client handler ctx: %v", err)
	}
}

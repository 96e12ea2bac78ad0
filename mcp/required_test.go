package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// validParams holds, for every method either side receives, params with
// every member the protocol requires.
var validParams = map[string]string{
	MethodInitialize:                      `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`,
	MethodPing:                            `{}`,
	MethodServerDiscover:                  `{}`,
	MethodSubscriptionsListen:             `{"notifications":{}}`,
	NotificationSubscriptionsAcknowledged: `{"notifications":{}}`,
	MethodToolsList:                       `{}`,
	MethodToolsCall:                       `{"name":"x"}`,
	MethodResourcesList:                   `{}`,
	MethodResourcesTemplatesList:          `{}`,
	MethodResourcesRead:                   `{"uri":"a://x"}`,
	MethodResourcesSubscribe:              `{"uri":"a://x"}`,
	MethodResourcesUnsubscribe:            `{"uri":"a://x"}`,
	MethodPromptsList:                     `{}`,
	MethodPromptsGet:                      `{"name":"p"}`,
	MethodCompletionComplete:              `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`,
	MethodLoggingSetLevel:                 `{"level":"info"}`,
	MethodSkillsList:                      `{}`,
	MethodSkillsGet:                       `{"uri":"skill://a/SKILL.md"}`,
	MethodResourcesDirectoryRead:          `{"uri":"skill://a"}`,
	MethodTasksGet:                        `{"taskId":"t"}`,
	MethodTasksUpdate:                     `{"taskId":"t","inputResponses":{}}`,
	MethodTasksCancel:                     `{"taskId":"t"}`,
	MethodTasksResult:                     `{"taskId":"t"}`,
	MethodTasksList:                       `{}`,
	MethodSamplingCreateMessage:           `{"messages":[],"maxTokens":10}`,
	MethodRootsList:                       `{}`,
	MethodElicitationCreate:               `{"message":"m","requestedSchema":{"type":"object","properties":{}}}`,
	NotificationInitialized:               `{}`,
	NotificationCancelled:                 `{}`,
	NotificationProgress:                  `{"progressToken":"t","progress":1}`,
	NotificationMessage:                   `{"level":"info","data":"x"}`,
	NotificationResourceListChanged:       `{}`,
	NotificationResourceUpdated:           `{"uri":"a://x"}`,
	NotificationPromptListChanged:         `{}`,
	NotificationToolListChanged:           `{}`,
	NotificationRootsListChanged:          `{}`,
	NotificationElicitationComplete:       `{"elicitationId":"e"}`,
}

// requiredCase is one request with a required member left out.
type requiredCase struct {
	name   string
	params string // "" sends no params
	member string // the member the refusal must name; "" if none
}

// requiredCases derives, from a method's valid params and the required
// members its table entry lists, a request without params, one with {},
// and for each member, one without it and one with it null.
func requiredCases(t *testing.T, method string, required []requiredMember) []requiredCase {
	valid, ok := validParams[method]
	if !ok {
		t.Fatalf("validParams has no entry for %s", method)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(valid), &obj); err != nil {
		t.Fatal(err)
	}
	first := ""
	if len(required) > 0 {
		first = required[0].name
	}
	cases := []requiredCase{{"valid", valid, ""}, {"no params", "", first}, {"empty", "{}", first}}
	for _, m := range required {
		if _, ok := obj[m.name]; !ok {
			t.Fatalf("validParams[%s] lacks required member %s", method, m.name)
		}
		for _, null := range []bool{false, true} {
			o := map[string]any{}
			for k, v := range obj {
				o[k] = v
			}
			name, want := "without "+m.name, m.name
			if null {
				o[m.name] = nil
				name = m.name + " null"
				if m.nullOK {
					want = ""
				}
			} else {
				delete(o, m.name)
			}
			b, _ := json.Marshal(o)
			cases = append(cases, requiredCase{name, string(b), want})
		}
	}
	return cases
}

func checkRequiredCase(t *testing.T, handle func(context.Context, *jsonrpc.Request) (any, error), method string, notification bool, c requiredCase) {
	t.Helper()
	req := &jsonrpc.Request{Method: method}
	if !notification {
		req.ID = jsonrpc.Int64ID(7)
	}
	if c.params != "" {
		req.Params = []byte(c.params)
	}
	_, err := handle(context.Background(), req)
	var we *jsonrpc.Error
	missing := errors.As(err, &we) && strings.Contains(we.Message, "missing required member")
	switch {
	case c.member == "" && missing:
		t.Errorf("params %s refused: %v", c.params, err)
	case c.member != "" && (!missing || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, `"`+c.member+`"`)):
		t.Errorf("params %s: got %v, want -32602 naming %q", c.params, err, c.member)
	}
}

// Every method either side receives refuses params that lack a required
// member, naming it, before any handler runs.
func TestRequiredParamsMembers(t *testing.T) {
	complete := func(_ context.Context, req *CompleteRequest) (*CompleteResult, error) {
		return nil, errors.New("the completion handler ran")
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{CompletionHandler: complete})
	cs, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(context.Context, *CreateMessageRequest) (*CreateMessageResult, error) {
			return nil, errors.New("the sampling handler ran")
		},
	}))
	for method, m := range serverMethods {
		for _, c := range requiredCases(t, method, m.required.members()) {
			if method == MethodCompletionComplete && c.member == "" {
				continue // the valid request runs the handler
			}
			t.Run("server/"+method+"/"+c.name, func(t *testing.T) {
				checkRequiredCase(t, ss.handle, method, m.notification, c)
			})
		}
	}
	for method, m := range clientMethods {
		for _, c := range requiredCases(t, method, m.required.members()) {
			if method == MethodSamplingCreateMessage && c.member == "" {
				continue
			}
			t.Run("client/"+method+"/"+c.name, func(t *testing.T) {
				checkRequiredCase(t, cs.handle, method, m.notification, c)
			})
		}
	}
	for _, want := range []struct {
		method string
		names  []string
	}{
		{MethodCompletionComplete, []string{"ref", "argument"}},
		{MethodInitialize, []string{"protocolVersion", "capabilities", "clientInfo"}},
	} {
		var got []string
		for _, m := range serverMethods[want.method].required.members() {
			got = append(got, m.name)
		}
		if strings.Join(got, ",") != strings.Join(want.names, ",") {
			t.Errorf("%s requires %v, want %v", want.method, got, want.names)
		}
	}
}

// Over the wire: completion/complete without ref gets -32602, not a
// panicking handler's -32603; sampling/createMessage without messages
// is refused by the client before its handler.
func TestRequiredMembersOverTheWire(t *testing.T) {
	checkGoroutines(t)
	var ran atomic.Bool
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		CompletionHandler: func(_ context.Context, req *CompleteRequest) (*CompleteResult, error) {
			ran.Store(true)
			return &CompleteResult{Completion: Completion{Values: []string{string(req.Params.Ref.Type)}}}, nil
		},
	})
	cs, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
			ran.Store(true)
			return &CreateMessageResult{Role: RoleAssistant, Content: Contents{&TextContent{Text: "x"}}, Model: "m"}, nil
		},
	}))
	ctx := context.Background()
	wantMissing := func(err error, member string) {
		t.Helper()
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, `"`+member+`"`) {
			t.Errorf("got %v, want -32602 naming %q", err, member)
		}
	}
	_, err := cs.Complete(ctx, &CompleteParams{})
	wantMissing(err, "ref")
	_ = ss
	if ran.Load() {
		t.Error("a handler ran with a required member missing")
	}
}

// A client refuses a server's request that lacks a required member
// before its handler runs.
func TestClientRefusesMissingMembers(t *testing.T) {
	checkGoroutines(t)
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	sc, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw := jsonrpc.NewConn(sc, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		return json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"h","version":"1"}}`), nil
	})})
	raw.Start()
	defer func() { raw.Close(); raw.Wait() }()
	var ran atomic.Bool
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(context.Context, *CreateMessageRequest) (*CreateMessageResult, error) {
			ran.Store(true)
			return nil, errors.New("no")
		},
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			ran.Store(true)
			return nil, errors.New("no")
		},
	}).Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct{ method, params, member string }{
		{MethodSamplingCreateMessage, `{"maxTokens":5}`, "messages"},
		{MethodSamplingCreateMessage, `{"messages":null,"maxTokens":5}`, "messages"},
		{MethodSamplingCreateMessage, `{"messages":[]}`, "maxTokens"},
		{MethodElicitationCreate, `{"requestedSchema":{"type":"object"}}`, "message"},
	} {
		_, err := raw.Call(ctx, c.method, []byte(c.params))
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, `"`+c.member+`"`) {
			t.Errorf("%s %s: got %v, want -32602 naming %q", c.method, c.params, err, c.member)
		}
	}
	if ran.Load() {
		t.Error("a handler ran with a required member missing")
	}
}

// hostileServer answers each request with the raw result answer returns.
func hostileServer(t *testing.T, answer func(method string) string) transport.Transport {
	t.Helper()
	ct, st := transport.NewInMemoryTransports()
	sc, err := st.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc.NewConn(sc, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		if req.IsNotification() {
			return nil, nil
		}
		return json.RawMessage(answer(req.Method)), nil
	})})
	conn.Start()
	t.Cleanup(func() { conn.Close(); conn.Wait() })
	return ct
}

// A result lacking an object member the protocol requires, or holding
// null in a list, never reaches the application.
func TestResultRequiredMembers(t *testing.T) {
	const okInit = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"prompts":{}},"serverInfo":{"name":"h","version":"1"}}`
	tests := []struct {
		name   string
		init   string
		list   string // tools/list result
		method string // the failing method
		member string
	}{
		{"initialize without serverInfo", `{"protocolVersion":"2025-06-18","capabilities":{}}`, "", MethodInitialize, "serverInfo"},
		{"initialize without capabilities", `{"protocolVersion":"2025-06-18","serverInfo":{"name":"h","version":"1"}}`, "", MethodInitialize, "capabilities"},
		{"initialize with null serverInfo", `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":null}`, "", MethodInitialize, "serverInfo"},
		{"tools/list with a null tool", okInit, `{"tools":[{"name":"a","inputSchema":{"type":"object"}},null]}`, MethodToolsList, "tools[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			ct := hostileServer(t, func(method string) string {
				if method == MethodInitialize {
					return tt.init
				}
				return tt.list
			})
			c := NewClient(&Implementation{Name: "c", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), ct)
			if err == nil {
				defer cs.Close()
				_, err = cs.ListTools(context.Background(), nil)
			}
			var re *ResultError
			if !errors.As(err, &re) || re.Method != tt.method || re.Member != tt.member {
				t.Fatalf("got %v, want a *ResultError for %s member %s", err, tt.method, tt.member)
			}
		})
	}
}

// referenceMissing is missingMember done the slow way.
func referenceMissing(raw []byte, required []requiredMember) string {
	var obj map[string]json.RawMessage
	if len(raw) > 0 {
		if json.Unmarshal(raw, &obj) != nil {
			obj = nil
		}
	}
	for _, m := range required {
		v, ok := obj[m.name]
		if !ok || (!m.nullOK && strings.TrimSpace(string(v)) == "null") {
			return m.name
		}
	}
	return ""
}

var scannerRequired = []requiredMember{{name: "a"}, {name: "b/\"c"}, {name: "d", nullOK: true}}

var scannerSeeds = []string{
	``, `null`, `[]`, `{}`, `"a"`,
	`{"a":1,"b/\"c":2,"d":null}`,
	` { "a" : null , "b/\"c" : [ "}" , {"a":"]"} ] , "d" : "x" } `,
	`{"\u0061":true,"b\/\"c":{"x":"\"{"},"d":false}`,
	`{"x":{"a":1,"b/\"c":1,"d":1},"a":"\\","b/\"c":-1.5e3}`,
	`{"a":{},"b/\"c":[],"d":[null]}`,
	"{\"a\":\n\"\\\"\",\t\"d\":0}",
}

func TestMissingMemberScanner(t *testing.T) {
	for _, raw := range scannerSeeds {
		if got, want := missingMember([]byte(raw), scannerRequired), referenceMissing([]byte(raw), scannerRequired); got != want {
			t.Errorf("missingMember(%s) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzMissingMember checks the scanner against a full decode, on every
// valid JSON object.
func FuzzMissingMember(f *testing.F) {
	for _, s := range scannerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var obj map[string]jsontext.Value
		if raw != "" && jsonv2.Unmarshal([]byte(raw), &obj) != nil {
			return // missingMember sees only params that decoded (no duplicate names)
		}
		if got, want := missingMember([]byte(raw), scannerRequired), referenceMissing([]byte(raw), scannerRequired); got != want {
			t.Errorf("missingMember(%q) = %q, want %q", raw, got, want)
		}
	})
}

// TestRequiredListsOnFirstUse checks that the method tables, built at
// package initialisation, do not list their params' required members
// there (by reflection over every params type, which every process
// importing the package paid before its first answer: issue 20, cold
// start), but when a method is first received. It looks in a fresh
// process, the test binary run again for this test alone, as package
// initialisation left the tables.
func TestRequiredListsOnFirstUse(t *testing.T) {
	if os.Getenv("MCPKIT_TEST_FRESH_TABLES") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequiredListsOnFirstUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MCPKIT_TEST_FRESH_TABLES=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	for _, m := range serverMethods {
		if m.required.list != nil {
			t.Fatal("a server method's required members were listed at package initialisation")
		}
	}
	for _, m := range clientMethods {
		if m.required.list != nil {
			t.Fatal("a client method's required members were listed at package initialisation")
		}
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	_, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	// requestState keeps the params from the hand-written decoder
	// (readWire), which needs no list.
	if _, err := ss.handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(99), Method: MethodToolsCall, Params: json.RawMessage(`{"name":"t","requestState":""}`)}); err == nil {
		t.Fatal("tools/call of no tool succeeded")
	}
	// initialize's params in their common shape come from the hand-written
	// decoder too; experimental capabilities take the engine's.
	if got := serverMethods[MethodInitialize].required.list; got != nil {
		t.Errorf("initialize's common shape listed its required members: %v", got)
	}
	ss.handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(100), Method: MethodInitialize,
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"experimental":{}},"clientInfo":{"name":"c","version":"1"}}`)})
	if got := serverMethods[MethodInitialize].required.list; len(got) != 3 {
		t.Errorf("after initialize, its required members are %v", got)
	}
	if got := serverMethods[MethodToolsCall].required.list; len(got) != 1 || got[0].name != "name" {
		t.Errorf("after tools/call, its required members are %v", got)
	}
	if got := serverMethods[MethodPromptsGet].required.list; got != nil {
		t.Errorf("prompts/get, never received, has its required members listed: %v", got)
	}
}

package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// revisions whose official schema.json is in testdata/schema.
var handshakeRevisions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// officialSchema returns a validator for the named definition of a
// revision's official schema.
func officialSchema(t *testing.T, rev, def string) *jsonschema.Resolved {
	t.Helper()
	key := rev + "#" + def
	schemaCacheMu.Lock()
	defer schemaCacheMu.Unlock()
	if r, ok := schemaCache[key]; ok {
		return r
	}
	r := loadOfficialSchema(t, rev, def)
	schemaCache[key] = r
	return r
}

var (
	schemaCacheMu sync.Mutex
	schemaCache   = map[string]*jsonschema.Resolved{}
)

func loadOfficialSchema(t *testing.T, rev, def string) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile("testdata/schema/" + rev + ".json")
	if err != nil {
		t.Fatal(err)
	}
	// Draft-07 files keep definitions under "definitions"; 2020-12 under
	// "$defs". Point the root at the definition and resolve.
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	key := "$defs"
	if _, ok := doc["definitions"]; ok {
		key = "definitions"
		doc["$defs"] = doc["definitions"]
		delete(doc, "definitions")
		data, _ = json.Marshal(doc)
		data = []byte(strings.ReplaceAll(string(data), "#/definitions/", "#/$defs/"))
		json.Unmarshal(data, &doc)
	}
	_ = key
	if _, ok := doc["$defs"].(map[string]any)[def]; !ok {
		return nil
	}
	delete(doc, "$schema")
	doc["$ref"] = "#/$defs/" + def
	data, _ = json.Marshal(doc)
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", rev, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s %s: resolve: %v", rev, def, err)
	}
	return r
}

func f64(f float64) *float64 { return &f }

// wireCases are values of our types with the spec definition each must
// satisfy. since is the first revision that defines the type.
var wireCases = []struct {
	def   string
	since string
	value any
}{
	{"Implementation", Version20241105, &Implementation{Name: "n", Version: "1"}},
	{"Implementation", Version20251125, &Implementation{Name: "n", Title: "N", Version: "1", Description: "d", WebsiteURL: "https://x", Icons: []Icon{{Src: "https://x/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}}}}},
	{"ClientCapabilities", Version20241105, &ClientCapabilities{Roots: &RootsCapabilities{ListChanged: true}, Sampling: &SamplingCapabilities{}}},
	{"ClientCapabilities", Version20251125, &ClientCapabilities{Elicitation: &ElicitationCapabilities{Form: &FormElicitationCapabilities{}, URL: &URLElicitationCapabilities{}}, Sampling: &SamplingCapabilities{Tools: &struct{}{}}}},
	{"ServerCapabilities", Version20241105, &ServerCapabilities{Logging: &LoggingCapabilities{}, Tools: &ToolCapabilities{ListChanged: true}, Resources: &ResourceCapabilities{Subscribe: true}, Prompts: &PromptCapabilities{}}},
	{"ServerCapabilities", Version20250326, &ServerCapabilities{Completions: &CompletionCapabilities{}}},
	{"InitializeResult", Version20241105, &InitializeResult{ProtocolVersion: Version20241105, Capabilities: &ServerCapabilities{}, ServerInfo: &Implementation{Name: "s", Version: "1"}, Instructions: "use it"}},
	{"Tool", Version20241105, &Tool{Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}},
	{"Tool", Version20250618, &Tool{Name: "t", Title: "T", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &ToolAnnotations{ReadOnlyHint: true}}},
	{"Tool", Version20251125, &Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &ToolExecution{TaskSupport: "optional"}}},
	{"ServerCapabilities", Version20251125, &ServerCapabilities{Tasks: &TasksCapabilities{List: &struct{}{}, Cancel: &struct{}{}, Requests: &TaskRequestsCapabilities{Tools: &ToolTaskCapabilities{Call: &struct{}{}}}}}},
	{"ListToolsResult", Version20241105, &ListToolsResult{Tools: []*Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}, NextCursor: "c"}},
	{"ListToolsResult", Version20241105, &ListToolsResult{}},
	{"CallToolResult", Version20241105, &CallToolResult{Content: []Content{&TextContent{Text: "hi"}, &ImageContent{Data: []byte{1}, MIMEType: "image/png"}}, IsError: true}},
	{"CallToolResult", Version20241105, &CallToolResult{}},
	{"CallToolResult", Version20250618, &CallToolResult{Content: []Content{&ResourceLink{URI: "file:///a", Name: "a"}, &EmbeddedResource{Resource: &ResourceContents{URI: "x://y", Blob: []byte("b")}}}, StructuredContent: json.RawMessage(`{"a":1}`)}},
	{"CallToolResult", Version20250326, &CallToolResult{Content: []Content{&AudioContent{Data: []byte{1, 2}, MIMEType: "audio/wav"}}}},
	{"Resource", Version20241105, &Resource{URI: "file:///a", Name: "a", MIMEType: "text/plain", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: 0.5}}},
	{"ResourceTemplate", Version20241105, &ResourceTemplate{URITemplate: "file:///{p}", Name: "p"}},
	{"ReadResourceResult", Version20241105, &ReadResourceResult{Contents: []*ResourceContents{{URI: "a://b", Text: ""}, {URI: "a://c", Blob: []byte("x"), MIMEType: "application/octet-stream"}}}},
	{"ListResourcesResult", Version20241105, &ListResourcesResult{}},
	{"ListResourceTemplatesResult", Version20241105, &ListResourceTemplatesResult{}},
	{"Prompt", Version20241105, &Prompt{Name: "p", Arguments: []*PromptArgument{{Name: "a", Required: true}}}},
	{"GetPromptResult", Version20241105, &GetPromptResult{Description: "d", Messages: []*PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "x"}}, {Role: RoleAssistant, Content: &EmbeddedResource{Resource: &ResourceContents{URI: "a://b", Text: "t"}}}}}},
	{"ListPromptsResult", Version20241105, &ListPromptsResult{}},
	{"CompleteResult", Version20241105, &CompleteResult{Completion: Completion{Values: []string{}}}},
	{"CompleteResult", Version20241105, &CompleteResult{Completion: Completion{Values: []string{"a"}, Total: 3, HasMore: true}}},
	{"CreateMessageResult", Version20241105, &CreateMessageResult{Role: RoleAssistant, Content: Contents{&TextContent{Text: "x"}}, Model: "m", StopReason: "endTurn"}},
	{"CreateMessageResult", Version20251125, &CreateMessageResult{Role: RoleAssistant, Content: Contents{&ToolUseContent{ID: "1", Name: "t", Input: json.RawMessage(`{}`)}}, Model: "m", StopReason: "toolUse"}},
	{"SamplingMessage", Version20251125, &SamplingMessage{Role: RoleUser, Content: Contents{&ToolResultContent{ToolUseID: "1", Content: []Content{&TextContent{Text: "r"}}}}}},
	{"ListRootsResult", Version20241105, &ListRootsResult{Roots: []*Root{{URI: "file:///r", Name: "r"}}}},
	{"ListRootsResult", Version20241105, &ListRootsResult{}},
	{"ElicitResult", Version20250618, &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"a": "b"}}},
	{"ElicitResult", Version20250618, &ElicitResult{Action: ElicitActionDecline}},
	{"EmptyResult", Version20241105, &EmptyResult{}},
}

// paramsCases are params of requests and notifications, checked as the
// params member of the named message definition.
var paramsCases = []struct {
	def    string
	method string
	since  string
	value  Params
}{
	{"InitializeRequest", MethodInitialize, Version20241105, &InitializeParams{ProtocolVersion: Version20241105, Capabilities: &ClientCapabilities{}, ClientInfo: &Implementation{Name: "c", Version: "1"}}},
	{"CallToolRequest", MethodToolsCall, Version20241105, &CallToolParams{Name: "t", Arguments: json.RawMessage(`{"a":1}`)}},
	{"ListToolsRequest", MethodToolsList, Version20241105, &ListToolsParams{Cursor: "c"}},
	{"ReadResourceRequest", MethodResourcesRead, Version20241105, &ReadResourceParams{URI: "a://b"}},
	{"SubscribeRequest", MethodResourcesSubscribe, Version20241105, &SubscribeParams{URI: "a://b"}},
	{"GetPromptRequest", MethodPromptsGet, Version20241105, &GetPromptParams{Name: "p", Arguments: map[string]string{"a": "b"}}},
	{"CompleteRequest", MethodCompletionComplete, Version20241105, &CompleteParams{Ref: &CompleteReference{Type: "ref/prompt", Name: "p"}, Argument: CompleteArgument{Name: "a", Value: "b"}}},
	{"CompleteRequest", MethodCompletionComplete, Version20250618, &CompleteParams{Ref: &CompleteReference{Type: "ref/resource", URI: "a://{x}"}, Argument: CompleteArgument{Name: "x", Value: "b"}, Context: &CompleteContext{Arguments: map[string]string{"y": "z"}}}},
	{"SetLevelRequest", MethodLoggingSetLevel, Version20241105, &SetLevelParams{Level: LoggingLevelWarning}},
	{"CreateMessageRequest", MethodSamplingCreateMessage, Version20241105, &CreateMessageParams{MaxTokens: 5, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "q"}}}}, ModelPreferences: &ModelPreferences{Hints: []ModelHint{{Name: "claude"}}, CostPriority: f64(0.2)}, IncludeContext: "thisServer", Temperature: f64(0.1)}},
	{"CreateMessageRequest", MethodSamplingCreateMessage, Version20251125, &CreateMessageParams{MaxTokens: 5, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "q"}}}}, Tools: []*Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}, ToolChoice: &ToolChoice{Mode: "auto"}}},
	{"ElicitRequest", MethodElicitationCreate, Version20250618, &ElicitParams{Message: "m", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}},
	{"ElicitRequest", MethodElicitationCreate, Version20251125, &ElicitParams{Mode: ElicitModeURL, Message: "m", URL: "https://x", ElicitationID: "e"}},
	{"ProgressNotification", NotificationProgress, Version20241105, &ProgressParams{ProgressToken: jsonrpc.StringID("t"), Progress: 1, Total: 2}},
	{"ProgressNotification", NotificationProgress, Version20250326, &ProgressParams{ProgressToken: jsonrpc.Int64ID(3), Progress: 1, Message: "m"}},
	{"CancelledNotification", NotificationCancelled, Version20241105, &CancelledParams{RequestID: jsonrpc.Int64ID(4), Reason: "r"}},
	{"LoggingMessageNotification", NotificationMessage, Version20241105, &LoggingMessageParams{Level: LoggingLevelError, Logger: "l", Data: map[string]any{"a": 1}}},
	{"ResourceUpdatedNotification", NotificationResourceUpdated, Version20241105, &ResourceUpdatedParams{URI: "a://b"}},
	{"ElicitationCompleteNotification", NotificationElicitationComplete, Version20251125, &ElicitationCompleteParams{ElicitationID: "e"}},
}

func revisionsSince(since string) []string {
	for i, r := range handshakeRevisions {
		if r == since {
			return handshakeRevisions[i:]
		}
	}
	panic("unknown revision " + since)
}

func TestTypesMatchOfficialSchemas(t *testing.T) {
	check := func(t *testing.T, rev, def string, data []byte) {
		t.Helper()
		r := officialSchema(t, rev, def)
		if r == nil {
			t.Fatalf("%s has no definition %s", rev, def)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(v); err != nil {
			t.Errorf("%s %s: %s\n%v", rev, def, data, err)
		}
	}
	for i, c := range wireCases {
		for _, rev := range revisionsSince(c.since) {
			t.Run(fmt.Sprintf("%s/%d/%s", c.def, i, rev), func(t *testing.T) {
				data, err := jsonv2.Marshal(c.value)
				if err != nil {
					t.Fatal(err)
				}
				check(t, rev, c.def, data)
			})
		}
	}
	for i, c := range paramsCases {
		for _, rev := range revisionsSince(c.since) {
			t.Run(fmt.Sprintf("%s/%d/%s", c.def, i, rev), func(t *testing.T) {
				raw, err := jsonv2.Marshal(c.value)
				if err != nil {
					t.Fatal(err)
				}
				req := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: c.method, Params: raw}
				if strings.HasSuffix(c.def, "Notification") {
					req.ID = jsonrpc.ID{}
				}
				data, err := jsonrpc.EncodeMessage(req)
				if err != nil {
					t.Fatal(err)
				}
				check(t, rev, c.def, data)
			})
		}
	}
}

// TestSchemaCheckCanFail makes sure the validation above is real.
func TestSchemaCheckCanFail(t *testing.T) {
	for _, bad := range []struct{ def, json string }{
		{"TextContent", `{"type":"text"}`},
		{"CallToolResult", `{"content":[{"type":"text"}]}`},
		{"Implementation", `{"name":"x"}`},
	} {
		r := officialSchema(t, Version20251125, bad.def)
		var v any
		json.Unmarshal([]byte(bad.json), &v)
		if r.Validate(v) == nil {
			t.Errorf("%s accepted %s", bad.def, bad.json)
		}
	}
	for _, rev := range handshakeRevisions {
		r := officialSchema(t, rev, "Implementation")
		var v any
		json.Unmarshal([]byte(`{"name":"x"}`), &v)
		if r.Validate(v) == nil {
			t.Errorf("%s: Implementation without version accepted", rev)
		}
	}
}

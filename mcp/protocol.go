package mcp

// Protocol types for the handshake-era revisions (2024-11-05 … 2025-11-25),
// as a superset: a field that only newer revisions define is omitted when
// empty.

import (
	"encoding/json"
	"errors"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Protocol revisions.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// LatestVersion is the newest revision this package negotiates.
	LatestVersion = Version20251125
)

// SupportedVersions returns the revisions this package speaks, oldest first.
func SupportedVersions() []string {
	return []string{Version20241105, Version20250326, Version20250618, Version20251125}
}

// Method names.
const (
	MethodInitialize             = "initialize"
	MethodPing                   = "ping"
	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	MethodCompletionComplete     = "completion/complete"
	MethodLoggingSetLevel        = "logging/setLevel"
	MethodSamplingCreateMessage  = "sampling/createMessage"
	MethodRootsList              = "roots/list"
	MethodElicitationCreate      = "elicitation/create"
)

// Notification names.
const (
	NotificationInitialized         = "notifications/initialized"
	NotificationCancelled           = "notifications/cancelled"
	NotificationProgress            = "notifications/progress"
	NotificationMessage             = "notifications/message"
	NotificationResourceListChanged = "notifications/resources/list_changed"
	NotificationResourceUpdated     = "notifications/resources/updated"
	NotificationPromptListChanged   = "notifications/prompts/list_changed"
	NotificationToolListChanged     = "notifications/tools/list_changed"
	NotificationRootsListChanged    = "notifications/roots/list_changed"
	NotificationElicitationComplete = "notifications/elicitation/complete"
)

// Meta is the _meta member of params, results and many objects.
type Meta map[string]any

// ProgressToken identifies the request a progress notification is about.
type ProgressToken = jsonrpc.ID

// Params is implemented by every params type.
type Params interface {
	meta() *Meta
}

// Result is implemented by every result type.
type Result interface {
	resultMeta() *Meta
}

const progressTokenKey = "progressToken"

// progressTokenOf returns the progress token in p's _meta.
func progressTokenOf(p Params) (ProgressToken, bool) {
	m := *p.meta()
	v, ok := m[progressTokenKey]
	if !ok {
		return ProgressToken{}, false
	}
	switch v := v.(type) {
	case string:
		return jsonrpc.StringID(v), true
	case float64:
		if v == float64(int64(v)) {
			return jsonrpc.Int64ID(int64(v)), true
		}
	case int64:
		return jsonrpc.Int64ID(v), true
	case int:
		return jsonrpc.Int64ID(int64(v)), true
	case jsonrpc.ID:
		return v, v.IsValid()
	}
	return ProgressToken{}, false
}

// setProgressToken records tok in p's _meta.
func setProgressToken(p Params, tok ProgressToken) {
	m := p.meta()
	if *m == nil {
		*m = Meta{}
	}
	(*m)[progressTokenKey] = tok
}

// SetProgressToken asks for progress notifications about a request: it
// records tok in the params' _meta.
func SetProgressToken(p Params, tok ProgressToken) { setProgressToken(p, tok) }

// Icon is an image a client may show for an implementation, tool,
// resource or prompt.
type Icon struct {
	Src      string    `json:"src"`
	MIMEType string    `json:"mimeType,omitzero"`
	Sizes    []string  `json:"sizes,omitzero"`
	Theme    IconTheme `json:"theme,omitzero"`
}

// Implementation names and describes an MCP client or server.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Version     string `json:"version"`
	Description string `json:"description,omitzero"`
	WebsiteURL  string `json:"websiteUrl,omitzero"`
	Icons       []Icon `json:"icons,omitzero"`
}

// RootsCapabilities is the client's roots capability.
type RootsCapabilities struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// SamplingCapabilities is the client's sampling capability.
type SamplingCapabilities struct {
	Context *struct{} `json:"context,omitzero"`
	Tools   *struct{} `json:"tools,omitzero"`
}

// FormElicitationCapabilities declares form-mode elicitation.
type FormElicitationCapabilities struct{}

// URLElicitationCapabilities declares URL-mode elicitation.
type URLElicitationCapabilities struct{}

// ElicitationCapabilities is the client's elicitation capability. An
// empty object means form mode only.
type ElicitationCapabilities struct {
	Form *FormElicitationCapabilities `json:"form,omitzero"`
	URL  *URLElicitationCapabilities  `json:"url,omitzero"`
}

// ClientCapabilities is what a client declares in initialize.
type ClientCapabilities struct {
	Experimental map[string]any           `json:"experimental,omitzero"`
	Roots        *RootsCapabilities       `json:"roots,omitzero"`
	Sampling     *SamplingCapabilities    `json:"sampling,omitzero"`
	Elicitation  *ElicitationCapabilities `json:"elicitation,omitzero"`
	// Tasks is the experimental tasks capability of 2025-11-25, kept as
	// raw JSON until tasks are supported.
	Tasks json.RawMessage `json:"tasks,omitzero"`
}

// ToolCapabilities is the server's tools capability.
type ToolCapabilities struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// PromptCapabilities is the server's prompts capability.
type PromptCapabilities struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourceCapabilities is the server's resources capability.
type ResourceCapabilities struct {
	Subscribe   bool `json:"subscribe,omitzero"`
	ListChanged bool `json:"listChanged,omitzero"`
}

// LoggingCapabilities is the server's logging capability.
type LoggingCapabilities struct{}

// CompletionCapabilities is the server's completions capability.
type CompletionCapabilities struct{}

// ServerCapabilities is what a server declares in its initialize result.
type ServerCapabilities struct {
	Experimental map[string]any          `json:"experimental,omitzero"`
	Logging      *LoggingCapabilities    `json:"logging,omitzero"`
	Completions  *CompletionCapabilities `json:"completions,omitzero"`
	Prompts      *PromptCapabilities     `json:"prompts,omitzero"`
	Resources    *ResourceCapabilities   `json:"resources,omitzero"`
	Tools        *ToolCapabilities       `json:"tools,omitzero"`
	// Tasks is the experimental tasks capability of 2025-11-25, kept as
	// raw JSON until tasks are supported.
	Tasks json.RawMessage `json:"tasks,omitzero"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	Meta            Meta                `json:"_meta,omitzero"`
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    *ClientCapabilities `json:"capabilities"`
	ClientInfo      *Implementation     `json:"clientInfo"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	Meta            Meta                `json:"_meta,omitzero"`
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    *ServerCapabilities `json:"capabilities"`
	ServerInfo      *Implementation     `json:"serverInfo"`
	Instructions    string              `json:"instructions,omitzero"`
}

// InitializedParams are the params of notifications/initialized.
type InitializedParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// PingParams are the params of ping.
type PingParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// EmptyResult is a result with nothing but _meta.
type EmptyResult struct {
	Meta Meta `json:"_meta,omitzero"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	Meta      Meta       `json:"_meta,omitzero"`
	RequestID jsonrpc.ID `json:"requestId,omitzero"`
	Reason    string     `json:"reason,omitzero"`
}

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	Meta          Meta          `json:"_meta,omitzero"`
	ProgressToken ProgressToken `json:"progressToken"`
	Progress      float64       `json:"progress"`
	Total         float64       `json:"total,omitzero"`
	Message       string        `json:"message,omitzero"`
}

// Role is the sender of a message: user or assistant.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations tell a client how to use or display an object.
type Annotations struct {
	Audience     []Role  `json:"audience,omitzero"`
	Priority     float64 `json:"priority,omitzero"`
	LastModified string  `json:"lastModified,omitzero"`
}

// ToolAnnotations are hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitzero"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool  `json:"destructiveHint,omitzero"`
	IdempotentHint  bool   `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitzero"`
}

// Tool describes a tool the server offers.
type Tool struct {
	Meta         Meta             `json:"_meta,omitzero"`
	Name         string           `json:"name"`
	Title        string           `json:"title,omitzero"`
	Description  string           `json:"description,omitzero"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitzero"`
	Annotations  *ToolAnnotations `json:"annotations,omitzero"`
	Icons        []Icon           `json:"icons,omitzero"`
	// Execution describes how the tool may be run (2025-11-25), such as
	// whether it supports being called as a task.
	Execution *ToolExecution `json:"execution,omitzero"`
}

// ToolExecution describes how a tool may be run.
type ToolExecution struct {
	// TaskSupport is "forbidden" (the default), "optional" or "required".
	TaskSupport string `json:"taskSupport,omitzero"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Meta   Meta   `json:"_meta,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// ListToolsResult is one page of tools.
type ListToolsResult struct {
	Meta       Meta    `json:"_meta,omitzero"`
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitzero"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Meta      Meta            `json:"_meta,omitzero"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitzero"`
}

// CallToolResult is a tool's result.
type CallToolResult struct {
	Meta              Meta            `json:"_meta,omitzero"`
	Content           Contents        `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitzero"`
	IsError           bool            `json:"isError,omitzero"`
}

// Resource describes a resource the server offers.
type Resource struct {
	Meta        Meta         `json:"_meta,omitzero"`
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Size        int64        `json:"size,omitzero"`
	Icons       []Icon       `json:"icons,omitzero"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI template.
type ResourceTemplate struct {
	Meta        Meta         `json:"_meta,omitzero"`
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitzero"`
}

// ListResourcesParams are the params of resources/list.
type ListResourcesParams struct {
	Meta   Meta   `json:"_meta,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// ListResourcesResult is one page of resources.
type ListResourcesResult struct {
	Meta       Meta        `json:"_meta,omitzero"`
	Resources  []*Resource `json:"resources"`
	NextCursor string      `json:"nextCursor,omitzero"`
}

// ListResourceTemplatesParams are the params of resources/templates/list.
type ListResourceTemplatesParams struct {
	Meta   Meta   `json:"_meta,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// ListResourceTemplatesResult is one page of resource templates.
type ListResourceTemplatesResult struct {
	Meta              Meta                `json:"_meta,omitzero"`
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string              `json:"nextCursor,omitzero"`
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}

// ReadResourceResult holds a resource's contents.
type ReadResourceResult struct {
	Meta     Meta                `json:"_meta,omitzero"`
	Contents []*ResourceContents `json:"contents"`
}

// ResourceContents is the content of a resource: text, or binary Blob.
type ResourceContents struct {
	Meta     Meta
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

type textResourceContents struct {
	Meta     Meta   `json:"_meta,omitzero"`
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitzero"`
	Text     string `json:"text"`
}

type blobResourceContents struct {
	Meta     Meta   `json:"_meta,omitzero"`
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitzero"`
	Blob     []byte `json:"blob,format:base64"`
}

type anyResourceContents struct {
	Meta     Meta    `json:"_meta,omitzero"`
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitzero"`
	Text     *string `json:"text"`
	Blob     []byte  `json:"blob,format:base64"`
}

// MarshalJSONTo writes blob when Blob is set and text otherwise.
func (r *ResourceContents) MarshalJSONTo(enc *jsontext.Encoder) error {
	if r.Blob != nil {
		return jsonv2.MarshalEncode(enc, &blobResourceContents{r.Meta, r.URI, r.MIMEType, r.Blob})
	}
	return jsonv2.MarshalEncode(enc, &textResourceContents{r.Meta, r.URI, r.MIMEType, r.Text})
}

// UnmarshalJSONFrom reads text or blob contents.
func (r *ResourceContents) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var a anyResourceContents
	if err := jsonv2.UnmarshalDecode(dec, &a); err != nil {
		return err
	}
	if a.Text == nil && a.Blob == nil {
		return errors.New("mcp: resource contents need text or blob")
	}
	*r = ResourceContents{Meta: a.Meta, URI: a.URI, MIMEType: a.MIMEType, Blob: a.Blob}
	if a.Text != nil {
		r.Text = *a.Text
	}
	return nil
}

// SubscribeParams are the params of resources/subscribe.
type SubscribeParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}

// UnsubscribeParams are the params of resources/unsubscribe.
type UnsubscribeParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}

// ResourceListChangedParams are the params of notifications/resources/list_changed.
type ResourceListChangedParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// ToolListChangedParams are the params of notifications/tools/list_changed.
type ToolListChangedParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// PromptListChangedParams are the params of notifications/prompts/list_changed.
type PromptListChangedParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// RootsListChangedParams are the params of notifications/roots/list_changed.
type RootsListChangedParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// Prompt describes a prompt template the server offers.
type Prompt struct {
	Meta        Meta              `json:"_meta,omitzero"`
	Name        string            `json:"name"`
	Title       string            `json:"title,omitzero"`
	Description string            `json:"description,omitzero"`
	Arguments   []*PromptArgument `json:"arguments,omitzero"`
	Icons       []Icon            `json:"icons,omitzero"`
}

// PromptArgument describes an argument a prompt accepts.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Required    bool   `json:"required,omitzero"`
}

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams struct {
	Meta   Meta   `json:"_meta,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// ListPromptsResult is one page of prompts.
type ListPromptsResult struct {
	Meta       Meta      `json:"_meta,omitzero"`
	Prompts    []*Prompt `json:"prompts"`
	NextCursor string    `json:"nextCursor,omitzero"`
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Meta      Meta              `json:"_meta,omitzero"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitzero"`
}

// GetPromptResult is a rendered prompt.
type GetPromptResult struct {
	Meta        Meta             `json:"_meta,omitzero"`
	Description string           `json:"description,omitzero"`
	Messages    []*PromptMessage `json:"messages"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

type promptMessageWire struct {
	Role    Role           `json:"role"`
	Content jsontext.Value `json:"content"`
}

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (m *PromptMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	c, err := marshalContent(m.Content)
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, &promptMessageWire{Role: m.Role, Content: c})
}

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (m *PromptMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w promptMessageWire
	if err := jsonv2.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	c, err := unmarshalContent(w.Content)
	if err != nil {
		return err
	}
	m.Role, m.Content = w.Role, c
	return nil
}

// CompleteReference names what to complete: a prompt (Type "ref/prompt",
// Name) or a resource template (Type "ref/resource", URI).
type CompleteReference struct {
	Type  ReferenceType `json:"type"`
	Name  string        `json:"name,omitzero"`
	Title string        `json:"title,omitzero"`
	URI   string        `json:"uri,omitzero"`
}

// CompleteArgument is the argument being completed.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries already-resolved arguments.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitzero"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Meta     Meta               `json:"_meta,omitzero"`
	Ref      *CompleteReference `json:"ref"`
	Argument CompleteArgument   `json:"argument"`
	Context  *CompleteContext   `json:"context,omitzero"`
}

// Completion is the set of completion values.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitzero"`
	HasMore bool     `json:"hasMore,omitzero"`
}

// CompleteResult is the answer to completion/complete.
type CompleteResult struct {
	Meta       Meta       `json:"_meta,omitzero"`
	Completion Completion `json:"completion"`
}

// LoggingLevel is a syslog severity.
type LoggingLevel string

// Logging levels, least severe first.
const (
	LoggingLevelDebug     LoggingLevel = "debug"
	LoggingLevelInfo      LoggingLevel = "info"
	LoggingLevelNotice    LoggingLevel = "notice"
	LoggingLevelWarning   LoggingLevel = "warning"
	LoggingLevelError     LoggingLevel = "error"
	LoggingLevelCritical  LoggingLevel = "critical"
	LoggingLevelAlert     LoggingLevel = "alert"
	LoggingLevelEmergency LoggingLevel = "emergency"
)

var levelRank = map[LoggingLevel]int{
	LoggingLevelDebug: 0, LoggingLevelInfo: 1, LoggingLevelNotice: 2, LoggingLevelWarning: 3,
	LoggingLevelError: 4, LoggingLevelCritical: 5, LoggingLevelAlert: 6, LoggingLevelEmergency: 7,
}

func (l LoggingLevel) valid() bool { _, ok := levelRank[l]; return ok }

// less reports whether l is less severe than m.
func (l LoggingLevel) less(m LoggingLevel) bool { return levelRank[l] < levelRank[m] }

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	Meta  Meta         `json:"_meta,omitzero"`
	Level LoggingLevel `json:"level"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Meta   Meta         `json:"_meta,omitzero"`
	Level  LoggingLevel `json:"level"`
	Logger string       `json:"logger,omitzero"`
	Data   any          `json:"data"`
}

// ModelHint suggests a model by name.
type ModelHint struct {
	Name string `json:"name,omitzero"`
}

// ModelPreferences are the server's preferences for model selection.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitzero"`
	CostPriority         *float64    `json:"costPriority,omitzero"`
	SpeedPriority        *float64    `json:"speedPriority,omitzero"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitzero"`
}

// ToolChoice controls how the model uses tools while sampling.
type ToolChoice struct {
	Mode string `json:"mode,omitzero"`
}

// SamplingMessage is a message in a sampling conversation. Content holds
// one block, or (from 2025-11-25) several; one block is sent as an object,
// as every revision allows.
type SamplingMessage struct {
	Meta    Meta     `json:"_meta,omitzero"`
	Role    Role     `json:"role"`
	Content Contents `json:"content"`
}

type samplingMessageWire struct {
	Meta    Meta           `json:"_meta,omitzero"`
	Role    Role           `json:"role"`
	Content jsontext.Value `json:"content"`
}

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (m *SamplingMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	c, err := marshalOneOrMany(m.Content)
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, &samplingMessageWire{Meta: m.Meta, Role: m.Role, Content: c})
}

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom; it accepts a single
// block or an array.
func (m *SamplingMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w samplingMessageWire
	if err := jsonv2.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	c, err := unmarshalOneOrMany(w.Content)
	if err != nil {
		return err
	}
	m.Meta, m.Role, m.Content = w.Meta, w.Role, c
	return nil
}

// IncludeContext asks the client to include context from MCP servers.
type IncludeContext string

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Meta             Meta               `json:"_meta,omitzero"`
	Messages         []*SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences  `json:"modelPreferences,omitzero"`
	SystemPrompt     string             `json:"systemPrompt,omitzero"`
	IncludeContext   IncludeContext     `json:"includeContext,omitzero"`
	Temperature      *float64           `json:"temperature,omitzero"`
	MaxTokens        int64              `json:"maxTokens"`
	StopSequences    []string           `json:"stopSequences,omitzero"`
	Metadata         map[string]any     `json:"metadata,omitzero"`
	Tools            []*Tool            `json:"tools,omitzero"`
	ToolChoice       *ToolChoice        `json:"toolChoice,omitzero"`
}

// CreateMessageResult is the client's sampled message. Like
// SamplingMessage, Content holds one block or (2025-11-25) several.
type CreateMessageResult struct {
	Meta       Meta     `json:"_meta,omitzero"`
	Role       Role     `json:"role"`
	Content    Contents `json:"content"`
	Model      string   `json:"model"`
	StopReason string   `json:"stopReason,omitzero"`
}

type createMessageResultWire struct {
	Meta       Meta           `json:"_meta,omitzero"`
	Role       Role           `json:"role"`
	Content    jsontext.Value `json:"content"`
	Model      string         `json:"model"`
	StopReason string         `json:"stopReason,omitzero"`
}

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (r *CreateMessageResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	c, err := marshalOneOrMany(r.Content)
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, &createMessageResultWire{r.Meta, r.Role, c, r.Model, r.StopReason})
}

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (r *CreateMessageResult) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w createMessageResultWire
	if err := jsonv2.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	c, err := unmarshalOneOrMany(w.Content)
	if err != nil {
		return err
	}
	*r = CreateMessageResult{Meta: w.Meta, Role: w.Role, Content: c, Model: w.Model, StopReason: w.StopReason}
	return nil
}

// Root is a directory or file the client exposes to servers.
type Root struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
	Name string `json:"name,omitzero"`
}

// ListRootsParams are the params of roots/list.
type ListRootsParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// ListRootsResult lists the client's roots.
type ListRootsResult struct {
	Meta  Meta    `json:"_meta,omitzero"`
	Roots []*Root `json:"roots"`
}

// Elicitation modes.
const (
	ElicitModeForm ElicitMode = "form"
	ElicitModeURL  ElicitMode = "url"
)

// ElicitParams are the params of elicitation/create: form mode
// (RequestedSchema) or URL mode (URL and ElicitationID).
type ElicitParams struct {
	Meta            Meta            `json:"_meta,omitzero"`
	Mode            ElicitMode      `json:"mode,omitzero"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitzero"`
	URL             string          `json:"url,omitzero"`
	ElicitationID   string          `json:"elicitationId,omitzero"`
}

// ElicitAction is the user's response to an elicitation.
type ElicitAction string

// Elicitation actions.
const (
	ElicitActionAccept  ElicitAction = "accept"
	ElicitActionDecline ElicitAction = "decline"
	ElicitActionCancel  ElicitAction = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Meta    Meta           `json:"_meta,omitzero"`
	Action  ElicitAction   `json:"action"`
	Content map[string]any `json:"content,omitzero"`
}

// ElicitationCompleteParams are the params of notifications/elicitation/complete.
type ElicitationCompleteParams struct {
	Meta          Meta   `json:"_meta,omitzero"`
	ElicitationID string `json:"elicitationId"`
}

func (p *InitializeParams) meta() *Meta            { return &p.Meta }
func (p *InitializedParams) meta() *Meta           { return &p.Meta }
func (p *PingParams) meta() *Meta                  { return &p.Meta }
func (p *CancelledParams) meta() *Meta             { return &p.Meta }
func (p *ProgressParams) meta() *Meta              { return &p.Meta }
func (p *ListToolsParams) meta() *Meta             { return &p.Meta }
func (p *CallToolParams) meta() *Meta              { return &p.Meta }
func (p *ListResourcesParams) meta() *Meta         { return &p.Meta }
func (p *ListResourceTemplatesParams) meta() *Meta { return &p.Meta }
func (p *ReadResourceParams) meta() *Meta          { return &p.Meta }
func (p *SubscribeParams) meta() *Meta             { return &p.Meta }
func (p *UnsubscribeParams) meta() *Meta           { return &p.Meta }
func (p *ResourceUpdatedParams) meta() *Meta       { return &p.Meta }
func (p *ResourceListChangedParams) meta() *Meta   { return &p.Meta }
func (p *ToolListChangedParams) meta() *Meta       { return &p.Meta }
func (p *PromptListChangedParams) meta() *Meta     { return &p.Meta }
func (p *RootsListChangedParams) meta() *Meta      { return &p.Meta }
func (p *ListPromptsParams) meta() *Meta           { return &p.Meta }
func (p *GetPromptParams) meta() *Meta             { return &p.Meta }
func (p *CompleteParams) meta() *Meta              { return &p.Meta }
func (p *SetLevelParams) meta() *Meta              { return &p.Meta }
func (p *LoggingMessageParams) meta() *Meta        { return &p.Meta }
func (p *CreateMessageParams) meta() *Meta         { return &p.Meta }
func (p *ListRootsParams) meta() *Meta             { return &p.Meta }
func (p *ElicitParams) meta() *Meta                { return &p.Meta }
func (p *ElicitationCompleteParams) meta() *Meta   { return &p.Meta }

func (r *InitializeResult) resultMeta() *Meta            { return &r.Meta }
func (r *EmptyResult) resultMeta() *Meta                 { return &r.Meta }
func (r *ListToolsResult) resultMeta() *Meta             { return &r.Meta }
func (r *CallToolResult) resultMeta() *Meta              { return &r.Meta }
func (r *ListResourcesResult) resultMeta() *Meta         { return &r.Meta }
func (r *ListResourceTemplatesResult) resultMeta() *Meta { return &r.Meta }
func (r *ReadResourceResult) resultMeta() *Meta          { return &r.Meta }
func (r *ListPromptsResult) resultMeta() *Meta           { return &r.Meta }
func (r *GetPromptResult) resultMeta() *Meta             { return &r.Meta }
func (r *CompleteResult) resultMeta() *Meta              { return &r.Meta }
func (r *CreateMessageResult) resultMeta() *Meta         { return &r.Meta }
func (r *ListRootsResult) resultMeta() *Meta             { return &r.Meta }
func (r *ElicitResult) resultMeta() *Meta                { return &r.Meta }

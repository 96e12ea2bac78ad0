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
	// Version20260728 is the first revision without the initialize
	// handshake: every request carries its revision and the client's
	// capabilities in _meta (see [Meta]), and a server serves each on its
	// own. A [Server] serves it beside the handshake-era revisions.
	Version20260728 = "2026-07-28"
	// LatestVersion is the newest revision this package negotiates with
	// initialize.
	LatestVersion = Version20251125
)

// modernVersions are the revisions of the stateless era a server serves,
// newest first.
var modernVersions = []string{Version20260728}

// isModernVersion reports whether v is a revision of the stateless era,
// known or not: 2026-07-28 or later.
func isModernVersion(v string) bool { return v >= Version20260728 }

// SupportedVersions returns the revisions of the handshake era this
// package speaks, oldest first: those initialize negotiates. The package
// speaks [Version20260728] too, without a handshake.
func SupportedVersions() []string {
	return []string{Version20241105, Version20250326, Version20250618, Version20251125}
}

// Method names.
const (
	// MethodServerDiscover asks a server for its revisions and
	// capabilities (2026-07-28).
	MethodServerDiscover = "server/discover"
	// MethodSubscriptionsListen opens a stream of change notifications
	// (2026-07-28).
	MethodSubscriptionsListen    = "subscriptions/listen"
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
	// NotificationSubscriptionsAcknowledged opens a subscriptions/listen
	// stream (2026-07-28).
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// ProgressToken identifies the request a progress notification is about:
// a string or an integer that the sender of the request chooses, unique
// among its requests in flight, and puts in the request's _meta (see
// [SetProgressToken]).
type ProgressToken = jsonrpc.ID

// Params is implemented by every params type.
type Params interface {
	meta() *Meta
}

// Result is implemented by every result type.
type Result interface {
	resultMeta() *Meta
	resultType() *ResultType
	cacheHints() (ttl **int64, scope *CacheScope)
	// nilMember returns the path of a required member the result lacks
	// (generated, see jsonmethods.go).
	nilMember() string
}

// progressTokenOf returns the progress token in p's _meta.
func progressTokenOf(p Params) (ProgressToken, bool) {
	tok := p.meta().ProgressToken
	return tok, tok.IsValid()
}

// SetProgressToken asks for progress notifications about a request: it
// records tok in the params' _meta.
func SetProgressToken(p Params, tok ProgressToken) { p.meta().ProgressToken = tok }

// Icon is an image a client may show for an implementation, tool,
// resource, resource template or prompt (from 2025-11-25).
type Icon struct {
	// Src is where the image is: an http or https URL, or a data: URI
	// holding the image base64-encoded. Required. A client should fetch
	// icons only from origins it trusts, and treat SVG with care, since it
	// can carry script.
	Src string `json:"src"`
	// MIMEType is the image's media type, such as "image/png" or
	// "image/svg+xml", for when the source does not say or says something
	// too generic. Optional.
	MIMEType string `json:"mimeType,omitzero"`
	// Sizes lists the sizes the image is made for, each "WxH" in pixels
	// (such as "48x48"), or "any" for a scalable image. Optional; empty
	// means the image may be used at any size.
	Sizes []string `json:"sizes,omitzero"`
	// Theme is "light" for an icon drawn for a light background or "dark"
	// for a dark one. Optional; empty means it suits either.
	Theme IconTheme `json:"theme,omitzero"`
}

// Implementation names and describes an MCP client or server.
type Implementation struct {
	// Name identifies the implementation to programs and logs; clients show
	// it when Title is empty. Required.
	Name string `json:"name"`
	// Title is the implementation's name for people to read. Optional; from
	// 2025-06-18.
	Title string `json:"title,omitzero"`
	// Version is the implementation's own version, not the protocol
	// revision. Required.
	Version string `json:"version"`
	// Description says in a sentence or two what the implementation does or
	// is for. Optional; from 2025-11-25.
	Description string `json:"description,omitzero"`
	// WebsiteURL is the address of the implementation's web site. Optional;
	// from 2025-11-25.
	WebsiteURL string `json:"websiteUrl,omitzero"`
	// Icons are images a client may show for the implementation. Optional;
	// from 2025-11-25.
	Icons []Icon `json:"icons,omitzero"`
}

// RootsCapabilities is the client's roots capability.
type RootsCapabilities struct {
	// ListChanged reports that the client sends
	// notifications/roots/list_changed whenever its roots change.
	ListChanged bool `json:"listChanged,omitzero"`
}

// SamplingCapabilities is the client's sampling capability.
type SamplingCapabilities struct {
	// Context, when non-nil, declares that the client honours the
	// "thisServer" and "allServers" values of
	// CreateMessageParams.IncludeContext. From 2025-11-25.
	Context *struct{} `json:"context,omitzero"`
	// Tools, when non-nil, declares that the client accepts
	// CreateMessageParams.Tools and ToolChoice, letting the model call tools
	// while it samples. From 2025-11-25.
	Tools *struct{} `json:"tools,omitzero"`
}

// FormElicitationCapabilities declares form-mode elicitation.
type FormElicitationCapabilities struct{}

// URLElicitationCapabilities declares URL-mode elicitation.
type URLElicitationCapabilities struct{}

// ElicitationCapabilities is the client's elicitation capability. An
// empty object means form mode only.
type ElicitationCapabilities struct {
	// Form, when non-nil, declares form-mode elicitation. From 2025-11-25;
	// an elicitation capability with neither Form nor URL set also means
	// form mode, as it did in 2025-06-18.
	Form *FormElicitationCapabilities `json:"form,omitzero"`
	// URL, when non-nil, declares URL-mode elicitation. From 2025-11-25.
	URL *URLElicitationCapabilities `json:"url,omitzero"`
}

// ClientCapabilities is what a client declares in initialize.
type ClientCapabilities struct {
	// Experimental holds capabilities outside the specification, keyed by
	// name; whoever defines each one defines its value. Optional.
	Experimental map[string]any `json:"experimental,omitzero"`
	// Roots, when non-nil, declares that the client answers roots/list.
	Roots *RootsCapabilities `json:"roots,omitzero"`
	// Sampling, when non-nil, declares that the client answers
	// sampling/createMessage.
	Sampling *SamplingCapabilities `json:"sampling,omitzero"`
	// Elicitation, when non-nil, declares that the client answers
	// elicitation/create. From 2025-06-18.
	Elicitation *ElicitationCapabilities `json:"elicitation,omitzero"`
	// Tasks, when non-nil, is the tasks capability of 2025-11-25: which
	// task operations the peer serves and which requests it runs as
	// tasks. (2026-07-28 declares the tasks extension in Extensions.)
	Tasks *TasksCapabilities `json:"tasks,omitzero"`
	// Extensions declares the extensions the client supports, keyed by
	// extension identifier (such as [SkillsExtension]), each with its
	// settings object ({} for none). Optional.
	Extensions map[string]json.RawMessage `json:"extensions,omitzero"`
}

// ToolCapabilities is the server's tools capability.
type ToolCapabilities struct {
	// ListChanged reports that the server sends
	// notifications/tools/list_changed whenever its tools change.
	ListChanged bool `json:"listChanged,omitzero"`
}

// PromptCapabilities is the server's prompts capability.
type PromptCapabilities struct {
	// ListChanged reports that the server sends
	// notifications/prompts/list_changed whenever its prompts change.
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourceCapabilities is the server's resources capability.
type ResourceCapabilities struct {
	// Subscribe reports that clients may subscribe to resources with
	// resources/subscribe, and be told of changes with
	// notifications/resources/updated.
	Subscribe bool `json:"subscribe,omitzero"`
	// ListChanged reports that the server sends
	// notifications/resources/list_changed whenever its list of resources
	// changes.
	ListChanged bool `json:"listChanged,omitzero"`
}

// LoggingCapabilities is the server's logging capability.
type LoggingCapabilities struct{}

// CompletionCapabilities is the server's completions capability.
type CompletionCapabilities struct{}

// ServerCapabilities is what a server declares in its initialize result.
type ServerCapabilities struct {
	// Experimental holds capabilities outside the specification, keyed by
	// name; whoever defines each one defines its value. Optional.
	Experimental map[string]any `json:"experimental,omitzero"`
	// Logging, when non-nil, declares that the server sends log messages
	// (notifications/message) and accepts logging/setLevel.
	Logging *LoggingCapabilities `json:"logging,omitzero"`
	// Completions, when non-nil, declares that the server answers
	// completion/complete. From 2025-03-26.
	Completions *CompletionCapabilities `json:"completions,omitzero"`
	// Prompts, when non-nil, declares that the server offers prompts
	// (prompts/list and prompts/get).
	Prompts *PromptCapabilities `json:"prompts,omitzero"`
	// Resources, when non-nil, declares that the server offers resources
	// (resources/list, resources/templates/list and resources/read).
	Resources *ResourceCapabilities `json:"resources,omitzero"`
	// Tools, when non-nil, declares that the server offers tools (tools/list
	// and tools/call).
	Tools *ToolCapabilities `json:"tools,omitzero"`
	// Tasks, when non-nil, is the tasks capability of 2025-11-25: which
	// task operations the peer serves and which requests it runs as
	// tasks. (2026-07-28 declares the tasks extension in Extensions.)
	Tasks *TasksCapabilities `json:"tasks,omitzero"`
	// Extensions declares the extensions the server supports, keyed by
	// extension identifier, each with its settings object ({} for none).
	// Optional. A server with skills (see [Server.AddSkills]) declares
	// [SkillsExtension] itself.
	Extensions map[string]json.RawMessage `json:"extensions,omitzero"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ProtocolVersion is the revision the client asks for, normally the
	// newest it supports, such as "2025-11-25". The server answers with it
	// if it can, or else with a revision of its own choosing. Required.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities are the optional features the client supports. Required;
	// an empty value declares none.
	Capabilities *ClientCapabilities `json:"capabilities"`
	// ClientInfo names the client and its version. Required.
	ClientInfo *Implementation `json:"clientInfo"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// ProtocolVersion is the revision the session uses. A client that does
	// not support it should disconnect. Required.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities are the optional features the server supports. Required;
	// an empty value declares none.
	Capabilities *ServerCapabilities `json:"capabilities"`
	// ServerInfo names the server and its version. Required.
	ServerInfo *Implementation `json:"serverInfo"`
	// Instructions tell the client, and through it the model, how to make
	// good use of the server, for example as text to add to a system prompt.
	// Optional.
	Instructions string `json:"instructions,omitzero"`
}

// InitializedParams are the params of notifications/initialized.
type InitializedParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// PingParams are the params of ping.
type PingParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// EmptyResult is a result with nothing but _meta.
type EmptyResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
}

// CancelledParams are the params of notifications/cancelled, which either
// side sends to abandon a request it sent earlier. The receiver should stop
// the work and send no answer; one that has already answered ignores it.
type CancelledParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// RequestID is the id of the request to abandon: one the sender of this
	// notification sent earlier, in the same direction. It must be given for
	// ordinary requests; 2025-11-25 made it optional on the wire because
	// tasks are cancelled with tasks/cancel instead.
	RequestID jsonrpc.ID `json:"requestId,omitzero"`
	// Reason says why the request was cancelled, for logs or for the user.
	// Optional.
	Reason string `json:"reason,omitzero"`
}

// ProgressParams are the params of notifications/progress, which report
// how far the work on a request has got to the side that sent it with a
// progress token.
type ProgressParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ProgressToken is the token the request carried in its _meta; it tells
	// which request this notification is about. Required.
	ProgressToken ProgressToken `json:"progressToken"`
	// Progress is how far the work has got, in a unit of the sender's
	// choosing (items, bytes, percent). It must grow with every
	// notification, even when Total is unknown, and may be fractional.
	// Required.
	Progress float64 `json:"progress"`
	// Total is the value Progress will have when the work is done, in the
	// same unit, if known. Optional; zero means unknown.
	Total float64 `json:"total,omitzero"`
	// Message describes the current state of the work for people to read.
	// Optional; from 2025-03-26.
	Message string `json:"message,omitzero"`
}

// Role is the sender of a message: user or assistant.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations tell a client how to use or display an object (a resource or
// a content block): who it is for, how much it matters, and when it last
// changed. Every field is optional.
type Annotations struct {
	// Audience says who the object is meant for: RoleUser, RoleAssistant or
	// both. Optional.
	Audience []Role `json:"audience,omitzero"`
	// Priority is how much the object matters to the server's purpose, from
	// 0 (it can be left out) to 1 (it is effectively required). Optional.
	// Zero is not sent, so a priority of exactly 0 reads as absent.
	Priority float64 `json:"priority,omitzero"`
	// LastModified is when the object last changed, as an ISO 8601 time such
	// as "2025-01-12T15:00:58Z". Optional; from 2025-06-18.
	LastModified string `json:"lastModified,omitzero"`
}

// ToolAnnotations are hints about a tool's behaviour (from 2025-03-26), for
// clients deciding, say, whether to ask the user before a call. They are
// the server's claims: a client should not rely on them for safety unless
// it trusts the server.
type ToolAnnotations struct {
	// Title is a name for people to read; Tool.Title, when set, takes
	// precedence over it. Optional.
	Title string `json:"title,omitzero"`
	// ReadOnlyHint claims that the tool changes nothing in its environment.
	// Optional; absent means false.
	ReadOnlyHint bool `json:"readOnlyHint,omitzero"`
	// DestructiveHint claims, for a tool that is not read-only, that it may
	// delete or overwrite things (true) or only adds to them (false).
	// Optional; nil means true.
	DestructiveHint *bool `json:"destructiveHint,omitzero"`
	// IdempotentHint claims, for a tool that is not read-only, that calling
	// it again with the same arguments has no further effect. Optional;
	// absent means false.
	IdempotentHint bool `json:"idempotentHint,omitzero"`
	// OpenWorldHint claims that the tool reaches an open set of outside
	// entities, as a web search does (true), rather than a closed domain
	// such as its own memory (false). Optional; nil means true.
	OpenWorldHint *bool `json:"openWorldHint,omitzero"`
}

// Tool describes a tool the server offers: its name, what it does, the
// JSON Schema of its arguments and, optionally, that of its structured
// result. tools/list returns it.
type Tool struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// Name identifies the tool in tools/call. Required. It should be 1 to
	// 128 characters from A-Z, a-z, 0-9, '_', '-' and '.', unique within the
	// server (see [ValidateToolName]); names are case-sensitive.
	Name string `json:"name"`
	// Title is a name for people to read; when it is empty, clients show
	// Annotations.Title and then Name. Optional; from 2025-06-18.
	Title string `json:"title,omitzero"`
	// Description tells the model what the tool does and when to use it.
	// Optional, but models choose tools by it.
	Description string `json:"description,omitzero"`
	// InputSchema is the JSON Schema of the arguments: an object schema
	// ({"type":"object",...}). Required. From 2025-11-25 the dialect is JSON
	// Schema 2020-12 unless the schema names another with $schema.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema (an object schema) that the
	// StructuredContent of every successful call conforms to. Optional; from
	// 2025-06-18.
	OutputSchema json.RawMessage `json:"outputSchema,omitzero"`
	// Annotations are hints about the tool's behaviour. They are claims of
	// the server, to be trusted only as far as the server is. Optional; from
	// 2025-03-26.
	Annotations *ToolAnnotations `json:"annotations,omitzero"`
	// Icons are images a client may show for the tool. Optional; from
	// 2025-11-25.
	Icons []Icon `json:"icons,omitzero"`
	// Execution describes how the tool may be run (2025-11-25), such as
	// whether it supports being called as a task.
	Execution *ToolExecution `json:"execution,omitzero"`

	// async marks a tool added with AddAsyncTool: its handler decides
	// where its task starts (see ServerRequest.GoAsync). Never sent.
	async bool
	// wire, set on a server's own copy of a registered tool, is its
	// encoding, written while the tool still holds what it was encoded
	// from (see toolWire). Never sent.
	wire *toolWire
}

// ToolExecution describes how a tool may be run.
type ToolExecution struct {
	// TaskSupport is [TaskForbidden] (the default, as empty),
	// [TaskOptional] or [TaskRequired].
	TaskSupport string `json:"taskSupport,omitzero"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the NextCursor of the previous page, to get the page after
	// it; cursors are opaque. Optional; empty asks for the first page.
	Cursor string `json:"cursor,omitzero"`
}

// ListToolsResult is one page of tools.
type ListToolsResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result before fetching it again, from 2026-07-28 (0: stale at
	// once). Servers fill it in on that revision; nil on earlier ones.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy of the result, from
	// 2026-07-28: public (no user-specific data) or private (the same
	// authorization context only). Servers fill it in on that revision.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Tools holds this page's tools. Required; may be empty.
	Tools []*Tool `json:"tools"`
	// NextCursor, when not empty, is the cursor that gets the next page;
	// empty means this is the last page. Optional.
	NextCursor string `json:"nextCursor,omitzero"`
}

// CallToolParams are the params of tools/call, which runs a tool.
type CallToolParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Name is the tool to call. Required.
	Name string `json:"name"`
	// Arguments is a JSON object holding the tool's arguments, which should
	// match its InputSchema. Optional; empty means no arguments.
	Arguments json.RawMessage `json:"arguments,omitzero"`
	// InputResponses answers, by key, the input requests of the
	// InputRequiredResult a 2026-07-28 server answered an earlier try of
	// this request with (see [InputRequiredResult]); each value is the
	// client's result for that request (an ElicitResult, a
	// CreateMessageResult or a ListRootsResult). Servers read it through
	// the session's Elicit, CreateMessage and ListRoots. Optional.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// RequestState echoes, unchanged, the requestState of that
	// InputRequiredResult. Optional.
	RequestState string `json:"requestState,omitempty"`
	// Task asks for the call to run as a task (2025-11-25; see
	// [TaskMetadata]). Optional; 2026-07-28 ignores it.
	Task *TaskMetadata `json:"task,omitzero"`
}

// CallToolResult is the answer to tools/call. A failure of the tool itself
// is reported as a result with IsError set, which the model can read, not
// as a JSON-RPC error.
type CallToolResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// Content is the result for the model to read: text, images, audio,
	// resource links or embedded resources. Required; may be empty. A tool
	// that sets StructuredContent should also put its JSON here, in a text
	// block, for clients that do not read StructuredContent.
	Content Contents `json:"content"`
	// StructuredContent is the result as a JSON object, which conforms to
	// the tool's OutputSchema when it has one. Optional; from 2025-06-18.
	StructuredContent json.RawMessage `json:"structuredContent,omitzero"`
	// IsError marks a failure of the tool itself (bad arguments, a failed
	// operation), described in Content so that the model can read it and try
	// again. Failures of the protocol, such as an unknown tool, are JSON-RPC
	// errors instead. Optional; absent means false.
	IsError bool `json:"isError,omitzero"`
}

// Resource describes a resource the server offers: data, identified by a
// URI, that clients read with resources/read. resources/list returns it.
type Resource struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// URI identifies the resource; resources/read takes it. Required.
	URI string `json:"uri"`
	// Name identifies the resource to programs; clients show it when Title
	// is empty. Required.
	Name string `json:"name"`
	// Title is a name for people to read. Optional; from 2025-06-18.
	Title string `json:"title,omitzero"`
	// Description says what the resource holds, to help the model or the
	// user decide whether to use it. Optional.
	Description string `json:"description,omitzero"`
	// MIMEType is the media type of the resource's contents, if known.
	// Optional.
	MIMEType string `json:"mimeType,omitzero"`
	// Annotations say who the resource is for and how much it matters.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
	// Size is the size of the resource's raw contents in bytes (before any
	// base64 encoding), if known, so that a host can judge how much context
	// it would take. Optional; zero means unknown.
	Size int64 `json:"size,omitzero"`
	// Icons are images a client may show for the resource. Optional; from
	// 2025-11-25.
	Icons []Icon `json:"icons,omitzero"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI template.
type ResourceTemplate struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// URITemplate is an RFC 6570 URI template; each expansion of it is the
	// URI of a resource the template stands for. Required.
	URITemplate string `json:"uriTemplate"`
	// Name identifies the template to programs; clients show it when Title
	// is empty. Required.
	Name string `json:"name"`
	// Title is a name for people to read. Optional; from 2025-06-18.
	Title string `json:"title,omitzero"`
	// Description says what the template's resources hold, to help the model
	// or the user choose. Optional.
	Description string `json:"description,omitzero"`
	// MIMEType is the media type shared by every resource the template
	// yields; leave it empty unless they all have the same one. Optional.
	MIMEType string `json:"mimeType,omitzero"`
	// Annotations say who the resources are for and how much they matter.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
	// Icons are images a client may show for the template. Optional; from
	// 2025-11-25.
	Icons []Icon `json:"icons,omitzero"`
}

// ListResourcesParams are the params of resources/list.
type ListResourcesParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the NextCursor of the previous page, to get the page after
	// it; cursors are opaque. Optional; empty asks for the first page.
	Cursor string `json:"cursor,omitzero"`
}

// ListResourcesResult is one page of resources.
type ListResourcesResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result before fetching it again, from 2026-07-28 (0: stale at
	// once). Servers fill it in on that revision; nil on earlier ones.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy of the result, from
	// 2026-07-28: public (no user-specific data) or private (the same
	// authorization context only). Servers fill it in on that revision.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Resources holds this page's resources. Required; may be empty.
	Resources []*Resource `json:"resources"`
	// NextCursor, when not empty, is the cursor that gets the next page;
	// empty means this is the last page. Optional.
	NextCursor string `json:"nextCursor,omitzero"`
}

// ListResourceTemplatesParams are the params of resources/templates/list.
type ListResourceTemplatesParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the NextCursor of the previous page, to get the page after
	// it; cursors are opaque. Optional; empty asks for the first page.
	Cursor string `json:"cursor,omitzero"`
}

// ListResourceTemplatesResult is one page of resource templates.
type ListResourceTemplatesResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result before fetching it again, from 2026-07-28 (0: stale at
	// once). Servers fill it in on that revision; nil on earlier ones.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy of the result, from
	// 2026-07-28: public (no user-specific data) or private (the same
	// authorization context only). Servers fill it in on that revision.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// ResourceTemplates holds this page's templates. Required; may be empty.
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	// NextCursor, when not empty, is the cursor that gets the next page;
	// empty means this is the last page. Optional.
	NextCursor string `json:"nextCursor,omitzero"`
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI is the resource to read: a listed resource's URI, or any URI the
	// server accepts, such as an expansion of one of its templates.
	// Required.
	URI string `json:"uri"`
	// InputResponses answers, by key, the input requests of the
	// InputRequiredResult a 2026-07-28 server answered an earlier try of
	// this request with (see [InputRequiredResult]); each value is the
	// client's result for that request (an ElicitResult, a
	// CreateMessageResult or a ListRootsResult). Servers read it through
	// the session's Elicit, CreateMessage and ListRoots. Optional.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// RequestState echoes, unchanged, the requestState of that
	// InputRequiredResult. Optional.
	RequestState string `json:"requestState,omitempty"`
}

// ReadResourceResult holds a resource's contents.
type ReadResourceResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result before fetching it again, from 2026-07-28 (0: stale at
	// once). Servers fill it in on that revision; nil on earlier ones.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy of the result, from
	// 2026-07-28: public (no user-specific data) or private (the same
	// authorization context only). Servers fill it in on that revision.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Contents holds the resource's contents; one resource may yield several
	// parts, such as the files of a directory. Required.
	Contents []*ResourceContents `json:"contents"`
}

// ResourceContents is one part of a resource's contents, as resources/read
// returns it and an [EmbeddedResource] carries it: text (Text) or binary
// data (Blob). It is encoded as the protocol's text contents when Blob is
// nil and as its blob contents otherwise; decoding requires one of the two.
type ResourceContents struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta
	// URI identifies the contents: the resource's URI, or that of the part
	// it holds. Required.
	URI string
	// MIMEType is the media type of the contents, if known. Optional.
	MIMEType string
	// Text is the contents of a text resource. It is sent as the text member
	// when Blob is nil.
	Text string
	// Blob is the contents of a binary resource. When it is non-nil it is
	// sent, base64-encoded, as the blob member, and Text is not sent.
	Blob []byte
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

// marshalJSONTo encodes r for the wire: blob when Blob is set and text
// otherwise.
func (r *ResourceContents) marshalJSONTo(enc *jsontext.Encoder) error {
	if r.Blob != nil {
		return jsonv2.MarshalEncode(enc, &blobResourceContents{r.Meta, r.URI, r.MIMEType, r.Blob})
	}
	return jsonv2.MarshalEncode(enc, &textResourceContents{r.Meta, r.URI, r.MIMEType, r.Text})
}

// unmarshalJSONFrom decodes text or blob contents from the wire.
func (r *ResourceContents) unmarshalJSONFrom(dec *jsontext.Decoder) error {
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

// SubscribeParams are the params of resources/subscribe, which asks to be
// told (notifications/resources/updated) when a resource changes.
type SubscribeParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI is the resource to be told about: notifications/resources/updated
	// names it when it changes. Required.
	URI string `json:"uri"`
}

// UnsubscribeParams are the params of resources/unsubscribe.
type UnsubscribeParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI is the resource to stop being told about. Required.
	URI string `json:"uri"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI is the resource that changed, which may be a part of the one
	// subscribed to. The client reads it again for the new contents.
	// Required.
	URI string `json:"uri"`
}

// ResourceListChangedParams are the params of notifications/resources/list_changed.
type ResourceListChangedParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// ToolListChangedParams are the params of notifications/tools/list_changed.
type ToolListChangedParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// PromptListChangedParams are the params of notifications/prompts/list_changed.
type PromptListChangedParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// RootsListChangedParams are the params of notifications/roots/list_changed.
type RootsListChangedParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// Prompt describes a prompt template the server offers; prompts/get
// renders it, with arguments, into messages. prompts/list returns it.
type Prompt struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// Name identifies the prompt in prompts/get; clients show it when Title
	// is empty. Required.
	Name string `json:"name"`
	// Title is a name for people to read. Optional; from 2025-06-18.
	Title string `json:"title,omitzero"`
	// Description says what the prompt is for. Optional.
	Description string `json:"description,omitzero"`
	// Arguments lists the arguments the prompt takes. Optional.
	Arguments []*PromptArgument `json:"arguments,omitzero"`
	// Icons are images a client may show for the prompt. Optional; from
	// 2025-11-25.
	Icons []Icon `json:"icons,omitzero"`
}

// PromptArgument describes an argument a prompt accepts.
type PromptArgument struct {
	// Name is the argument's key in GetPromptParams.Arguments. Required.
	Name string `json:"name"`
	// Title is a name for people to read. Optional; from 2025-06-18.
	Title string `json:"title,omitzero"`
	// Description says what the argument means. Optional.
	Description string `json:"description,omitzero"`
	// Required reports that prompts/get must be given the argument.
	// Optional; absent means false.
	Required bool `json:"required,omitzero"`
}

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the NextCursor of the previous page, to get the page after
	// it; cursors are opaque. Optional; empty asks for the first page.
	Cursor string `json:"cursor,omitzero"`
}

// ListPromptsResult is one page of prompts.
type ListPromptsResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result before fetching it again, from 2026-07-28 (0: stale at
	// once). Servers fill it in on that revision; nil on earlier ones.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy of the result, from
	// 2026-07-28: public (no user-specific data) or private (the same
	// authorization context only). Servers fill it in on that revision.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Prompts holds this page's prompts. Required; may be empty.
	Prompts []*Prompt `json:"prompts"`
	// NextCursor, when not empty, is the cursor that gets the next page;
	// empty means this is the last page. Optional.
	NextCursor string `json:"nextCursor,omitzero"`
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Name is the prompt to render. Required.
	Name string `json:"name"`
	// Arguments maps argument names to their values, all strings. Optional.
	Arguments map[string]string `json:"arguments,omitzero"`
	// InputResponses answers, by key, the input requests of the
	// InputRequiredResult a 2026-07-28 server answered an earlier try of
	// this request with (see [InputRequiredResult]); each value is the
	// client's result for that request (an ElicitResult, a
	// CreateMessageResult or a ListRootsResult). Servers read it through
	// the session's Elicit, CreateMessage and ListRoots. Optional.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// RequestState echoes, unchanged, the requestState of that
	// InputRequiredResult. Optional.
	RequestState string `json:"requestState,omitempty"`
}

// GetPromptResult is a rendered prompt.
type GetPromptResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// Description describes the rendered prompt. Optional.
	Description string `json:"description,omitzero"`
	// Messages are the rendered prompt's messages, in order. Required.
	Messages []*PromptMessage `json:"messages"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	// Role says whose message it is: RoleUser or RoleAssistant. Required.
	Role Role `json:"role"`
	// Content is the message's single content block: text, image, audio
	// (from 2025-03-26), a resource link (from 2025-06-18) or an embedded
	// resource. Required.
	Content Content `json:"content"`
}

type promptMessageWire struct {
	Role    Role           `json:"role"`
	Content jsontext.Value `json:"content"`
}

// marshalJSONTo encodes m for the wire.
func (m *PromptMessage) marshalJSONTo(enc *jsontext.Encoder) error {
	c, err := marshalContent(m.Content)
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, &promptMessageWire{Role: m.Role, Content: c})
}

// unmarshalJSONFrom decodes m from the wire.
func (m *PromptMessage) unmarshalJSONFrom(dec *jsontext.Decoder) error {
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
	// Type is "ref/prompt" for a prompt argument or "ref/resource" for a
	// resource template variable. Required.
	Type ReferenceType `json:"type"`
	// Name is the prompt's name; required for "ref/prompt".
	Name string `json:"name,omitzero"`
	// Title is the prompt's name for people to read, for "ref/prompt".
	// Optional; from 2025-06-18.
	Title string `json:"title,omitzero"`
	// URI is the resource template's URI template (or a resource URI);
	// required for "ref/resource".
	URI string `json:"uri,omitzero"`
}

// CompleteArgument is the argument being completed.
type CompleteArgument struct {
	// Name is the prompt argument or template variable being completed.
	// Required.
	Name string `json:"name"`
	// Value is what has been typed so far, to be completed. Required; may be
	// empty.
	Value string `json:"value"`
}

// CompleteContext carries the values already chosen for other arguments
// (from 2025-06-18).
type CompleteContext struct {
	// Arguments maps the names of other arguments or variables to the values
	// already chosen for them, so that suggestions can depend on them.
	// Optional.
	Arguments map[string]string `json:"arguments,omitzero"`
}

// CompleteParams are the params of completion/complete, which asks the
// server for suggestions for a prompt argument or a resource template
// variable as the user types it.
type CompleteParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Ref says what is being completed: a prompt or a resource template.
	// Required.
	Ref *CompleteReference `json:"ref"`
	// Argument is the argument being completed and its value so far.
	// Required.
	Argument CompleteArgument `json:"argument"`
	// Context carries values already chosen for other arguments. Optional;
	// from 2025-06-18.
	Context *CompleteContext `json:"context,omitzero"`
}

// Completion holds the suggestions for the value being completed.
type Completion struct {
	// Values are the suggestions, at most 100 of them. Required; may be
	// empty.
	Values []string `json:"values"`
	// Total is how many suggestions there are in all, which may be more than
	// len(Values). Optional; zero means unknown.
	Total int `json:"total,omitzero"`
	// HasMore reports that there are more suggestions than Values holds,
	// whether or not Total is known. Optional.
	HasMore bool `json:"hasMore,omitzero"`
}

// CompleteResult is the answer to completion/complete.
type CompleteResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// Completion holds the suggestions. Required.
	Completion Completion `json:"completion"`
}

// LoggingLevel is the severity of a log message: one of the eight levels
// of syslog (RFC 5424), from LoggingLevelDebug to LoggingLevelEmergency.
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

// SetLevelParams are the params of logging/setLevel, by which a client
// chooses the least severe log messages the server sends it.
type SetLevelParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Level is the least severe level the client wants: the server sends log
	// messages at this level and above. Required.
	Level LoggingLevel `json:"level"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Level is the message's severity. Required.
	Level LoggingLevel `json:"level"`
	// Logger names the part of the server that logged the message. Optional.
	Logger string `json:"logger,omitzero"`
	// Data is the message: any JSON value, such as a string or an object of
	// details. Required.
	Data any `json:"data"`
}

// ModelHint suggests a model by its name or part of it.
type ModelHint struct {
	// Name is a model name or part of one, such as "sonnet" or "gpt-4o"; the
	// client may pick the closest match, or an equivalent model from another
	// provider. Optional.
	Name string `json:"name,omitzero"`
}

// ModelPreferences are the server's wishes for the model a client uses to
// sample. Server and client may know different providers' models, so the
// wishes are hints and priorities rather than a model name; the client
// decides.
type ModelPreferences struct {
	// Hints name models to prefer, in order: the first that matches wins. A
	// client should weigh them above the priorities, which it may still use
	// among several matches. Optional.
	Hints []ModelHint `json:"hints,omitzero"`
	// CostPriority is how much a low cost matters, from 0 (not at all) to 1
	// (above all). Optional; nil means no preference.
	CostPriority *float64 `json:"costPriority,omitzero"`
	// SpeedPriority is how much low latency matters, from 0 (not at all) to
	// 1 (above all). Optional; nil means no preference.
	SpeedPriority *float64 `json:"speedPriority,omitzero"`
	// IntelligencePriority is how much the model's capability matters, from
	// 0 (not at all) to 1 (above all). Optional; nil means no preference.
	IntelligencePriority *float64 `json:"intelligencePriority,omitzero"`
}

// ToolChoice controls how the model uses tools while sampling (from
// 2025-11-25).
type ToolChoice struct {
	// Mode is "auto" (the model decides whether to call tools), "required"
	// (it must call at least one before it finishes) or "none" (it must call
	// none). Optional; empty means "auto".
	Mode string `json:"mode,omitzero"`
}

// SamplingMessage is a message in a sampling conversation. Content holds
// one block, or (from 2025-11-25) several; one block is sent as an object,
// as every revision allows.
type SamplingMessage struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-11-25.
	Meta Meta `json:"_meta,omitzero"`
	// Role says whose message it is: RoleUser or RoleAssistant. Required.
	Role Role `json:"role"`
	// Content holds the message's blocks: text, image or audio, and from
	// 2025-11-25 tool_use (assistant) and tool_result (user) blocks.
	// Required.
	Content Contents `json:"content"`
}

type samplingMessageWire struct {
	Meta    Meta           `json:"_meta,omitzero"`
	Role    Role           `json:"role"`
	Content jsontext.Value `json:"content"`
}

// marshalJSONTo encodes m for the wire.
func (m *SamplingMessage) marshalJSONTo(enc *jsontext.Encoder) error {
	c, err := marshalOneOrMany(m.Content)
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, &samplingMessageWire{Meta: m.Meta, Role: m.Role, Content: c})
}

// unmarshalJSONFrom decodes m from the wire; it accepts a single block or
// an array.
func (m *SamplingMessage) unmarshalJSONFrom(dec *jsontext.Decoder) error {
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

// IncludeContext is the value of CreateMessageParams.IncludeContext:
// "none", "thisServer" or "allServers".
type IncludeContext string

// CreateMessageParams are the params of sampling/createMessage, by which a
// server asks the client to sample its language model; the client keeps
// control of the model, the prompt and the user's consent.
type CreateMessageParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Task asks the client to run the request as a task (2025-11-25,
	// when the client declared it in its tasks capability; see
	// [TaskMetadata]). Optional.
	Task *TaskMetadata `json:"task,omitzero"`
	// Messages is the conversation for the model to continue. Required.
	Messages []*SamplingMessage `json:"messages"`
	// ModelPreferences guide the client's choice of model; the client may
	// ignore them. Optional.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitzero"`
	// SystemPrompt is the system prompt the server would like used; the
	// client may change or drop it. Optional.
	SystemPrompt string `json:"systemPrompt,omitzero"`
	// IncludeContext asks the client to add context from MCP servers to the
	// prompt: "none", "thisServer" (the requesting server) or "allServers".
	// The client may ignore it. Optional; empty means "none". From
	// 2025-11-25 the values other than "none" are discouraged, and meant
	// only for clients that declare SamplingCapabilities.Context.
	IncludeContext IncludeContext `json:"includeContext,omitzero"`
	// Temperature is the sampling temperature. Optional; nil leaves it to
	// the client.
	Temperature *float64 `json:"temperature,omitzero"`
	// MaxTokens is the most tokens the client should generate; it may
	// generate fewer. Required.
	MaxTokens int64 `json:"maxTokens"`
	// StopSequences are strings that end generation when the model produces
	// one. Optional.
	StopSequences []string `json:"stopSequences,omitzero"`
	// Metadata is handed to the model's provider as it is; its meaning is
	// the provider's. Optional.
	Metadata map[string]any `json:"metadata,omitzero"`
	// Tools are tools the model may call while generating; calls come back
	// as tool_use blocks. Optional; from 2025-11-25, and only for a client
	// that declares SamplingCapabilities.Tools.
	Tools []*Tool `json:"tools,omitzero"`
	// ToolChoice says whether the model may, must or must not call Tools.
	// Optional; nil means mode "auto". From 2025-11-25, and only for a
	// client that declares SamplingCapabilities.Tools.
	ToolChoice *ToolChoice `json:"toolChoice,omitzero"`
}

// CreateMessageResult is the client's sampled message. Like
// SamplingMessage, Content holds one block or (2025-11-25) several.
type CreateMessageResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// Role is the role of the generated message, normally RoleAssistant.
	// Required.
	Role Role `json:"role"`
	// Content holds the generated message's blocks. Required.
	Content Contents `json:"content"`
	// Model is the name of the model that generated the message. Required.
	Model string `json:"model"`
	// StopReason says why generation stopped, if known: "endTurn",
	// "stopSequence", "maxTokens", "toolUse" (from 2025-11-25), or a value
	// of the provider's own. Optional.
	StopReason string `json:"stopReason,omitzero"`
}

type createMessageResultWire struct {
	Meta       Meta           `json:"_meta,omitzero"`
	ResultType ResultType     `json:"resultType,omitempty"`
	Role       Role           `json:"role"`
	Content    jsontext.Value `json:"content"`
	Model      string         `json:"model"`
	StopReason string         `json:"stopReason,omitzero"`
}

// marshalJSONTo encodes r for the wire.
func (r *CreateMessageResult) marshalJSONTo(enc *jsontext.Encoder) error {
	c, err := marshalOneOrMany(r.Content)
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, &createMessageResultWire{r.Meta, r.ResultType, r.Role, c, r.Model, r.StopReason})
}

// unmarshalJSONFrom decodes r from the wire.
func (r *CreateMessageResult) unmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w createMessageResultWire
	if err := jsonv2.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	c, err := unmarshalOneOrMany(w.Content)
	if err != nil {
		return err
	}
	*r = CreateMessageResult{Meta: w.Meta, ResultType: w.ResultType, Role: w.Role, Content: c, Model: w.Model, StopReason: w.StopReason}
	return nil
}

// Root is a directory or file the client exposes to servers, telling
// them where they may work. roots/list returns the client's roots.
type Root struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// URI identifies the root; for now it must be a file:// URI. Required.
	URI string `json:"uri"`
	// Name is a name for people to read. Optional.
	Name string `json:"name,omitzero"`
}

// ListRootsParams are the params of roots/list.
type ListRootsParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
}

// ListRootsResult lists the client's roots.
type ListRootsResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// Roots holds the client's roots. Required; may be empty.
	Roots []*Root `json:"roots"`
}

// Elicitation modes.
const (
	ElicitModeForm ElicitMode = "form"
	ElicitModeURL  ElicitMode = "url"
)

// ElicitParams are the params of elicitation/create (from 2025-06-18),
// which asks the user for information through the client: form mode
// (RequestedSchema) or URL mode (URL and ElicitationID, from 2025-11-25).
type ElicitParams struct {
	// Meta is the request's _meta member: extension data (see [Meta]), and
	// the progress token when the sender wants progress notifications (see
	// [SetProgressToken]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Task asks the client to run the request as a task (2025-11-25,
	// when the client declared it in its tasks capability; see
	// [TaskMetadata]). Optional.
	Task *TaskMetadata `json:"task,omitzero"`
	// Mode is ElicitModeForm or ElicitModeURL. Optional; empty means form
	// mode, the only mode before 2025-11-25.
	Mode ElicitMode `json:"mode,omitzero"`
	// Message tells the user what is asked and why. Required.
	Message string `json:"message"`
	// RequestedSchema is the JSON Schema of the form to fill in: an object
	// schema whose properties are all of primitive types (string, number,
	// integer, boolean, or an enum; multi-select enums from 2025-11-25).
	// Required in form mode; not sent in URL mode.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitzero"`
	// URL is the page the user should open to do what Message asks, such as
	// signing in. Required in URL mode (from 2025-11-25); not sent in form
	// mode.
	URL string `json:"url,omitzero"`
	// ElicitationID identifies a URL-mode elicitation, so that
	// notifications/elicitation/complete can name it. Required in URL mode
	// (from 2025-11-25); not sent in form mode.
	ElicitationID string `json:"elicitationId,omitzero"`
}

// ElicitAction is the user's response to an elicitation.
type ElicitAction string

// Elicitation actions.
const (
	ElicitActionAccept  ElicitAction = "accept"
	ElicitActionDecline ElicitAction = "decline"
	ElicitActionCancel  ElicitAction = "cancel"
)

// ElicitResult is the client's answer to elicitation/create (from
// 2025-06-18).
type ElicitResult struct {
	// Meta is the result's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28, where it
	// is required: [ResultTypeComplete] for a final result. A result
	// without it (from an earlier revision) is complete. Servers set it;
	// handlers need not.
	ResultType ResultType `json:"resultType,omitempty"`
	// Action is what the user did: ElicitActionAccept (submitted or agreed),
	// ElicitActionDecline (refused) or ElicitActionCancel (dismissed without
	// choosing). Required.
	Action ElicitAction `json:"action"`
	// Content is the submitted form, present only when Action is accept in
	// form mode. Its values are strings, numbers, booleans or (from
	// 2025-11-25) lists of strings, matching RequestedSchema. Optional.
	Content map[string]any `json:"content,omitzero"`
}

// ElicitationCompleteParams are the params of
// notifications/elicitation/complete (from 2025-11-25), which tells the
// client that a URL-mode elicitation has finished.
type ElicitationCompleteParams struct {
	// Meta is the notification's _meta member: extension data (see [Meta]).
	// Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ElicitationID is the ElicitParams.ElicitationID of the URL-mode
	// elicitation that has finished. Required.
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

// ResultType says how to read a result (2026-07-28).
type ResultType string

// Result types.
const (
	// ResultTypeComplete marks a final result.
	ResultTypeComplete ResultType = "complete"
	// ResultTypeInputRequired marks a result that asks the client for
	// input (elicitation, sampling, roots) before the request can
	// complete; the client retries the request with the answers.
	ResultTypeInputRequired ResultType = "input_required"
)

// CacheScope says who may share a cached result (2026-07-28), as HTTP's
// Cache-Control public and private do.
type CacheScope string

// Cache scopes.
const (
	// CacheScopePublic: the result holds no user-specific data; any
	// client or intermediary may cache it and serve it to anyone.
	CacheScopePublic CacheScope = "public"
	// CacheScopePrivate: the result may be cached and reused only within
	// the same authorization context.
	CacheScopePrivate CacheScope = "private"
)

// DiscoverParams are the params of server/discover (2026-07-28).
type DiscoverParams struct {
	// Meta is the request's _meta member: on this revision it carries the
	// protocol version and the client's capabilities (see [Meta]).
	Meta Meta `json:"_meta,omitzero"`
}

// DiscoverResult is a server's answer to server/discover: the revisions
// it serves and what it offers. It is the only place a 2026-07-28 client
// learns the server's capabilities.
type DiscoverResult struct {
	// Meta is the result's _meta member; it names the server (see
	// [Meta.ServerInfo]).
	Meta Meta `json:"_meta,omitzero"`
	// ResultType is [ResultTypeComplete]. Required.
	ResultType ResultType `json:"resultType,omitempty"`
	// SupportedVersions lists the revisions the server serves without a
	// handshake; the client picks one for its requests. Required.
	SupportedVersions []string `json:"supportedVersions"`
	// Capabilities are the optional features the server supports.
	// Required; an empty value declares none.
	Capabilities *ServerCapabilities `json:"capabilities"`
	// Instructions is natural-language guidance on using the server, which
	// a client may put in a model's system prompt. Optional.
	Instructions string `json:"instructions,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result. Required on the wire; servers fill it in.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy. Required on the wire;
	// servers fill it in.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
}

func (p *DiscoverParams) meta() *Meta       { return &p.Meta }
func (r *DiscoverResult) resultMeta() *Meta { return &r.Meta }

// Error codes of 2026-07-28.
const (
	// CodeHeaderMismatch: an HTTP header disagrees with the request body,
	// or a required header is missing or malformed (HTTP 400).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: serving the request needs a
	// client capability the request did not declare; the error's data is
	// a [MissingRequiredClientCapabilityData] (HTTP 400).
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the server does not serve the
	// revision the request names; the error's data is an
	// [UnsupportedProtocolVersionData] (HTTP 400).
	CodeUnsupportedProtocolVersion = -32022
)

// UnsupportedProtocolVersionData is the data of a
// [CodeUnsupportedProtocolVersion] error.
type UnsupportedProtocolVersionData struct {
	// Supported lists the revisions the server serves; the client should
	// retry with one it supports too. Required.
	Supported []string `json:"supported"`
	// Requested is the revision the request named. Required.
	Requested string `json:"requested"`
}

// MissingRequiredClientCapabilityData is the data of a
// [CodeMissingRequiredClientCapability] error.
type MissingRequiredClientCapabilityData struct {
	// RequiredCapabilities are the client capabilities serving the
	// request needs. Required.
	RequiredCapabilities *ClientCapabilities `json:"requiredCapabilities"`
}

// resultType and cacheHints give the fields a result of 2026-07-28
// carries beyond the handshake era's (see Server.completeModern).
func (r *InitializeResult) resultType() *ResultType               { return &r.ResultType }
func (r *EmptyResult) resultType() *ResultType                    { return &r.ResultType }
func (r *ListToolsResult) resultType() *ResultType                { return &r.ResultType }
func (r *CallToolResult) resultType() *ResultType                 { return &r.ResultType }
func (r *ListResourcesResult) resultType() *ResultType            { return &r.ResultType }
func (r *ListResourceTemplatesResult) resultType() *ResultType    { return &r.ResultType }
func (r *ReadResourceResult) resultType() *ResultType             { return &r.ResultType }
func (r *ListPromptsResult) resultType() *ResultType              { return &r.ResultType }
func (r *GetPromptResult) resultType() *ResultType                { return &r.ResultType }
func (r *CompleteResult) resultType() *ResultType                 { return &r.ResultType }
func (r *CreateMessageResult) resultType() *ResultType            { return &r.ResultType }
func (r *ListRootsResult) resultType() *ResultType                { return &r.ResultType }
func (r *ElicitResult) resultType() *ResultType                   { return &r.ResultType }
func (r *DiscoverResult) resultType() *ResultType                 { return &r.ResultType }
func (r *InitializeResult) cacheHints() (**int64, *CacheScope)    { return nil, nil }
func (r *EmptyResult) cacheHints() (**int64, *CacheScope)         { return nil, nil }
func (r *ListToolsResult) cacheHints() (**int64, *CacheScope)     { return &r.TTLMs, &r.CacheScope }
func (r *CallToolResult) cacheHints() (**int64, *CacheScope)      { return nil, nil }
func (r *ListResourcesResult) cacheHints() (**int64, *CacheScope) { return &r.TTLMs, &r.CacheScope }
func (r *ListResourceTemplatesResult) cacheHints() (**int64, *CacheScope) {
	return &r.TTLMs, &r.CacheScope
}
func (r *ReadResourceResult) cacheHints() (**int64, *CacheScope)  { return &r.TTLMs, &r.CacheScope }
func (r *ListPromptsResult) cacheHints() (**int64, *CacheScope)   { return &r.TTLMs, &r.CacheScope }
func (r *GetPromptResult) cacheHints() (**int64, *CacheScope)     { return nil, nil }
func (r *CompleteResult) cacheHints() (**int64, *CacheScope)      { return nil, nil }
func (r *CreateMessageResult) cacheHints() (**int64, *CacheScope) { return nil, nil }
func (r *ListRootsResult) cacheHints() (**int64, *CacheScope)     { return nil, nil }
func (r *ElicitResult) cacheHints() (**int64, *CacheScope)        { return nil, nil }
func (r *DiscoverResult) cacheHints() (**int64, *CacheScope)      { return &r.TTLMs, &r.CacheScope }

// SubscriptionFilter chooses the change notifications a
// subscriptions/listen stream carries (2026-07-28); a server sends no
// other kind on it.
type SubscriptionFilter struct {
	// ToolsListChanged asks for notifications/tools/list_changed.
	ToolsListChanged bool `json:"toolsListChanged,omitzero"`
	// PromptsListChanged asks for notifications/prompts/list_changed.
	PromptsListChanged bool `json:"promptsListChanged,omitzero"`
	// ResourcesListChanged asks for
	// notifications/resources/list_changed.
	ResourcesListChanged bool `json:"resourcesListChanged,omitzero"`
	// ResourceSubscriptions asks for notifications/resources/updated about
	// these resource URIs (what resources/subscribe did before).
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
	// TaskIDs asks for notifications/tasks about these tasks (the tasks
	// extension, [TasksExtensionID]); a request that sets it declares the
	// extension.
	TaskIDs []string `json:"taskIds,omitzero"`
}

// SubscriptionsListenParams are the params of subscriptions/listen
// (2026-07-28).
type SubscriptionsListenParams struct {
	// Meta is the request's _meta member (see [Meta]).
	Meta Meta `json:"_meta,omitzero"`
	// Notifications are the kinds of notification the client wants.
	// Required.
	Notifications *SubscriptionFilter `json:"notifications"`
}

// SubscriptionsListenResult ends a subscriptions/listen stream the server
// closes gracefully (at shutdown, say); its _meta names the subscription
// (see [Meta.SubscriptionID]).
type SubscriptionsListenResult struct {
	// Meta is the result's _meta member; it carries the subscription ID.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType is [ResultTypeComplete].
	ResultType ResultType `json:"resultType,omitempty"`
}

// SubscriptionsAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged, the first message of a
// subscriptions/listen stream.
type SubscriptionsAcknowledgedParams struct {
	// Meta is the notification's _meta member; it carries the
	// subscription ID.
	Meta Meta `json:"_meta,omitzero"`
	// Notifications are the kinds of notification requested that the
	// server will send: those it does not support are left out. Required.
	Notifications *SubscriptionFilter `json:"notifications"`
}

func (p *SubscriptionsListenParams) meta() *Meta       { return &p.Meta }
func (p *SubscriptionsAcknowledgedParams) meta() *Meta { return &p.Meta }
func (r *SubscriptionsListenResult) resultMeta() *Meta { return &r.Meta }
func (r *SubscriptionsListenResult) resultType() *ResultType {
	return &r.ResultType
}
func (r *SubscriptionsListenResult) cacheHints() (**int64, *CacheScope) { return nil, nil }

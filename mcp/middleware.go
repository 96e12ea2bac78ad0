package mcp

import (
	"context"
)

// Request is a request or notification as middleware sees it, in either
// direction. Incoming requests are the typed [*ServerRequest] and
// [*ClientRequest] values that handlers receive; outgoing ones, which
// sending middleware sees (see [ServerOptions.SendingMiddleware] and
// [ClientOptions.SendingMiddleware]), carry only the method and params.
// Use a type switch on [Request.Parameters] to reach a particular method's
// params.
type Request interface {
	// Method returns the JSON-RPC method name.
	Method() string
	// Parameters returns the decoded params; never nil.
	Parameters() Params
	isRequest()
}

// MethodHandler handles one request or notification. For a notification
// the Result is ignored and may be nil.
type MethodHandler func(ctx context.Context, req Request) (Result, error)

// Middleware wraps a MethodHandler. Middleware is installed per direction
// (see [ServerOptions] and [ClientOptions]) and sees every method,
// including initialize, ping and notifications.
//
// A middleware for logging a method's duration:
//
//	func timing(next mcp.MethodHandler) mcp.MethodHandler {
//		return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
//			start := time.Now()
//			res, err := next(ctx, req)
//			slog.Info("mcp", "method", req.Method(), "took", time.Since(start), "err", err)
//			return res, err
//		}
//	}
type Middleware func(next MethodHandler) MethodHandler

// chain applies middleware so that the first one is outermost.
func chain(h MethodHandler, mw []Middleware) MethodHandler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// outgoingRequest is a request or notification this side is sending, as
// sending middleware sees it.
type outgoingRequest struct {
	method string
	params Params
}

// Method returns the method name.
func (r *outgoingRequest) Method() string { return r.method }

// Parameters returns the params being sent.
func (r *outgoingRequest) Parameters() Params { return r.params }

func (*outgoingRequest) isRequest() {}

// ServerRequest is a request or notification received by a server:
// the session it arrived on and its typed params.
type ServerRequest[P Params] struct {
	// Session is the session the request arrived on.
	Session *ServerSession
	// Params holds the decoded params; never nil.
	Params P
	// Extra carries transport data, or is nil.
	Extra *RequestExtra
	// TemplateVars holds, for the handler of a resource template that
	// serves a resources/read, the values of the template's variables
	// in the URI read, percent-decoded as RFC 6570 expansion implies (the
	// URI greeting://Ada%20Lovelace gives the template greeting://{name}
	// the name "Ada Lovelace"); a list or key-value variable's values are
	// joined with commas. The server sets it when it has matched the URI,
	// after the receiving middleware ran. Nil for every other request.
	TemplateVars map[string]string

	method string
}

// Method returns the method name.
func (r *ServerRequest[P]) Method() string { return r.method }

// Parameters returns r.Params.
func (r *ServerRequest[P]) Parameters() Params { return r.Params }

func (*ServerRequest[P]) isRequest() {}

// ClientRequest is a request or notification received by a client.
type ClientRequest[P Params] struct {
	// Session is the session the request arrived on.
	Session *ClientSession
	// Params holds the decoded params; never nil.
	Params P

	method string
}

// Method returns the method name.
func (r *ClientRequest[P]) Method() string { return r.method }

// Parameters returns r.Params.
func (r *ClientRequest[P]) Parameters() Params { return r.Params }

func (*ClientRequest[P]) isRequest() {}

// Request types handed to server handlers.
type (
	// InitializeRequest is an initialize request.
	InitializeRequest = ServerRequest[*InitializeParams]
	// CallToolRequest is a tools/call request.
	CallToolRequest = ServerRequest[*CallToolParams]
	// ReadResourceRequest is a resources/read request.
	ReadResourceRequest = ServerRequest[*ReadResourceParams]
	// GetPromptRequest is a prompts/get request.
	GetPromptRequest = ServerRequest[*GetPromptParams]
	// CompleteRequest is a completion/complete request.
	CompleteRequest = ServerRequest[*CompleteParams]
	// SubscribeRequest is a resources/subscribe request.
	SubscribeRequest = ServerRequest[*SubscribeParams]
	// UnsubscribeRequest is a resources/unsubscribe request.
	UnsubscribeRequest = ServerRequest[*UnsubscribeParams]
)

// Request types handed to client handlers.
type (
	// CreateMessageRequest is a sampling/createMessage request.
	CreateMessageRequest = ClientRequest[*CreateMessageParams]
	// ElicitRequest is an elicitation/create request.
	ElicitRequest = ClientRequest[*ElicitParams]
	// ListRootsRequest is a roots/list request.
	ListRootsRequest = ClientRequest[*ListRootsParams]
)

// Notification types handed to the client's notification handlers
// ([ClientOptions.LoggingMessageHandler] and the others).
type (
	// LoggingMessageNotification is a notifications/message.
	LoggingMessageNotification = ClientRequest[*LoggingMessageParams]
	// ProgressNotification is a notifications/progress.
	ProgressNotification = ClientRequest[*ProgressParams]
	// ToolListChangedNotification is a notifications/tools/list_changed.
	ToolListChangedNotification = ClientRequest[*ToolListChangedParams]
	// PromptListChangedNotification is a
	// notifications/prompts/list_changed.
	PromptListChangedNotification = ClientRequest[*PromptListChangedParams]
	// ResourceListChangedNotification is a
	// notifications/resources/list_changed.
	ResourceListChangedNotification = ClientRequest[*ResourceListChangedParams]
	// ResourceUpdatedNotification is a notifications/resources/updated.
	ResourceUpdatedNotification = ClientRequest[*ResourceUpdatedParams]
	// ElicitationCompleteNotification is a
	// notifications/elicitation/complete.
	ElicitationCompleteNotification = ClientRequest[*ElicitationCompleteParams]
)

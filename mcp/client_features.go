package mcp

import (
	"context"
	"fmt"
	"iter"
)

// Ping checks that the server is responsive.
//
// In 2026-07-28, which removed ping, it asks server/discover instead,
// bypassing the result cache: an answer means the server is there.
//
// A server's error answer is a *jsonrpc.Error through errors.As (see
// [ClientSession] for every case).
func (cs *ClientSession) Ping(ctx context.Context) error {
	if cs.modern != nil {
		return cs.request(WithoutCache(ctx), MethodServerDiscover, &DiscoverParams{}, &DiscoverResult{})
	}
	return cs.request(ctx, MethodPing, &PingParams{}, &EmptyResult{})
}

// ListTools returns one page of the server's tools. params may be nil.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) ListTools(ctx context.Context, params *ListToolsParams) (*ListToolsResult, error) {
	if err := cs.checkServer(MethodToolsList, "tools", cs.serverCaps().Tools != nil); err != nil {
		return nil, err
	}
	if params == nil {
		params = &ListToolsParams{}
	}
	res := &ListToolsResult{}
	if err := cs.request(ctx, MethodToolsList, params, res); err != nil {
		return nil, err
	}
	cs.noteToolTasks(res)
	return res, nil
}

// CallTool calls a tool. A tool's own failure is a result with IsError
// set, not an error; errors are protocol or transport failures.
//
// With ClientOptions.Tasks set, a server may run the call as a task
// (see [ClientSession.StartTool]): CallTool then waits for the task's end
// as [ToolTask.Wait] does and returns its result, and cancels the task
// (tasks/cancel) when ctx ends first. In 2025-11-25 it asks for a task
// only for a tool whose task support is required.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) CallTool(ctx context.Context, params *CallToolParams) (*CallToolResult, error) {
	return cs.callToolTask(ctx, params)
}

// ListResources returns one page of the server's resources.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) ListResources(ctx context.Context, params *ListResourcesParams) (*ListResourcesResult, error) {
	if err := cs.checkServer(MethodResourcesList, "resources", cs.serverCaps().Resources != nil); err != nil {
		return nil, err
	}
	if params == nil {
		params = &ListResourcesParams{}
	}
	res := &ListResourcesResult{}
	if err := cs.request(ctx, MethodResourcesList, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ListResourceTemplates returns one page of the server's resource templates.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) ListResourceTemplates(ctx context.Context, params *ListResourceTemplatesParams) (*ListResourceTemplatesResult, error) {
	if err := cs.checkServer(MethodResourcesTemplatesList, "resources", cs.serverCaps().Resources != nil); err != nil {
		return nil, err
	}
	if params == nil {
		params = &ListResourceTemplatesParams{}
	}
	res := &ListResourceTemplatesResult{}
	if err := cs.request(ctx, MethodResourcesTemplatesList, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ReadResource reads a resource. For an unknown URI it returns a
// [*ResourceNotFoundError], whether the server answered -32002 (the
// handshake era) or -32602 naming the URI (2026-07-28).
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) ReadResource(ctx context.Context, params *ReadResourceParams) (*ReadResourceResult, error) {
	if err := cs.checkServer(MethodResourcesRead, "resources", cs.serverCaps().Resources != nil); err != nil {
		return nil, err
	}
	res := &ReadResourceResult{}
	if err := cs.request(ctx, MethodResourcesRead, params, res); err != nil {
		return nil, resourceNotFound(err, params.URI)
	}
	return res, nil
}

// Subscribe asks to be told when a resource changes
// (ClientOptions.ResourceUpdatedHandler receives the notifications).
//
// A server's error answer is a *jsonrpc.Error through errors.As (see
// [ClientSession] for every case).
func (cs *ClientSession) Subscribe(ctx context.Context, params *SubscribeParams) error {
	c := cs.serverCaps()
	if err := cs.checkServer(MethodResourcesSubscribe, "resources.subscribe", c.Resources != nil && c.Resources.Subscribe); err != nil {
		return err
	}
	if cs.modern != nil {
		return removedMethod(MethodResourcesSubscribe, cs.modern.version, "ClientSession.Listen")
	}
	return cs.request(ctx, MethodResourcesSubscribe, params, &EmptyResult{})
}

// Unsubscribe cancels a subscription.
//
// A server's error answer is a *jsonrpc.Error through errors.As (see
// [ClientSession] for every case).
func (cs *ClientSession) Unsubscribe(ctx context.Context, params *UnsubscribeParams) error {
	c := cs.serverCaps()
	if err := cs.checkServer(MethodResourcesUnsubscribe, "resources.subscribe", c.Resources != nil && c.Resources.Subscribe); err != nil {
		return err
	}
	if cs.modern != nil {
		return removedMethod(MethodResourcesUnsubscribe, cs.modern.version, "Subscription.Close")
	}
	return cs.request(ctx, MethodResourcesUnsubscribe, params, &EmptyResult{})
}

// ListPrompts returns one page of the server's prompts.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) ListPrompts(ctx context.Context, params *ListPromptsParams) (*ListPromptsResult, error) {
	if err := cs.checkServer(MethodPromptsList, "prompts", cs.serverCaps().Prompts != nil); err != nil {
		return nil, err
	}
	if params == nil {
		params = &ListPromptsParams{}
	}
	res := &ListPromptsResult{}
	if err := cs.request(ctx, MethodPromptsList, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// GetPrompt renders a prompt.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) GetPrompt(ctx context.Context, params *GetPromptParams) (*GetPromptResult, error) {
	if err := cs.checkServer(MethodPromptsGet, "prompts", cs.serverCaps().Prompts != nil); err != nil {
		return nil, err
	}
	res := &GetPromptResult{}
	if err := cs.request(ctx, MethodPromptsGet, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// Complete asks for completions of a prompt argument or template variable.
//
// On error the result is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) Complete(ctx context.Context, params *CompleteParams) (*CompleteResult, error) {
	if err := cs.checkServer(MethodCompletionComplete, "completions", cs.serverCaps().Completions != nil); err != nil {
		return nil, err
	}
	res := &CompleteResult{}
	if err := cs.request(ctx, MethodCompletionComplete, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// SetLoggingLevel asks the server to send log messages at level and above.
// Before it is called, a client with a ClientOptions.LoggingMessageHandler
// gets every message in both eras (see there).
//
// In 2026-07-28, which replaced logging/setLevel with a level per
// request, nothing is sent: every later request of the session carries
// level in its _meta (a request's own Meta.LogLevel wins; the default is
// debug with a LoggingMessageHandler, none without), and the server sends
// log messages only while it serves such a request.
//
// A server's error answer is a *jsonrpc.Error through errors.As (see
// [ClientSession] for every case).
func (cs *ClientSession) SetLoggingLevel(ctx context.Context, level LoggingLevel) error {
	if err := cs.checkServer(MethodLoggingSetLevel, "logging", cs.serverCaps().Logging != nil); err != nil {
		return err
	}
	if cs.modern != nil {
		cs.modern.logLevel.Store(&level)
		return nil
	}
	return cs.request(ctx, MethodLoggingSetLevel, &SetLevelParams{Level: level}, &EmptyResult{})
}

// removedMethod is the error of a method the session's revision removed,
// naming its successor.
func removedMethod(method, version, successor string) error {
	return fmt.Errorf("%w: %s is not part of %s; use %s", ErrRemovedMethod, method, version, successor)
}

// pages walks every page of a list method, yielding each item.
func pages[T any](ctx context.Context, list func(ctx context.Context, cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		seen := map[string]bool{}
		for {
			items, next, err := list(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" || seen[next] {
				return // last page, or a server repeating a cursor
			}
			seen[next] = true
			cursor = next
		}
	}
}

// Tools iterates over every tool the server offers, fetching pages as
// needed. The iteration stops at the first error, which it yields.
func (cs *ClientSession) Tools(ctx context.Context) iter.Seq2[*Tool, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*Tool, string, error) {
		res, err := cs.ListTools(ctx, &ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	})
}

// Resources iterates over every resource the server offers.
func (cs *ClientSession) Resources(ctx context.Context) iter.Seq2[*Resource, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*Resource, string, error) {
		res, err := cs.ListResources(ctx, &ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
}

// ResourceTemplates iterates over every resource template the server offers.
func (cs *ClientSession) ResourceTemplates(ctx context.Context) iter.Seq2[*ResourceTemplate, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
}

// Prompts iterates over every prompt the server offers.
func (cs *ClientSession) Prompts(ctx context.Context) iter.Seq2[*Prompt, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
}

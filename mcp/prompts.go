package mcp

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// PromptHandler renders a prompt for prompts/get. Required arguments are
// checked before it runs.
type PromptHandler func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error)

type serverPrompt struct {
	prompt  *Prompt
	handler PromptHandler
}

// AddPrompt registers a prompt. Adding a prompt with the name of an
// existing one replaces it (logged at warning level before the server
// first connects or within one Batch, as for [Server.AddTool]). Clients
// are told the prompt list changed. A
// server that adds its first prompt after clients connected must declare
// the prompts capability in [ServerOptions.Capabilities] (see
// [Server.AddTool]).
func (s *Server) AddPrompt(p *Prompt, h PromptHandler) error {
	if p == nil || h == nil {
		return errors.New("mcp: AddPrompt needs a prompt and a handler")
	}
	if p.Name == "" {
		return errors.New("mcp: prompt has no name")
	}
	prompt := *p
	s.mu.Lock()
	replaced := s.prompts.add(prompt.Name, &serverPrompt{prompt: &prompt, handler: h})
	s.noteAddedLocked("prompt", prompt.Name, replaced)
	s.mu.Unlock()
	s.broadcast(NotificationPromptListChanged, &PromptListChangedParams{}, nil)
	return nil
}

// RemovePrompts removes the named prompts.
func (s *Server) RemovePrompts(names ...string) {
	s.mu.Lock()
	removed := s.prompts.remove(names...)
	s.mu.Unlock()
	if removed {
		s.broadcast(NotificationPromptListChanged, &PromptListChangedParams{}, nil)
	}
}

func (ss *ServerSession) listPrompts(_ context.Context, req *ServerRequest[*ListPromptsParams]) (*ListPromptsResult, error) {
	s := ss.server
	s.mu.RLock()
	items, next, err := s.prompts.page(req.Params.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &ListPromptsResult{Prompts: make([]*Prompt, len(items)), NextCursor: next}
	for i, p := range items {
		res.Prompts[i] = p.prompt
	}
	return res, nil
}

func (ss *ServerSession) getPrompt(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
	s := ss.server
	s.mu.RLock()
	p, ok := s.prompts.get(req.Params.Name)
	s.mu.RUnlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: unknown prompt " + req.Params.Name}
	}
	for _, a := range p.prompt.Arguments {
		if _, given := req.Params.Arguments[a.Name]; a.Required && !given {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: missing required argument " + a.Name}
		}
	}
	res, err := p.handler(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.Messages == nil {
		res.Messages = []*PromptMessage{}
	}
	return res, nil
}

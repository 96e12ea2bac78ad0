package everything

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Texts the scenarios look for, or that the reference server sends.
const (
	simpleText        = "This is a simple text response for testing."
	embeddedText      = "This is an embedded resource content."
	errorText         = "This tool intentionally returns an error for testing"
	staticText        = "This is the content of the static text resource."
	watchedText       = "Watched resource content"
	simplePromptText  = "This is a simple prompt for testing."
	reconnectionText  = "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
	schema202012      = "https://json-schema.org/draft/2020-12/schema"
	templateURI       = "test://template/{id}/data"
	watchedURI        = "test://watched-resource"
	promptWithArgs    = "test_prompt_with_arguments"
	reconnectionPause = 200 * time.Millisecond
)

// step is the pause between the notifications of the logging and progress
// tools; the scenarios ask for about 50 ms.
const step = 50 * time.Millisecond

// json202012Schema is the input schema of json_schema_2020_12_tool: the
// scenario checks that $schema, $defs (with an $anchor), allOf/anyOf,
// if/then/else and additionalProperties reach the client unchanged.
const json202012Schema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// sep1034Schema asks for one field of each primitive type, each with a
// default (SEP-1034).
const sep1034Schema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "description": "User name", "default": "John Doe"},
		"age": {"type": "integer", "description": "User age", "default": 30},
		"score": {"type": "number", "description": "User score", "default": 95.5},
		"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
		"verified": {"type": "boolean", "description": "Verification status", "default": true}
	}
}`

// sep1330Schema holds the five kinds of enumerated field of SEP-1330.
const sep1330Schema = `{
	"type": "object",
	"properties": {
		"untitledSingle": {"type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"]},
		"titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
			{"const": "value1", "title": "First Option"},
			{"const": "value2", "title": "Second Option"},
			{"const": "value3", "title": "Third Option"}
		]},
		"legacyEnum": {"type": "string", "description": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
		"untitledMulti": {"type": "array", "description": "Untitled multi-select", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
		"titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
			{"const": "value1", "title": "First Choice"},
			{"const": "value2", "title": "Second Choice"},
			{"const": "value3", "title": "Third Choice"}
		]}}
	}
}`

// userInfoSchema is what test_elicitation asks the user for.
const userInfoSchema = `{
	"type": "object",
	"properties": {
		"username": {"type": "string", "description": "User's response"},
		"email": {"type": "string", "description": "User's email address"}
	},
	"required": ["username", "email"]
}`

// SamplingInput is the input of test_sampling.
type SamplingInput struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM"`
}

// ElicitationInput is the input of test_elicitation.
type ElicitationInput struct {
	Message string `json:"message" jsonschema:"The message to show the user"`
}

// Options tune the fixture server. The zero value serves one process
// with in-memory state.
type Options struct {
	// Logger receives the server's own diagnostics (nil: none).
	Logger *slog.Logger
	// CloseStream, if set, is called by test_reconnection to end the
	// HTTP response stream of its own request, so that the client has to
	// resume it; the stdio server has no such stream. NewHTTPHandler sets
	// it.
	CloseStream func(ctx context.Context)
	// Server, if set, is called with the server's options before the
	// server is made, to add what replicas share (keys, a bus, a state
	// claimer, a task store); the fixture's own settings are in place.
	Server func(*mcp.ServerOptions)
	// HTTP, if set, is called with the Streamable HTTP handler's options
	// before NewHTTPHandler makes it (an event store, a session store).
	HTTP func(*transport.StreamableHTTPOptions)
	// Flags keeps whether the dynamic tool and prompt are listed; replicas
	// share one. Nil means MemoryFlags of this server.
	Flags Flags
}

// NewServer returns the server with everything the conformance
// scenarios call.
func NewServer(o Options) (*mcp.Server, error) {
	opts := &mcp.ServerOptions{
		Instructions:      "The fixture server of the MCP conformance suite.",
		Logger:            o.Logger,
		CompletionHandler: complete,
		Tasks:             &mcp.TaskOptions{PollInterval: 500 * time.Millisecond},
	}
	if o.Flags == nil {
		o.Flags = &MemoryFlags{}
	}
	d := &dynamic{flags: o.Flags, listed: map[string]bool{}}
	opts.Middleware = []mcp.Middleware{d.middleware}
	if o.Server != nil {
		o.Server(opts)
	}
	s := mcp.NewServer(&mcp.Implementation{
		Name:    "mcpkit-conformance-everything",
		Title:   "mcpkit conformance fixture",
		Version: "1.0.0",
	}, opts)
	d.s = s
	for _, add := range []func(*mcp.Server, Options) error{addTools, addResources, addPrompts, addSkills,
		func(s *mcp.Server, _ Options) error { return addModernTools(s, d) },
		func(s *mcp.Server, _ Options) error { return addTaskTools(s) }} {
		if err := add(s, o); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// noArgs is the input schema of the tools that take no arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// text returns a result holding one text block.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// marshalContent renders an elicitation's content for a text block.
func marshalContent(m map[string]any) string {
	if m == nil {
		m = map[string]any{}
	}
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		return fmt.Sprintf("%v", m)
	}
	return string(b)
}

func addTools(s *mcp.Server, o Options) error {
	raw := []struct {
		name, desc string
		schema     json.RawMessage
		h          mcp.ToolHandler
	}{
		{"test_simple_text", "Returns a simple text response.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(simpleText), nil
			}},
		{"test_trace_context", "Returns the W3C trace context the request carried in _meta (traceparent, then tracestate), for interop tests of tracing.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var parent, state string
				json.Unmarshal(req.Params.Meta.Other["traceparent"], &parent)
				json.Unmarshal(req.Params.Meta.Other["tracestate"], &state)
				return text(strings.TrimSpace(parent + " " + state)), nil
			}},
		{"test_image_content", "Returns an image (a 1x1 red PNG).", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
			}},
		{"test_audio_content", "Returns audio (a short silent WAV).", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
			}},
		{"test_embedded_resource", "Returns an embedded text resource.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "test://embedded-resource", MIMEType: "text/plain", Text: embeddedText,
				}}}}, nil
			}},
		{"test_multiple_content_types", "Returns text, an image and an embedded resource.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					&mcp.TextContent{Text: "Multiple content types test:"},
					&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
						URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
					}},
				}}, nil
			}},
		{"test_tool_with_logging", "Sends three log messages while it runs.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				msgs := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
				for i, m := range msgs {
					if i > 0 {
						if err := sleep(ctx, step); err != nil {
							return nil, err
						}
					}
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevelInfo, Logger: "conformance", Data: m}); err != nil {
						return nil, err
					}
				}
				return text("Tool with logging executed successfully"), nil
			}},
		{"test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := sleep(ctx, step); err != nil {
							return nil, err
						}
					}
					if err := req.ReportProgress(ctx, p, 100, fmt.Sprintf("Completed step %d of 3", i+1)); err != nil {
						return nil, err
					}
				}
				return text("Tool with progress executed successfully"), nil
			}},
		{"test_error_handling", "Always fails with a tool error.", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: errorText}}}, nil
			}},
		{"test_reconnection", "Closes its response stream mid-call, then answers once the client has reconnected (SSE polling, SEP-1699).", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if o.CloseStream != nil {
					o.CloseStream(ctx)
				}
				if err := sleep(ctx, reconnectionPause); err != nil {
					return nil, err
				}
				return text(reconnectionText), nil
			}},
		{"test_elicitation_sep1034_defaults", "Asks the user for fields of every primitive type, each with a default (SEP-1034).", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return elicitCompleted(ctx, req, "Please review and update the form fields with defaults", sep1034Schema)
			}},
		{"test_elicitation_sep1330_enums", "Asks the user to choose from every kind of enumeration (SEP-1330).", noArgs,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return elicitCompleted(ctx, req, "Please select options from the enum fields", sep1330Schema)
			}},
		{"json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json.RawMessage(json202012Schema),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := string(req.Params.Arguments)
				if args == "" {
					args = "{}"
				}
				return text("JSON Schema 2020-12 tool called with: " + args), nil
			}},
	}
	for _, t := range raw {
		if err := s.AddTool(&mcp.Tool{Name: t.name, Description: t.desc, InputSchema: t.schema}, t.h); err != nil {
			return err
		}
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's LLM to answer the prompt (sampling)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in SamplingInput) (*mcp.CallToolResult, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: in.Prompt}}}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, err
			}
			answer := "No response"
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					answer = t.Text
					break
				}
			}
			return text("LLM response: " + answer), nil
		}); err != nil {
		return err
	}
	return mcp.AddTool(s, &mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a username and an email address (elicitation)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in ElicitationInput) (*mcp.CallToolResult, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: in.Message, RequestedSchema: json.RawMessage(userInfoSchema)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, marshalContent(res.Content))), nil
		})
}

// elicitCompleted asks the client to elicit a form and reports the answer.
func elicitCompleted(ctx context.Context, req *mcp.CallToolRequest, msg, schema string) (*mcp.CallToolResult, error) {
	res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, marshalContent(res.Content))), nil
}

func addResources(s *mcp.Server, _ Options) error {
	static := []struct {
		res *mcp.Resource
		c   mcp.ResourceContents
	}{
		{&mcp.Resource{URI: "test://static-text", Name: "static-text", Title: "Static text resource", Description: "A static text resource for testing", MIMEType: "text/plain"},
			mcp.ResourceContents{MIMEType: "text/plain", Text: staticText}},
		{&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static binary resource", Description: "A static binary resource (a 1x1 red PNG) for testing", MIMEType: "image/png"},
			mcp.ResourceContents{MIMEType: "image/png", Blob: redPixelPNG}},
		{&mcp.Resource{URI: watchedURI, Name: "watched-resource", Title: "Watched resource", Description: "A resource clients can subscribe to", MIMEType: "text/plain"},
			mcp.ResourceContents{MIMEType: "text/plain", Text: watchedText}},
	}
	for _, r := range static {
		c := r.c
		c.URI = r.res.URI
		if err := s.AddResource(r.res, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c := c
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{&c}}, nil
		}); err != nil {
			return err
		}
	}
	return s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: templateURI, Name: "template", Title: "Template resource",
		Description: "A resource template with one parameter, id", MIMEType: "application/json",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		id := req.TemplateVars["id"]
		if id == "" {
			return nil, &mcp.ResourceNotFoundError{URI: uri}
		}
		body, err := jsonv2.Marshal(struct {
			ID           string `json:"id"`
			TemplateTest bool   `json:"templateTest"`
			Data         string `json:"data"`
		}{id, true, "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
	})
}

func addPrompts(s *mcp.Server, _ Options) error {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: mcp.RoleUser, Content: c} }
	prompts := []struct {
		p *mcp.Prompt
		h mcp.PromptHandler
	}{
		{&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: simplePromptText})}}, nil
			}},
		{&mcp.Prompt{Name: promptWithArgs, Description: "A prompt with two required arguments", Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				a := req.Params.Arguments
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}),
				}}, nil
			}},
		{&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource", Arguments: []*mcp.PromptArgument{
			{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
		}},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				uri := req.Params.Arguments["resourceUri"]
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
					user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
				}}, nil
			}},
		{&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					user(&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}),
					user(&mcp.TextContent{Text: "Please analyze the image above."}),
				}}, nil
			}},
	}
	for _, p := range prompts {
		if err := s.AddPrompt(p.p, p.h); err != nil {
			return err
		}
	}
	return nil
}

// complete suggests values for the arguments of test_prompt_with_arguments
// and the id of the resource template, those starting with what the
// client typed.
func complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var pool []string
	switch {
	case p.Ref == nil:
	case p.Ref.Type == mcp.ReferencePrompt && p.Ref.Name == promptWithArgs:
		pool = []string{"test", "testing", "test-value", "hello", "world"}
	case p.Ref.Type == mcp.ReferenceResource && p.Ref.URI == templateURI && p.Argument.Name == "id":
		pool = []string{"1", "2", "3", "123", "456"}
	}
	out := []string{}
	for _, v := range pool {
		if strings.HasPrefix(v, p.Argument.Value) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return &mcp.CompleteResult{Completion: mcp.Completion{Values: out, Total: len(out)}}, nil
}

// redPixelPNG is a 1x1 red PNG image.
var redPixelPNG = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil // cannot happen with an in-memory image
	}
	return b.Bytes()
}()

// silentWAV is 10 ms of 8 kHz 8-bit mono silence as a WAV file.
var silentWAV = func() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) } // bytes.Buffer writes never fail
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples)) // 8-bit PCM silence is 128
	return b.Bytes()
}()

package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// Content is a content block: *TextContent, *ImageContent,
// *AudioContent, *ResourceLink, *EmbeddedResource, *ToolUseContent or
// *ToolResultContent. The interface is sealed.
type Content interface {
	contentType() string
}

// TextContent is a content block of plain text (type "text").
type TextContent struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// Text is the text. Required.
	Text string `json:"text"`
	// Annotations say who the block is for and how much it matters.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
}

// ImageContent is a content block holding an image (type "image"); Data
// is sent base64-encoded.
type ImageContent struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// Data is the image's bytes; the wire carries them base64-encoded.
	// Required.
	Data []byte `json:"data,format:base64"`
	// MIMEType is the image's media type, such as "image/png". Required.
	MIMEType string `json:"mimeType"`
	// Annotations say who the block is for and how much it matters.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
}

// AudioContent is a content block holding audio (type "audio", from
// 2025-03-26); Data is sent base64-encoded.
type AudioContent struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// Data is the audio's bytes; the wire carries them base64-encoded.
	// Required.
	Data []byte `json:"data,format:base64"`
	// MIMEType is the audio's media type, such as "audio/wav". Required.
	MIMEType string `json:"mimeType"`
	// Annotations say who the block is for and how much it matters.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
}

// ResourceLink is a content block that points at a resource the client
// may read with resources/read (type "resource_link", from 2025-06-18).
// Unlike [EmbeddedResource] it does not carry the contents. The resource
// need not be one that resources/list returns.
type ResourceLink struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI identifies the resource; resources/read takes it. Required.
	URI string `json:"uri"`
	// Name identifies the resource to programs; clients show it when Title
	// is empty. Required.
	Name string `json:"name"`
	// Title is a name for people to read. Optional.
	Title string `json:"title,omitzero"`
	// Description says what the resource holds. Optional.
	Description string `json:"description,omitzero"`
	// MIMEType is the media type of the resource's contents, if known.
	// Optional.
	MIMEType string `json:"mimeType,omitzero"`
	// Size is the size of the resource's raw contents in bytes (before any
	// base64 encoding), if known. Optional; zero means unknown.
	Size int64 `json:"size,omitzero"`
	// Annotations say who the resource is for and how much it matters.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
	// Icons are images a client may show for the resource. Optional; from
	// 2025-11-25.
	Icons []Icon `json:"icons,omitzero"`
}

// EmbeddedResource is a content block that carries a resource's contents
// inline (type "resource").
type EmbeddedResource struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional; from
	// 2025-06-18.
	Meta Meta `json:"_meta,omitzero"`
	// Resource holds the resource's contents, text or binary, with its URI.
	// Required.
	Resource *ResourceContents `json:"resource"`
	// Annotations say who the block is for and how much it matters.
	// Optional.
	Annotations *Annotations `json:"annotations,omitzero"`
}

// ToolUseContent is a model's request to call a tool, in sampling (type
// "tool_use", from 2025-11-25). It appears in assistant messages.
type ToolUseContent struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional. A
	// client should keep it when it sends the block back in a later sampling
	// request, so that providers can cache.
	Meta Meta `json:"_meta,omitzero"`
	// ID identifies this tool use; the ToolResultContent that answers it
	// names it in ToolUseID. Required.
	ID string `json:"id"`
	// Name is the tool the model wants to call. Required.
	Name string `json:"name"`
	// Input is a JSON object holding the call's arguments, matching the
	// tool's input schema. Required.
	Input json.RawMessage `json:"input"`
}

// ToolResultContent is the result of a tool use, in sampling (type
// "tool_result", from 2025-11-25). It appears in user messages.
type ToolResultContent struct {
	// Meta is the _meta member: extension data (see [Meta]). Optional. A
	// client should keep it when it sends the block back in a later sampling
	// request, so that providers can cache.
	Meta Meta `json:"_meta,omitzero"`
	// ToolUseID is the ID of the ToolUseContent this block answers.
	// Required.
	ToolUseID string `json:"toolUseId"`
	// Content is the tool's result for the model to read, as in
	// CallToolResult.Content. Required; may be empty.
	Content Contents `json:"content"`
	// StructuredContent is the tool's result as a JSON object, matching its
	// output schema if it has one. Optional.
	StructuredContent json.RawMessage `json:"structuredContent,omitzero"`
	// IsError marks a tool use that failed; Content then describes the
	// failure. Optional; absent means false.
	IsError bool `json:"isError,omitzero"`
}

func (*TextContent) contentType() string       { return "text" }
func (*ImageContent) contentType() string      { return "image" }
func (*AudioContent) contentType() string      { return "audio" }
func (*ResourceLink) contentType() string      { return "resource_link" }
func (*EmbeddedResource) contentType() string  { return "resource" }
func (*ToolUseContent) contentType() string    { return "tool_use" }
func (*ToolResultContent) contentType() string { return "tool_result" }

// Contents is a list of content blocks, encoded with their "type".
type Contents []Content

// marshalJSONTo encodes cs for the wire; nil encodes as [].
func (cs *Contents) marshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, c := range *cs {
		w, err := typed(c)
		if err != nil {
			return err
		}
		// Each block goes straight into the encoder's output: a large
		// text or image is escaped or encoded once, and not copied.
		if err := jsonv2.MarshalEncode(enc, w); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// unmarshalJSONFrom decodes cs from the wire.
func (cs *Contents) unmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		*cs = Contents{}
		return err
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	out := Contents{}
	for dec.PeekKind() != ']' {
		// The block is decoded from the decoder's own buffer, not from a
		// copy of it.
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		c, err := unmarshalContent(raw)
		if err != nil {
			return fmt.Errorf("content %d: %w", len(out), err)
		}
		out = append(out, c)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*cs = out
	return nil
}

// typedBlock is a content block with its "type" member first, as MCP's
// blocks are encoded: the block's own fields are inlined after it.
type typedBlock[T any] struct {
	Type  string `json:"type"`
	Block *T     `json:",inline"`
}

// typed returns c, which encodes with its "type" member first (see the
// generated marshalJSONTo methods), or an error for a nil block.
func typed(c Content) (Content, error) {
	var isNil bool
	switch c := c.(type) {
	case nil:
		isNil = true
	case *TextContent:
		isNil = c == nil
	case *ImageContent:
		isNil = c == nil
	case *AudioContent:
		isNil = c == nil
	case *ResourceLink:
		isNil = c == nil
	case *EmbeddedResource:
		isNil = c == nil
	case *ToolUseContent:
		isNil = c == nil
	case *ToolResultContent:
		isNil = c == nil
	}
	if isNil {
		return nil, errors.New("mcp: nil content block")
	}
	return c, nil
}

// marshalContent encodes one block with its type member first.
func marshalContent(c Content) (jsontext.Value, error) {
	w, err := typed(c)
	if err != nil {
		return nil, err
	}
	return marshalStd(w)
}

// unmarshalContent decodes one block, dispatching on its type member.
// raw may be a decoder's buffer: nothing decoded shares its memory. Every
// caller has raw from a decoder that validated it, duplicate member names
// included (or from a message whose decoding did), so neither reading of
// it here checks names again (see receivedOption).
func unmarshalContent(raw jsontext.Value) (Content, error) {
	c := blankContent(raw)
	if c == nil {
		// Not found by the quick look (absent, escaped or unknown type, or
		// raw is not an object): decode the head for the exact answer.
		var head struct {
			Type string `json:"type"`
		}
		if err := jsonv2.Unmarshal(raw, &head, receivedOption); err != nil {
			return nil, err
		}
		if c = newContent([]byte(head.Type)); c == nil {
			if head.Type == "" {
				return nil, errors.New(`mcp: content block without "type"`)
			}
			return nil, fmt.Errorf("mcp: unknown content type %q", head.Type)
		}
	}
	// The "type" member, which the block types have no field for, is
	// skipped as every unknown member is.
	if err := jsonv2.Unmarshal(raw, c, wire().received...); err != nil {
		return nil, err
	}
	return c, nil
}

// newContent returns an empty block of the type named typ, or nil for an
// unknown type.
func newContent(typ []byte) Content {
	switch string(typ) {
	case "text":
		return &TextContent{}
	case "image":
		return &ImageContent{}
	case "audio":
		return &AudioContent{}
	case "resource_link":
		return &ResourceLink{}
	case "resource":
		return &EmbeddedResource{}
	case "tool_use":
		return &ToolUseContent{}
	case "tool_result":
		return &ToolResultContent{}
	}
	return nil
}

// blankContent returns an empty block of the type that the block raw
// names in its "type" member, or nil when that is not a known type written
// without escapes. It reads raw only up to that member, which senders put
// first.
func blankContent(raw jsontext.Value) Content {
	dec := jsonscan.GetValidated(raw)
	defer dec.Release()
	if dec.PeekKind() != '{' {
		return nil
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		if string(name) != `"type"` {
			if dec.SkipValue() != nil {
				return nil
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		typ, ok := jsonscan.PlainString(v)
		if !ok {
			return nil
		}
		return newContent(typ)
	}
	return nil
}

// marshalOneOrMany encodes a single block as an object (the only shape
// before 2025-11-25) and any other number of blocks as an array.
func marshalOneOrMany(cs Contents) (jsontext.Value, error) {
	if len(cs) == 1 {
		return marshalContent(cs[0])
	}
	return marshalStd(cs)
}

// unmarshalOneOrMany decodes a single block or an array of blocks.
func unmarshalOneOrMany(raw jsontext.Value) (Contents, error) {
	if raw.Kind() == '[' {
		var cs Contents
		if err := unmarshalStd(raw, &cs); err != nil {
			return nil, err
		}
		return cs, nil
	}
	c, err := unmarshalContent(raw)
	if err != nil {
		return nil, err
	}
	return Contents{c}, nil
}

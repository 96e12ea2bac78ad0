package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Content is a content block: *TextContent, *ImageContent,
// *AudioContent, *ResourceLink, *EmbeddedResource, *ToolUseContent or
// *ToolResultContent. The interface is sealed.
type Content interface {
	contentType() string
}

// TextContent is text.
type TextContent struct {
	Meta        Meta         `json:"_meta,omitzero"`
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitzero"`
}

// ImageContent is an image; Data is sent base64-encoded.
type ImageContent struct {
	Meta        Meta         `json:"_meta,omitzero"`
	Data        []byte       `json:"data,format:base64"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitzero"`
}

// AudioContent is audio; Data is sent base64-encoded.
type AudioContent struct {
	Meta        Meta         `json:"_meta,omitzero"`
	Data        []byte       `json:"data,format:base64"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitzero"`
}

// ResourceLink points at a resource the client may read.
type ResourceLink struct {
	Meta        Meta         `json:"_meta,omitzero"`
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Size        int64        `json:"size,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitzero"`
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Meta        Meta              `json:"_meta,omitzero"`
	Resource    *ResourceContents `json:"resource"`
	Annotations *Annotations      `json:"annotations,omitzero"`
}

// ToolUseContent is a model's request to call a tool (sampling, 2025-11-25).
type ToolUseContent struct {
	Meta  Meta           `json:"_meta,omitzero"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// ToolResultContent is the result of a tool use (sampling, 2025-11-25).
type ToolResultContent struct {
	Meta              Meta           `json:"_meta,omitzero"`
	ToolUseID         string         `json:"toolUseId"`
	Content           Contents       `json:"content"`
	StructuredContent map[string]any `json:"structuredContent,omitzero"`
	IsError           bool           `json:"isError,omitzero"`
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

// MarshalJSONTo implements json.MarshalerTo; nil encodes as [].
func (cs Contents) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, c := range cs {
		w, err := typed(c)
		if err != nil {
			return err
		}
		// Each block goes straight into the encoder's output: a large
		// text or image is escaped or encoded once, and not copied.
		if err := json.MarshalEncode(enc, w); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (cs *Contents) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
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

// typed returns c wrapped so that it encodes as c does with its "type"
// member first, as MCP's content blocks are: the block's fields are inlined
// after it. This relies on the block types having no JSON methods of
// their own, which the wrapper would inherit (TestContentRoundTrip covers
// every type).
func typed(c Content) (any, error) {
	var w any
	switch c := c.(type) {
	case *TextContent:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*TextContent
			}{"text", c}
		}
	case *ImageContent:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*ImageContent
			}{"image", c}
		}
	case *AudioContent:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*AudioContent
			}{"audio", c}
		}
	case *ResourceLink:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*ResourceLink
			}{"resource_link", c}
		}
	case *EmbeddedResource:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*EmbeddedResource
			}{"resource", c}
		}
	case *ToolUseContent:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*ToolUseContent
			}{"tool_use", c}
		}
	case *ToolResultContent:
		if c != nil {
			w = &struct {
				Type string `json:"type"`
				*ToolResultContent
			}{"tool_result", c}
		}
	}
	if w == nil {
		return nil, errors.New("mcp: nil content block")
	}
	return w, nil
}

// marshalContent encodes one block with its type member first.
func marshalContent(c Content) (jsontext.Value, error) {
	w, err := typed(c)
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// unmarshalContent decodes one block, dispatching on its type member.
// raw may be a decoder's buffer: nothing decoded shares its memory.
func unmarshalContent(raw jsontext.Value) (Content, error) {
	c := blankContent(raw)
	if c == nil {
		// Not found by the quick look (absent, escaped or unknown type, or
		// raw is not an object): decode the head for the exact answer.
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, err
		}
		if c = newContent([]byte(head.Type)); c == nil {
			if head.Type == "" {
				return nil, errors.New(`mcp: content block without "type"`)
			}
			return nil, fmt.Errorf("mcp: unknown content type %q", head.Type)
		}
	}
	if err := json.Unmarshal(raw, c, json.RejectUnknownMembers(false)); err != nil {
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

// scanDecoder is a jsontext.Decoder reading a bytes.Buffer in place.
type scanDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var scanDecoders = sync.Pool{New: func() any { return new(scanDecoder) }}

// blankContent returns an empty block of the type that the block raw
// names in its "type" member, or nil when that is not a known type written
// without escapes. It reads raw only up to that member, which senders put
// first.
func blankContent(raw jsontext.Value) Content {
	sd := scanDecoders.Get().(*scanDecoder)
	sd.buf = *bytes.NewBuffer(raw)
	sd.dec.Reset(&sd.buf)
	var c Content
	if sd.dec.PeekKind() == '{' {
		if _, err := sd.dec.ReadToken(); err == nil {
			for sd.dec.PeekKind() == '"' {
				name, err := sd.dec.ReadValue()
				if err != nil {
					break
				}
				if string(name) != `"type"` {
					if sd.dec.SkipValue() != nil {
						break
					}
					continue
				}
				if v, err := sd.dec.ReadValue(); err == nil && v.Kind() == '"' && bytes.IndexByte(v, '\\') < 0 {
					c = newContent(v[1 : len(v)-1])
				}
				break
			}
		}
	}
	sd.buf = bytes.Buffer{}
	sd.dec.Reset(&sd.buf)
	scanDecoders.Put(sd)
	return c
}

// marshalOneOrMany encodes a single block as an object (the only shape
// before 2025-11-25) and any other number of blocks as an array.
func marshalOneOrMany(cs Contents) (jsontext.Value, error) {
	if len(cs) == 1 {
		return marshalContent(cs[0])
	}
	return json.Marshal(cs)
}

// unmarshalOneOrMany decodes a single block or an array of blocks.
func unmarshalOneOrMany(raw jsontext.Value) (Contents, error) {
	if raw.Kind() == '[' {
		var cs Contents
		if err := json.Unmarshal(raw, &cs); err != nil {
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

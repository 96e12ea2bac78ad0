package mcp

import (
	"errors"
	"fmt"

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
		raw, err := marshalContent(c)
		if err != nil {
			return err
		}
		if err := enc.WriteValue(raw); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (cs *Contents) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var raws []jsontext.Value
	if err := json.UnmarshalDecode(dec, &raws); err != nil {
		return err
	}
	out := make(Contents, len(raws))
	for i, r := range raws {
		c, err := unmarshalContent(r)
		if err != nil {
			return fmt.Errorf("content %d: %w", i, err)
		}
		out[i] = c
	}
	*cs = out
	return nil
}

// marshalContent encodes one block with its type member first.
func marshalContent(c Content) (jsontext.Value, error) {
	if c == nil {
		return nil, errors.New("mcp: nil content block")
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+24)
	out = append(out, `{"type":"`...)
	out = append(out, c.contentType()...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
		out = append(out, body[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// unmarshalContent decodes one block, dispatching on its type member.
func unmarshalContent(raw jsontext.Value) (Content, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	var c Content
	switch head.Type {
	case "text":
		c = &TextContent{}
	case "image":
		c = &ImageContent{}
	case "audio":
		c = &AudioContent{}
	case "resource_link":
		c = &ResourceLink{}
	case "resource":
		c = &EmbeddedResource{}
	case "tool_use":
		c = &ToolUseContent{}
	case "tool_result":
		c = &ToolResultContent{}
	case "":
		return nil, errors.New(`mcp: content block without "type"`)
	default:
		return nil, fmt.Errorf("mcp: unknown content type %q", head.Type)
	}
	if err := json.Unmarshal(raw, c, json.RejectUnknownMembers(false)); err != nil {
		return nil, err
	}
	return c, nil
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

package interop

import (
	"encoding/json"
	"fmt"
	"strings"
)

// What TestTypeScriptClientAgainstOurServer knows about
// examples/stdio-server (tools add, echo, word_count, summarize, countdown; resources
// example://readme and example://logo.png; template greeting://{name};
// prompt code_review; completion). A tool, resource, template or prompt
// not named here is still exercised, with generated arguments, and must
// succeed; one named here but no longer offered fails the test, so that
// this file follows the example.

// exampleTools holds the arguments of each tool call (instead of the
// ones ts_client.mjs would build from the input schema), and the checks
// of their results.
var exampleTools = map[string]struct {
	args  map[string]any
	check func(c *tsToolCall) error
}{
	"add": {
		args: map[string]any{"a": 2, "b": 3.5},
		check: func(c *tsToolCall) error {
			var out struct{ Sum float64 }
			if err := json.Unmarshal(c.StructuredContent, &out); err != nil || out.Sum != 5.5 {
				return fmt.Errorf("2+3.5: structuredContent %s (%v)", c.StructuredContent, err)
			}
			return sameText(c, c.StructuredContent)
		},
	},
	"echo": {
		args: map[string]any{"message": "hello from the TypeScript SDK ✓"},
		check: func(c *tsToolCall) error {
			var out struct{ Message string }
			if err := json.Unmarshal(c.StructuredContent, &out); err != nil || out.Message != "hello from the TypeScript SDK ✓" {
				return fmt.Errorf("structuredContent %s (%v)", c.StructuredContent, err)
			}
			return sameText(c, c.StructuredContent)
		},
	},
	"word_count": {
		args: map[string]any{"text": "the quick brown fox — jumps"},
		check: func(c *tsToolCall) error {
			var out struct{ Words, Characters int }
			if err := json.Unmarshal(c.StructuredContent, &out); err != nil || out.Words != 6 || out.Characters != 27 {
				return fmt.Errorf("want 6 words (the dash is one), 27 characters (runes, not bytes): structuredContent %s (%v)", c.StructuredContent, err)
			}
			return sameText(c, c.StructuredContent)
		},
	},
	"summarize": {
		// The tool asks the client for sampling; ts_client.mjs answers
		// "ts-sampled: <the prompt>".
		args: map[string]any{"text": "MCP over HTTP"},
		check: func(c *tsToolCall) error {
			if want := "ts-sampled: Summarize in one sentence: MCP over HTTP"; c.Text() != want {
				return fmt.Errorf("got %q, want %q", c.Text(), want)
			}
			return nil
		},
	},
	"countdown": {
		args: map[string]any{"from": 3},
		check: func(c *tsToolCall) error {
			if c.Text() != "liftoff" || c.Progress != 3 {
				return fmt.Errorf("want liftoff after 3 progress notifications, got %q after %d", c.Text(), c.Progress)
			}
			return nil
		},
	},
}

// sameText checks that a tool's single text block holds its structured
// content's JSON (mcpkit's default for typed tools).
func sameText(c *tsToolCall, structured json.RawMessage) error {
	var a, b any
	if json.Unmarshal([]byte(c.Text()), &a) != nil || json.Unmarshal(structured, &b) != nil || !sameJSON(a, b) {
		return fmt.Errorf("text %q does not hold structuredContent %s", c.Text(), structured)
	}
	return nil
}

// exampleFailingCalls are calls that must fail, and how.
var exampleFailingCalls = []struct {
	name  string
	args  map[string]any
	check func(c *tsToolCall) error
}{
	{
		// A handler's error is a tool execution error (isError), for the
		// model to see.
		name: "countdown", args: map[string]any{"from": 0},
		check: func(c *tsToolCall) error {
			if c.Error != nil || !c.IsError || !strings.Contains(c.Text(), "between 1 and 10") {
				return fmt.Errorf("want isError about the range, got error %v, isError %v, %q", c.Error, c.IsError, c.Text())
			}
			return nil
		},
	},
	{
		// Arguments that do not fit the input schema: since 2025-11-25 a
		// tool execution error (isError) so that the model can correct
		// itself; -32602 is what older servers sent and is accepted too.
		name: "add", args: map[string]any{"a": "two", "b": 3},
		check: func(c *tsToolCall) error {
			if c.IsError || (c.Error != nil && c.Error.Code != nil && *c.Error.Code == -32602) {
				return nil
			}
			return fmt.Errorf("want isError (or -32602) for a string where a number belongs, got error %v, %q", c.Error, c.Text())
		},
	},
	{
		// An unknown tool is a protocol error, -32602.
		name: "no_such_tool", args: map[string]any{},
		check: func(c *tsToolCall) error {
			if c.Error == nil || c.Error.Code == nil || *c.Error.Code != -32602 {
				return fmt.Errorf("want protocol error -32602, got error %v, isError %v", c.Error, c.IsError)
			}
			return nil
		},
	},
}

// exampleTemplateVars fills the example's URI template; the expanded URI
// is read like the listed resources.
var exampleTemplateVars = map[string]string{"name": "Grace"}

// exampleReads checks the contents of resources by URI.
var exampleReads = map[string]func(r *tsRead) error{
	"example://readme": func(r *tsRead) error {
		c := r.Contents[0]
		if c.Text == nil || !strings.HasPrefix(*c.Text, "# mcpkit example") || c.MIMEType == nil || *c.MIMEType != "text/markdown" {
			return fmt.Errorf("readme: %+v", c)
		}
		return nil
	},
	"example://logo.png": func(r *tsRead) error {
		// The 8-byte PNG signature, base64: 12 characters.
		c := r.Contents[0]
		if c.BlobBase64Length == nil || *c.BlobBase64Length != 12 || c.Text != nil {
			return fmt.Errorf("logo: want a 12-character base64 blob, got %+v", c)
		}
		return nil
	},
	"greeting://Grace": func(r *tsRead) error {
		c := r.Contents[0]
		if c.Text == nil || *c.Text != "Hello, Grace!" {
			return fmt.Errorf("greeting: %+v", c)
		}
		return nil
	},
}

// exampleMissingResources must fail with -32002 (resource not found, the
// code of the handshake-era revisions).
var exampleMissingResources = []string{"example://no-such-resource", "greeting://"}

// examplePrompts are the arguments of each prompts/get and its checks.
var examplePrompts = map[string]struct {
	args  map[string]string
	check func(g *tsPromptGet) error
}{
	"code_review": {
		args: map[string]string{"code": "x := 1", "language": "go"},
		check: func(g *tsPromptGet) error {
			if len(g.Messages) != 2 {
				return fmt.Errorf("%d messages, want 2", len(g.Messages))
			}
			var text struct{ Type, Text string }
			var res struct {
				Type     string
				Resource struct{ URI, Text string }
			}
			if json.Unmarshal(g.Messages[0].Content, &text) != nil || text.Type != "text" ||
				!strings.Contains(text.Text, "go code") || !strings.Contains(text.Text, "x := 1") {
				return fmt.Errorf("first message %s", g.Messages[0].Content)
			}
			if json.Unmarshal(g.Messages[1].Content, &res) != nil || res.Type != "resource" || res.Resource.URI != "example://readme" || res.Resource.Text == "" {
				return fmt.Errorf("second message %s", g.Messages[1].Content)
			}
			return nil
		},
	},
}

// exampleCompletions are completion/complete calls and the values
// expected.
var exampleCompletions = []struct {
	params map[string]any
	want   []string
}{
	{
		params: map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "code_review"}, "argument": map[string]any{"name": "language", "value": "j"}},
		want:   []string{"java", "javascript"},
	},
	{
		params: map[string]any{
			"ref":      map[string]any{"type": "ref/resource", "uri": "greeting://{name}"},
			"argument": map[string]any{"name": "name", "value": "r"},
			"context":  map[string]any{"arguments": map[string]any{"language": "go"}},
		},
		want: []string{"Rob", "Robert"},
	},
}

func completionWant(params map[string]any) ([]string, bool) {
	for _, c := range exampleCompletions {
		if sameJSON(c.params, params) {
			return c.want, true
		}
	}
	return nil, false
}

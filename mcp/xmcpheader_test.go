package mcp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHeaderParamsRegistration checks the rules on x-mcp-header marks
// when a tool is registered.
func TestHeaderParamsRegistration(t *testing.T) {
	tests := []struct {
		name, schema string
		err          string // a substring of the error, "" for none
		paths        int
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, "", 0},
		{"string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, "", 1},
		{"nested properties", `{"type":"object","properties":{"o":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"B"},"c":{"type":"boolean","x-mcp-header":"C-1"}}}}}`, "", 2},
		{"number", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, "must be string, integer or boolean", 0},
		{"object", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, "must be string, integer or boolean", 0},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "not an HTTP token", 0},
		{"not a token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, "not an HTTP token", 0},
		{"CRLF", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r\nX"}}}`, "not an HTTP token", 0},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}`, "not an HTTP token", 0},
		{"duplicate, other case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`, "used twice", 0},
		{"under items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "properties alone", 0},
		{"under anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "properties alone", 0},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}`, "properties alone", 0},
		{"on the root", `{"type":"string","x-mcp-header":"A"}`, "properties alone", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := headerParams(json.RawMessage(tt.schema))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.err)
				}
				s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
				if err := s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}, nil); err == nil {
					t.Fatal("AddTool accepted the tool")
				}
				return
			}
			if err != nil || len(got) != tt.paths {
				t.Fatalf("got %v, %v; want %d marks", got, err, tt.paths)
			}
		})
	}
}

// TestCheckHeaderParams checks Mcp-Param headers against the arguments.
func TestCheckHeaderParams(t *testing.T) {
	params, err := headerParams(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"flag":{"type":"boolean","x-mcp-header":"Flag"},
		"o":{"type":"object","properties":{"deep":{"type":"string","x-mcp-header":"Deep"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		header     map[string]string
		ok         bool
	}{
		{"all present", `{"region":"us-west1","n":42,"flag":true,"o":{"deep":"x"}}`, map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Deep": "x"}, true},
		{"absent and null need no header", `{"region":null}`, nil, true},
		{"integer compared as a number", `{"n":42}`, map[string]string{"Mcp-Param-N": "42.0"}, true},
		{"base64", `{"region":"Hello, 世界"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, true},
		{"a literal that looks like base64", `{"region":"SGVsbG8="}`, map[string]string{"Mcp-Param-Region": "SGVsbG8="}, true},
		{"no sentinel suffix: literal", `{"region":"=?base64?SGVsbG8="}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}, true},
		{"missing header", `{"region":"us-west1"}`, nil, false},
		{"different value", `{"region":"us-west1"}`, map[string]string{"Mcp-Param-Region": "eu-west1"}, false},
		{"base64 without padding", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}, false},
		{"base64 with bad characters", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, false},
		{"boolean text", `{"flag":false}`, map[string]string{"Mcp-Param-Flag": "False"}, false},
		{"unsafe integer", `{"n":9007199254740993}`, map[string]string{"Mcp-Param-N": "9007199254740993"}, false},
		{"non-ASCII in a plain value", `{"region":"é"}`, map[string]string{"Mcp-Param-Region": "é"}, false},
		{"nested missing", `{"o":{"deep":"x"}}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			err := checkHeaderParams(params, h, json.RawMessage(tt.args))
			if (err == nil) != tt.ok {
				t.Fatalf("error %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

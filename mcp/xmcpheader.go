package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// x-mcp-header (2026-07-28, SEP-2243). A tool's input schema may mark a
// property with "x-mcp-header": Name; on Streamable HTTP the client then
// mirrors the argument into the header Mcp-Param-Name, so that gateways
// can route on it without reading the body, and the server checks that
// the two agree. The marks are checked when the tool is registered.

// headerParam is one property of a tool's input marked x-mcp-header.
type headerParam struct {
	name string   // the header is Mcp-Param-<name>
	path []string // the chain of properties keys from the schema root
	typ  string   // "string", "integer" or "boolean"
}

// headerParams returns the x-mcp-header marks of an input schema, or an
// error naming the first one that breaks the rules: a header name that is
// empty, not an HTTP token, or not unique (case-insensitively); a mark on
// a property that is not a string, an integer or a boolean, or that is
// not reachable from the root through properties alone.
func headerParams(schema json.RawMessage) ([]headerParam, error) {
	if !strings.Contains(string(schema), "x-mcp-header") {
		return nil, nil // the common case, without decoding
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []headerParam
	seen := map[string]bool{}
	var walk func(v any, path []string, static bool) error
	walk = func(v any, path []string, static bool) error {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				if err := walk(e, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if h, ok := v["x-mcp-header"]; ok {
				name, isString := h.(string)
				where := "/" + strings.Join(path, "/")
				switch {
				case !static || len(path) == 0:
					return fmt.Errorf("x-mcp-header at %s: allowed only on properties reached through properties alone", where)
				case !isString || !isToken(name):
					return fmt.Errorf("x-mcp-header at %s: %v is not an HTTP token", where, h)
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header at %s: %q is used twice", where, name)
				}
				typ, _ := v["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("x-mcp-header at %s: the property's type must be string, integer or boolean, not %v", where, v["type"])
				}
				seen[strings.ToLower(name)] = true
				out = append(out, headerParam{name: name, path: append([]string(nil), path...), typ: typ})
			}
			for k, sub := range v {
				if k == "properties" {
					props, ok := sub.(map[string]any)
					if !ok {
						continue
					}
					for name, p := range props {
						if err := walk(p, append(path, name), static); err != nil {
							return err
						}
					}
					continue
				}
				if err := walk(sub, path, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(root, nil, true)
}

// isToken reports whether s is an HTTP field-name token (RFC 9110, 5.1).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

package schema

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// tagItem is one key=value or bare flag of a schema tag.
type tagItem struct {
	key, value string
	hasValue   bool
}

// parseTag splits a schema tag into items. Items are separated by commas;
// a value may be wrapped in single quotes to contain commas.
func parseTag(tag string) ([]tagItem, error) {
	var items []tagItem
	for rest := tag; rest != ""; {
		var item tagItem
		end := strings.IndexAny(rest, "=,")
		if end < 0 || rest[end] == ',' {
			if end < 0 {
				end = len(rest)
			}
			item.key = strings.TrimSpace(rest[:end])
			rest = rest[min(end+1, len(rest)):]
		} else {
			item.key, item.hasValue = strings.TrimSpace(rest[:end]), true
			rest = rest[end+1:]
			if strings.HasPrefix(rest, "'") {
				q := strings.IndexByte(rest[1:], '\'')
				if q < 0 {
					return nil, fmt.Errorf("unterminated quote after %s=", item.key)
				}
				item.value = rest[1 : q+1]
				rest = rest[q+2:]
				if rest != "" && rest[0] != ',' {
					return nil, fmt.Errorf("text after the quoted value of %s", item.key)
				}
				rest = strings.TrimPrefix(rest, ",")
			} else {
				comma := strings.IndexByte(rest, ',')
				if comma < 0 {
					comma = len(rest)
				}
				item.value = rest[:comma]
				rest = rest[min(comma+1, len(rest)):]
			}
		}
		if item.key == "" {
			return nil, errors.New("empty keyword")
		}
		items = append(items, item)
	}
	return items, nil
}

// applyTag applies a schema tag to s, the schema of a field of Go type t.
// It returns the field's required-ness when the tag sets it.
func applyTag(s *jsonschema.Schema, t reflect.Type, tag string) (required *bool, err error) {
	items, err := parseTag(tag)
	if err != nil {
		return nil, err
	}
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	for _, it := range items {
		flag := func() error {
			if it.hasValue {
				return fmt.Errorf("%s takes no value", it.key)
			}
			return nil
		}
		value := func() error {
			if !it.hasValue {
				return fmt.Errorf("%s needs a value (%s=...)", it.key, it.key)
			}
			return nil
		}
		var err error
		switch it.key {
		case "required", "optional":
			if err = flag(); err == nil {
				r := it.key == "required"
				required = &r
			}
		case "nullable":
			if err = flag(); err == nil {
				makeNullable(s)
			}
		case "deprecated", "readOnly", "writeOnly":
			if err = flag(); err == nil {
				switch it.key {
				case "deprecated":
					s.Deprecated = true
				case "readOnly":
					s.ReadOnly = true
				default:
					s.WriteOnly = true
				}
			}
		case "title", "description", "format":
			if err = value(); err == nil {
				switch it.key {
				case "title":
					s.Title = it.value
				case "description":
					s.Description = it.value
				default:
					err = needType(s, it.key, "string")
					s.Format = it.value
				}
			}
		case "pattern":
			if err = value(); err == nil {
				if err = needType(s, it.key, "string"); err == nil {
					if _, rerr := regexp.Compile(it.value); rerr != nil {
						err = fmt.Errorf("pattern: %w", rerr)
					}
					s.Pattern = it.value
				}
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			if err = value(); err == nil {
				if err = needType(s, it.key, "number", "integer"); err == nil {
					var f float64
					if f, err = strconv.ParseFloat(it.value, 64); err == nil {
						switch it.key {
						case "minimum":
							s.Minimum = &f
						case "maximum":
							s.Maximum = &f
						case "exclusiveMinimum":
							s.ExclusiveMinimum = &f
						default:
							s.ExclusiveMaximum = &f
						}
					} else {
						err = fmt.Errorf("%s: %q is not a number", it.key, it.value)
					}
				}
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			if err = value(); err == nil {
				want := "string"
				if strings.HasSuffix(it.key, "Items") {
					want = "array"
				}
				if err = needType(s, it.key, want); err == nil {
					n, perr := strconv.Atoi(it.value)
					if perr != nil || n < 0 {
						err = fmt.Errorf("%s: %q is not a non-negative integer", it.key, it.value)
						break
					}
					switch it.key {
					case "minLength":
						s.MinLength = &n
					case "maxLength":
						s.MaxLength = &n
					case "minItems":
						s.MinItems = &n
					default:
						s.MaxItems = &n
					}
				}
			}
		case "enum":
			if err = value(); err == nil {
				for _, v := range strings.Split(it.value, "|") {
					x, perr := parseValue(base, v)
					if perr != nil {
						err = fmt.Errorf("enum value %q: %w", v, perr)
						break
					}
					s.Enum = append(s.Enum, x)
				}
			}
		case "default", "example":
			if err = value(); err == nil {
				x, perr := parseValue(base, it.value)
				if perr != nil {
					err = fmt.Errorf("%s %q: %w", it.key, it.value, perr)
					break
				}
				if it.key == "default" {
					s.Default, err = stdjson.Marshal(x)
				} else {
					s.Examples = append(s.Examples, x)
				}
			}
		default:
			err = fmt.Errorf("unknown keyword %q", it.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return required, nil
}

// needType checks that a keyword fits the schema's type.
func needType(s *jsonschema.Schema, key string, types ...string) error {
	have := s.Types
	if s.Type != "" {
		have = []string{s.Type}
	}
	for _, h := range have {
		if contains(types, h) {
			return nil
		}
	}
	if len(have) == 0 {
		return nil // an untyped schema takes any keyword
	}
	return fmt.Errorf("%s applies to %s values, not %s", key, strings.Join(types, " or "), strings.Join(have, " or "))
}

// parseValue parses tag text as a value of Go type t.
func parseValue(t reflect.Type, v string) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return v, nil
	case reflect.Bool:
		return strconv.ParseBool(v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.ParseInt(v, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseUint(v, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(v, t.Bits())
	}
	var x any
	if err := stdjson.Unmarshal([]byte(v), &x); err != nil {
		return nil, fmt.Errorf("not JSON for %v: %w", t, err)
	}
	return x, nil
}

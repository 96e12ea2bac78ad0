// Package schema derives JSON Schema (draft 2020-12) from Go types and
// validates JSON values against schemas. MCP servers use it to describe a
// tool's input and output from Go structs once, at registration, and to
// check every call's arguments before the handler runs.
//
// Schemas are github.com/google/jsonschema-go values; this package adds
// what tool authors need on top: rich struct tags, the wire shape of types
// with custom JSON, no surprise nullability, per-type overrides, a cache,
// a fast validator for the common subset, and draft-07 input.
//
// # Struct tags
//
// A field's JSON name and optionality come from its json tag, as in
// encoding/json: a field is required unless its tag has omitempty or
// omitzero; `json:"-"` hides it; embedded structs are flattened.
//
// The jsonschema tag holds the field's description, verbatim (commas
// allowed):
//
//	Query string `json:"query" jsonschema:"what to search for, in plain words"`
//
// The schema tag holds keywords, comma-separated, each key=value or a bare
// flag. A value containing a comma is written in single quotes.
//
//	Limit int    `json:"limit,omitempty" schema:"minimum=1,maximum=100,default=10"`
//	Sort  string `json:"sort,omitempty" schema:"enum=asc|desc,default=asc"`
//	When  string `json:"when" schema:"format=date-time,title=When"`
//	Note  string `json:"note,omitempty" schema:"pattern='^[a-z, ]+$',maxLength=200"`
//
// Keys: title, description, enum (values separated by |), default,
// example, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// minLength, maxLength, pattern, format, minItems, maxItems; flags:
// required, optional, nullable, deprecated, readOnly, writeOnly. Enum,
// default and example values are parsed as the field's type, so
// `default=ten` on an int is an error. Unknown keys, malformed values and
// keywords that do not fit the field's type are errors (a [*TagError]),
// never silently dropped.
//
// # Types with custom JSON
//
// time.Time is {"type":"string","format":"date-time"}; []byte is a
// base64 string; json.RawMessage and jsontext.Value accept anything; a
// type implementing encoding.TextMarshaler is a string; any other
// json.Marshaler is described as anything ({}), since its shape is
// unknown — register an override for a precise schema.
//
// Pointers, slices and maps are not nullable unless [Reflector.Nullable]
// is set or the field has the nullable flag. Recursive types are described
// with $defs and $ref.
package schema

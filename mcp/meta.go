package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Meta is the _meta member that params, results and most protocol objects
// carry: data for the peer beside the protocol's own fields. A key is a
// name, optionally preceded by a prefix of dot-separated labels (reverse
// DNS, such as "example.com/") and a slash. Prefixes whose second label is
// modelcontextprotocol or mcp are reserved for MCP itself.
//
// The keys MCP defines have fields of their own, decoded in the same pass
// as the rest of the message; every other key is in Other, as raw JSON.
// The zero Meta is an absent _meta.
type Meta struct {
	// ProgressToken ("progressToken") asks for progress notifications
	// about the request that carries it (see [SetProgressToken]).
	ProgressToken ProgressToken `json:"progressToken,omitzero"`
	// ProtocolVersion ("io.modelcontextprotocol/protocolVersion") is the
	// revision a request of 2026-07-28 or later is made under. Required
	// on every such request; it is what makes a request one of that era.
	ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion,omitzero"`
	// ClientCapabilities ("io.modelcontextprotocol/clientCapabilities")
	// are the capabilities the client declares for this request, from
	// 2026-07-28 (where there is no initialize to declare them once).
	// Required on such requests; an empty value declares none.
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities,omitzero"`
	// ClientInfo ("io.modelcontextprotocol/clientInfo") names the client
	// making the request, from 2026-07-28. Optional.
	ClientInfo *Implementation `json:"io.modelcontextprotocol/clientInfo,omitzero"`
	// LogLevel ("io.modelcontextprotocol/logLevel") is the least severe
	// level of the log messages the client wants about this request, from
	// 2026-07-28; without it the server sends none.
	LogLevel LoggingLevel `json:"io.modelcontextprotocol/logLevel,omitzero"`
	// ServerInfo ("io.modelcontextprotocol/serverInfo") names the server
	// that produced a result, from 2026-07-28: an mcpkit server puts its
	// own in every result of that era (see [ServerOptions.OmitServerInfo]).
	// A client's results that carry the same text share one value: do not
	// modify it.
	ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo,omitzero"`
	// SubscriptionID ("io.modelcontextprotocol/subscriptionId") tags the
	// notifications of a subscriptions/listen stream with the request
	// that opened it (2026-07-28).
	SubscriptionID ProgressToken `json:"io.modelcontextprotocol/subscriptionId,omitzero"`
	// Other holds every other member, by key, each a JSON value. Keys of
	// the fields above are not written from Other.
	Other map[string]json.RawMessage `json:"-"`

	// pre holds the encodings of ClientCapabilities and ClientInfo when
	// the client filled them in (see modernClient.fill), or of ServerInfo
	// when the server did (see Server.completeModern), so that the
	// envelope every request or result carries is not encoded anew each
	// time.
	pre *metaEncodings
}

// metaEncodings are the JSON encodings of a client's capabilities and
// identity, or of a server's identity, made once; they are used only
// while the Meta still points at the values they encode.
type metaEncodings struct {
	caps     *ClientCapabilities
	capsJSON jsontext.Value
	info     *Implementation
	infoJSON jsontext.Value
	// envelope is the encoding of the whole _meta of a request that
	// carries nothing but version, caps and info.
	version  string
	envelope jsontext.Value
	// server and serverEnvelope are a server's identity and the encoding
	// of the _meta of a result that carries nothing else.
	server         *Implementation
	serverEnvelope jsontext.Value
}

// isEnvelope reports whether m is the _meta envelope e encodes whole.
func (e *metaEncodings) isEnvelope(m *Meta) bool {
	return e != nil && e.envelope != nil && m.ProtocolVersion == e.version && m.ClientCapabilities == e.caps &&
		m.ClientInfo == e.info && m.ServerInfo == nil && m.identityOnly()
}

// isServerEnvelope reports whether m is the result's _meta e encodes
// whole: the server's identity and nothing else.
func (e *metaEncodings) isServerEnvelope(m *Meta) bool {
	return e != nil && e.serverEnvelope != nil && m.ServerInfo == e.server && m.ProtocolVersion == "" &&
		m.ClientCapabilities == nil && m.ClientInfo == nil && m.identityOnly()
}

// identityOnly reports whether m has none of the members that neither
// envelope (a client's request envelope, a server's result envelope)
// carries: no progress token, log level, subscription ID or other keys.
func (m *Meta) identityOnly() bool {
	return !m.ProgressToken.IsValid() && m.LogLevel == "" && !m.SubscriptionID.IsValid() && len(m.Other) == 0
}

// serverMeta returns the encodings of the _meta of a result that carries
// the server's identity info and nothing else.
func serverMeta(info Implementation) *metaEncodings {
	e := &metaEncodings{server: &info}
	if env, err := marshalStd(&Meta{ServerInfo: e.server}); err == nil {
		e.serverEnvelope = env
	}
	return e
}

// wireMeta returns the encoding of m for a hand-written encoder: nil for
// an absent _meta, and the encoding m.pre holds for a client's request
// envelope or a server's result envelope; ok is false for any other
// _meta, which the engine encodes.
func wireMeta(m *Meta) (env jsontext.Value, ok bool) {
	if e := m.pre; e != nil {
		if m.ServerInfo != nil {
			if e.isServerEnvelope(m) {
				return e.serverEnvelope, true
			}
		} else if e.isEnvelope(m) {
			return e.envelope, true
		}
	}
	return nil, m.IsZero()
}

// metaLen is how many bytes appendMeta appends for env.
func metaLen(env jsontext.Value) int {
	if env == nil {
		return 0
	}
	return len(`"_meta":,`) + len(env)
}

// appendMeta appends the member "_meta" whose value is env, and a comma,
// for a hand-written encoder of an object whose first member it is;
// nothing for a nil env.
func appendMeta(dst []byte, env jsontext.Value) []byte {
	if env == nil {
		return dst
	}
	dst = append(dst, `"_meta":`...)
	dst = append(dst, env...)
	return append(dst, ',')
}

// The _meta keys MCP defines.
const (
	metaKeyProgressToken      = "progressToken"
	metaKeyProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaKeyClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaKeyLogLevel           = "io.modelcontextprotocol/logLevel"
	metaKeyServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaKeySubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// IsZero reports whether m has no member, so that an empty _meta is
// omitted. Its receiver is a pointer so that the JSON encoders call it
// on the field in place: through a value receiver, each check would
// copy the whole Meta into an interface (an allocation per message).
func (m *Meta) IsZero() bool {
	return !m.ProgressToken.IsValid() && m.ProtocolVersion == "" && m.ClientCapabilities == nil &&
		m.ClientInfo == nil && m.LogLevel == "" && m.ServerInfo == nil && !m.SubscriptionID.IsValid() && len(m.Other) == 0
}

// marshalJSONTo encodes m for the wire: the members MCP defines first, in
// a fixed order, then Other's, sorted by key.
func (m *Meta) marshalJSONTo(enc *jsontext.Encoder) error {
	if env, _ := wireMeta(m); env != nil {
		return enc.WriteValue(env)
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	if m.ProgressToken.IsValid() {
		if err := writeName(enc, metaKeyProgressToken); err != nil {
			return err
		}
		if err := marshalID(enc, &m.ProgressToken); err != nil {
			return err
		}
	}
	if err := writeStringMember(enc, metaKeyProtocolVersion, m.ProtocolVersion); err != nil {
		return err
	}
	if m.ClientCapabilities != nil {
		if err := writeName(enc, metaKeyClientCapabilities); err != nil {
			return err
		}
		if err := m.pre.writeCaps(enc, m.ClientCapabilities); err != nil {
			return err
		}
	}
	if m.ClientInfo != nil {
		if err := writeName(enc, metaKeyClientInfo); err != nil {
			return err
		}
		if err := m.pre.writeInfo(enc, m.ClientInfo); err != nil {
			return err
		}
	}
	if err := writeStringMember(enc, metaKeyLogLevel, string(m.LogLevel)); err != nil {
		return err
	}
	if m.ServerInfo != nil {
		if err := writeName(enc, metaKeyServerInfo); err != nil {
			return err
		}
		if err := m.ServerInfo.marshalJSONTo(enc); err != nil {
			return err
		}
	}
	if m.SubscriptionID.IsValid() {
		if err := writeName(enc, metaKeySubscriptionID); err != nil {
			return err
		}
		if err := marshalID(enc, &m.SubscriptionID); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Other)) {
		if isMetaKey(k) {
			continue
		}
		if err := writeName(enc, k); err != nil {
			return err
		}
		v := m.Other[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		if err := enc.WriteValue(jsontext.Value(v)); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

func writeName(enc *jsontext.Encoder, name string) error {
	return enc.WriteToken(jsontext.String(name))
}

// writeStringMember writes the member name: v, unless v is empty.
func writeStringMember(enc *jsontext.Encoder, name, v string) error {
	if v == "" {
		return nil
	}
	if err := writeName(enc, name); err != nil {
		return err
	}
	return enc.WriteToken(jsontext.String(v))
}

// writeCaps writes c: its encoding made once, when e holds the encoding of
// this very value, else encoded now.
func (e *metaEncodings) writeCaps(enc *jsontext.Encoder, c *ClientCapabilities) error {
	if e != nil && e.caps == c {
		return enc.WriteValue(e.capsJSON)
	}
	return c.marshalJSONTo(enc)
}

// writeInfo is writeCaps for the client's identity.
func (e *metaEncodings) writeInfo(enc *jsontext.Encoder, i *Implementation) error {
	if e != nil && e.info == i {
		return enc.WriteValue(e.infoJSON)
	}
	return i.marshalJSONTo(enc)
}

// metaKeyOf returns name as a string: one of the constant keys MCP
// defines, without an allocation, or a copy.
func metaKeyOf(name []byte) string {
	switch string(name) {
	case metaKeyProgressToken:
		return metaKeyProgressToken
	case metaKeyProtocolVersion:
		return metaKeyProtocolVersion
	case metaKeyClientCapabilities:
		return metaKeyClientCapabilities
	case metaKeyClientInfo:
		return metaKeyClientInfo
	case metaKeyLogLevel:
		return metaKeyLogLevel
	case metaKeyServerInfo:
		return metaKeyServerInfo
	case metaKeySubscriptionID:
		return metaKeySubscriptionID
	}
	return string(name)
}

// isMetaKey reports whether k is a _meta key with a field of its own.
func isMetaKey(k string) bool {
	switch k {
	case metaKeyProgressToken, metaKeyProtocolVersion, metaKeyClientCapabilities, metaKeyClientInfo,
		metaKeyLogLevel, metaKeyServerInfo, metaKeySubscriptionID:
		return true
	}
	return false
}

// unmarshalJSONFrom decodes m from the wire, in one pass: the members MCP
// defines are decoded into their fields, the rest kept as raw JSON. null
// is an absent _meta.
func (m *Meta) unmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		*m = Meta{}
		return err
	case '{':
	default:
		_, err := dec.ReadValue()
		if err == nil {
			err = errors.New("_meta must be a JSON object")
		}
		return err
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*m = Meta{}
	for dec.PeekKind() != '}' {
		// The name as raw JSON: the keys MCP defines are matched without
		// making a string of them.
		quoted, err := dec.ReadValue()
		if err != nil {
			return err
		}
		var k string
		if bytes.IndexByte(quoted, '\\') < 0 {
			k = metaKeyOf(quoted[1 : len(quoted)-1])
		} else {
			u, err := jsontext.AppendUnquote(nil, quoted)
			if err != nil {
				return err
			}
			k = string(u)
		}
		switch k {
		case metaKeyProgressToken:
			err = unmarshalID(dec, &m.ProgressToken)
		case metaKeyProtocolVersion:
			err = jsonv2.UnmarshalDecode(dec, &m.ProtocolVersion)
		case metaKeyClientCapabilities:
			err = jsonv2.UnmarshalDecode(dec, &m.ClientCapabilities)
		case metaKeyClientInfo:
			err = jsonv2.UnmarshalDecode(dec, &m.ClientInfo)
		case metaKeyLogLevel:
			err = jsonv2.UnmarshalDecode(dec, &m.LogLevel)
		case metaKeyServerInfo:
			err = jsonv2.UnmarshalDecode(dec, &m.ServerInfo)
		case metaKeySubscriptionID:
			err = unmarshalID(dec, &m.SubscriptionID)
		default:
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				if m.Other == nil {
					m.Other = make(map[string]json.RawMessage)
				}
				m.Other[k] = json.RawMessage(v.Clone())
			}
		}
		if err != nil {
			return fmt.Errorf("_meta member %q: %w", k, err)
		}
	}
	_, err := dec.ReadToken()
	return err
}

package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// Transcript records the JSON-RPC messages of a connection, both ways, in
// the order they pass, and writes them as text fit for a golden file
// (see [Transcript.CompareGolden]). [Connect] records the client's
// connection into [Options.Transcript]; [Transcript.Wrap] records any
// transport's.
//
// The text is deterministic: every message is indented JSON with the
// members of each object in sorted order, and what changes from run to
// run is replaced by placeholders (see [Transcript.Text]). Messages that
// the two sides send independently, such as a server's list_changed
// notifications or log messages sent outside a request, may pass in
// another order from run to run, and a client polls a task as many times
// as the task takes; a transcript that must not change keeps to exchanges
// whose order and number the protocol fixes.
//
// The zero value is ready to use; a Transcript is safe for concurrent
// use.
type Transcript struct {
	// Volatile names more object members whose values change from run
	// to run, such as the identifiers a server makes up; Text replaces
	// their values, at any depth, as it does those of the members it
	// knows. Set it before the messages are written out.
	Volatile []string

	mu   sync.Mutex
	msgs []Message
}

// Message is one recorded message.
type Message struct {
	// Sent is true for a message the recorded side sent (the client, for
	// [Connect]), false for one it received.
	Sent bool
	// JSON is the message's encoding, as the wire carries it; null for
	// a message that could not be decoded.
	JSON json.RawMessage
	// Err, for a received message that could not be decoded, is why.
	Err string
}

// Messages returns the messages recorded so far, in order.
func (tr *Transcript) Messages() []Message {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]Message(nil), tr.msgs...)
}

// Reset forgets the messages recorded so far, so that a transcript can
// leave out the connection's start, say.
func (tr *Transcript) Reset() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.msgs = nil
}

// record appends m, encoded; a message that cannot be encoded is recorded
// as a JSON string saying why.
func (tr *Transcript) record(sent bool, m jsonrpc.Message) {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		b, _ = json.Marshal("unencodable message: " + err.Error())
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.msgs = append(tr.msgs, Message{Sent: sent, JSON: b})
}

// recordUndecodable appends a message that could not be decoded, as a
// received message whose JSON is null and whose error is err's text.
func (tr *Transcript) recordUndecodable(err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.msgs = append(tr.msgs, Message{JSON: json.RawMessage("null"), Err: err.Error()})
}

// Wrap returns a transport whose connection records into tr every message
// it writes (when the write starts, so that it comes before its answer)
// and every message it reads. The connection keeps the wrapped one's
// behaviour: its session ID and the protocol revision an HTTP connection
// is told pass through.
func (tr *Transcript) Wrap(t transport.Transport) transport.Transport {
	return &recordingTransport{inner: t, tr: tr}
}

// recordingTransport wraps a transport's connection in a recordingConn.
type recordingTransport struct {
	inner transport.Transport
	tr    *Transcript
}

// Connect connects the wrapped transport and wraps its connection.
func (t *recordingTransport) Connect(ctx context.Context) (transport.Conn, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc := &recordingConn{inner: c, tr: t.tr}
	if _, ok := c.(mcplink.ProtocolVersionSetter); ok {
		return &recordingVersionConn{rc}, nil
	}
	return rc, nil
}

// recordingConn records what passes through an inner connection.
type recordingConn struct {
	inner transport.Conn
	tr    *Transcript
}

// Read reads a message and records it.
func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.inner.Read(ctx)
	var de *jsonrpc.DecodeError
	switch {
	case err == nil:
		c.tr.record(false, m)
	case errors.As(err, &de):
		c.tr.recordUndecodable(de)
	}
	return m, err
}

// Write records a message and writes it.
func (c *recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if m != nil {
		c.tr.record(true, m)
	}
	return c.inner.Write(ctx, m)
}

// Close closes the inner connection.
func (c *recordingConn) Close() error { return c.inner.Close() }

// CloseWrite closes the inner connection's sending side if it can (see
// transport.HalfCloser), and the whole connection otherwise.
func (c *recordingConn) CloseWrite() error {
	if h, ok := c.inner.(transport.HalfCloser); ok {
		return h.CloseWrite()
	}
	return c.inner.Close()
}

// SessionID returns the inner connection's session ID, or "".
func (c *recordingConn) SessionID() string {
	if s, ok := c.inner.(transport.SessionConn); ok {
		return s.SessionID()
	}
	return ""
}

// HandshakeOnly reports what the inner connection reports.
func (c *recordingConn) HandshakeOnly() bool {
	h, ok := c.inner.(mcplink.HandshakeOnly)
	return ok && h.HandshakeOnly()
}

// SetLogger passes the client's logger to the inner connection, when it
// takes one.
func (c *recordingConn) SetLogger(l *slog.Logger) {
	if s, ok := c.inner.(interface{ SetLogger(*slog.Logger) }); ok {
		s.SetLogger(l)
	}
}

// recordingVersionConn is a recordingConn around a connection that is
// told the negotiated revision.
type recordingVersionConn struct{ *recordingConn }

// SetProtocolVersion passes the revision to the inner connection.
func (c *recordingVersionConn) SetProtocolVersion(v string) {
	c.inner.(mcplink.ProtocolVersionSetter).SetProtocolVersion(v)
}

// Text returns the transcript as text: for each message, a line "-->"
// (sent) or "<--" (received) followed by its method, or "response", then
// the message as indented JSON with sorted members, then a blank line.
//
// What changes from run to run is replaced:
//   - JSON-RPC ids are numbered in order of appearance, those of the
//     requests each side sends on their own (1, 2, ...), so a response
//     carries the number of its request; so do the requestId of
//     notifications/cancelled and the subscription ID in _meta
//     (io.modelcontextprotocol/subscriptionId, the id of the
//     subscriptions/listen request);
//   - the values of the members requestState, taskId, progressToken,
//     sessionId, elicitationId, createdAt, lastUpdatedAt, traceparent,
//     tracestate and of those named in Volatile, at any depth, become
//     "<kind N>" strings, N numbering the distinct values of each kind
//     in order of appearance, so that a value that comes back (a
//     requestState returned, a task polled) is seen to be the same. The
//     kinds are requestState, task, progress, session, elicitation, time,
//     trace, and each name of Volatile as itself.
//
// A message that is not JSON-RPC is written as recorded, and one that
// could not be read as a line "<-- undecodable" and its error.
func (tr *Transcript) Text() string {
	msgs := tr.Messages()
	n := newNormalizer(tr.Volatile)
	var b strings.Builder
	for _, m := range msgs {
		arrow := "<--"
		if m.Sent {
			arrow = "-->"
		}
		head, body := n.message(m)
		if m.Err != "" {
			head, body = "undecodable", m.Err
		}
		b.WriteString(arrow)
		b.WriteString(" ")
		b.WriteString(head)
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n\n")
	}
	return b.String()
}

// normalizer rewrites messages as Transcript.Text describes, keeping the
// numbering across the messages of one transcript.
type normalizer struct {
	ids      [2]map[string]int // by sender (0: received, 1: sent): id key -> number
	listens  map[string]int    // id key of a subscriptions/listen -> its sender
	volatile map[string]string // member name -> kind
	values   map[string]map[string]int
}

// subscriptionKey is the _meta member naming a subscription by the id of
// its subscriptions/listen request.
const subscriptionKey = "io.modelcontextprotocol/subscriptionId"

func newNormalizer(extra []string) *normalizer {
	n := &normalizer{
		ids: [2]map[string]int{{}, {}},
		volatile: map[string]string{
			"requestState":  "requestState",
			"taskId":        "task",
			"progressToken": "progress",
			"sessionId":     "session",
			"elicitationId": "elicitation",
			"createdAt":     "time",
			"lastUpdatedAt": "time",
			"traceparent":   "trace",
			"tracestate":    "trace",
		},
		listens: map[string]int{},
		values:  map[string]map[string]int{},
	}
	for _, name := range extra {
		n.volatile[name] = name
	}
	return n
}

// message returns m's header and its normalised, indented JSON.
func (n *normalizer) message(m Message) (head, body string) {
	dec := json.NewDecoder(bytes.NewReader(m.JSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "unparsable", string(m.JSON)
	}
	sender := 0
	if m.Sent {
		sender = 1
	}
	switch v := v.(type) {
	case map[string]any:
		head = n.envelope(v, sender)
	case []any:
		var heads []string
		for _, e := range v {
			if obj, ok := e.(map[string]any); ok {
				heads = append(heads, n.envelope(obj, sender))
			}
		}
		head = "batch [" + strings.Join(heads, ", ") + "]"
	default:
		head = "not JSON-RPC"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return head, string(m.JSON)
	}
	return head, strings.TrimSuffix(b.String(), "\n")
}

// envelope normalises one JSON-RPC message sent by sender and returns its
// header: the method, or "response".
func (n *normalizer) envelope(m map[string]any, sender int) string {
	method, isCall := m["method"].(string)
	if id, ok := m["id"]; ok && id != nil {
		space := sender // a request's id is its sender's
		if !isCall {
			space = 1 - sender // a response's is its request's
		}
		if method == "subscriptions/listen" {
			n.listens[idKey(id)] = sender
		}
		m["id"] = n.id(space, id)
	}
	if method == "notifications/cancelled" {
		if p, ok := m["params"].(map[string]any); ok {
			if id, ok := p["requestId"]; ok && id != nil {
				p["requestId"] = n.id(sender, id)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "id" {
			m[k] = n.value(m[k])
		}
	}
	if isCall {
		return method
	}
	return "response"
}

// idKey tells ids apart, the string "1" from the number 1.
func idKey(id any) string { return fmt.Sprintf("%T:%v", id, id) }

// id returns the number of a request id in its sender's space.
func (n *normalizer) id(space int, id any) json.Number {
	key := idKey(id)
	num, ok := n.ids[space][key]
	if !ok {
		num = len(n.ids[space]) + 1
		n.ids[space][key] = num
	}
	return json.Number(strconv.Itoa(num))
}

// value returns v with the values of volatile members replaced, at any
// depth.
func (n *normalizer) value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		// In sorted order, as the text shows them, so that placeholders
		// are numbered in the order they appear.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e := v[k]
			if k == subscriptionKey && e != nil {
				if space, ok := n.listens[idKey(e)]; ok {
					v[k] = n.id(space, e)
					continue
				}
				v[k] = n.placeholder("subscription", e)
				continue
			}
			if kind, ok := n.volatile[k]; ok && e != nil {
				v[k] = n.placeholder(kind, e)
				continue
			}
			v[k] = n.value(e)
		}
	case []any:
		for i, e := range v {
			v[i] = n.value(e)
		}
	}
	return v
}

// placeholder returns the placeholder of a volatile value of kind.
func (n *normalizer) placeholder(kind string, v any) string {
	key, _ := json.Marshal(v)
	seen := n.values[kind]
	if seen == nil {
		seen = map[string]int{}
		n.values[kind] = seen
	}
	num, ok := seen[string(key)]
	if !ok {
		num = len(seen) + 1
		seen[string(key)] = num
	}
	return "<" + kind + " " + strconv.Itoa(num) + ">"
}

package mcptest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTranscriptText: what changes from run to run is replaced, ids
// numbered per sender with responses following their requests, equal
// volatile values given equal placeholders, members sorted, nothing
// escaped for HTML.
func TestTranscriptText(t *testing.T) {
	tests := []struct {
		name     string
		volatile []string
		msgs     []Message // Sent, JSON
		want     string
	}{{
		name: "ids per sender",
		msgs: []Message{
			sent(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`),
			recv(`{"jsonrpc":"2.0","id":"srv-x","method":"ping"}`),
			sent(`{"jsonrpc":"2.0","id":"srv-x","result":{}}`),
			sent(`{"jsonrpc":"2.0","id":9,"method":"ping"}`),
			recv(`{"jsonrpc":"2.0","id":9,"result":{}}`),
			recv(`{"jsonrpc":"2.0","id":7,"result":{}}`),
			sent(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`),
			recv(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`),
		},
		want: `--> tools/call
{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{}}
<-- ping
{"id":1,"jsonrpc":"2.0","method":"ping"}
--> response
{"id":1,"jsonrpc":"2.0","result":{}}
--> ping
{"id":2,"jsonrpc":"2.0","method":"ping"}
<-- response
{"id":2,"jsonrpc":"2.0","result":{}}
<-- response
{"id":1,"jsonrpc":"2.0","result":{}}
--> notifications/cancelled
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}
<-- response
{"error":{"code":-32700,"message":"parse error"},"id":null,"jsonrpc":"2.0"}
`,
	}, {
		name:     "volatile members",
		volatile: []string{"cursor"},
		msgs: []Message{
			recv(`{"jsonrpc":"2.0","id":1,"result":{"requestState":"v1.abc.def","task":{"taskId":"t-9","createdAt":"2026-11-26T22:00:00Z","lastUpdatedAt":"2026-11-26T22:00:01Z"},"nextCursor":"c1"}}`),
			// The response's id took number 1 of the client's ids.
			sent(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t-9","_meta":{"progressToken":17},"cursor":"c1","requestState":"v1.xyz.0"}}`),
			sent(`{"jsonrpc":"2.0","method":"x","params":{"requestState":null,"sessionId":"<&>"}}`),
		},
		want: `<-- response
{"id":1,"jsonrpc":"2.0","result":{"nextCursor":"c1","requestState":"<requestState 1>","task":{"createdAt":"<time 1>","lastUpdatedAt":"<time 2>","taskId":"<task 1>"}}}
--> tasks/get
{"id":2,"jsonrpc":"2.0","method":"tasks/get","params":{"_meta":{"progressToken":"<progress 1>"},"cursor":"<cursor 1>","requestState":"<requestState 2>","taskId":"<task 1>"}}
--> x
{"jsonrpc":"2.0","method":"x","params":{"requestState":null,"sessionId":"<session 1>"}}
`,
	}, {
		name: "subscriptions, traces, elicitations",
		msgs: []Message{
			sent(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`),
			sent(`{"jsonrpc":"2.0","id":"mcpkit-listen-1","method":"subscriptions/listen","params":{"_meta":{"traceparent":"00-abc-01","tracestate":"x=1"}}}`),
			recv(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"mcpkit-listen-1"}}}`),
			recv(`{"jsonrpc":"2.0","method":"notifications/other","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"unknown"}}}`),
			recv(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"url","elicitationId":"e-42","_meta":{"traceparent":"00-abc-01"}}}`),
		},
		want: `--> tools/list
{"id":1,"jsonrpc":"2.0","method":"tools/list"}
--> subscriptions/listen
{"id":2,"jsonrpc":"2.0","method":"subscriptions/listen","params":{"_meta":{"traceparent":"<trace 1>","tracestate":"<trace 2>"}}}
<-- notifications/tools/list_changed
{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}
<-- notifications/other
{"jsonrpc":"2.0","method":"notifications/other","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"<subscription 1>"}}}
<-- elicitation/create
{"id":1,"jsonrpc":"2.0","method":"elicitation/create","params":{"_meta":{"traceparent":"<trace 1>"},"elicitationId":"<elicitation 1>","mode":"url"}}
`,
	}, {
		name: "undecodable",
		msgs: []Message{
			{JSON: json.RawMessage("null"), Err: "jsonrpc: invalid message: EOF"},
			recv(`{"jsonrpc":"2.0","method":"ping"}`),
		},
		want: `<-- undecodable
jsonrpc: invalid message: EOF
<-- ping
{"jsonrpc":"2.0","method":"ping"}
`,
	}, {
		name: "batch and not JSON-RPC",
		msgs: []Message{
			sent(`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`),
			recv(`[{"jsonrpc":"2.0","id":"a","result":{"html":"<b>&</b>"}}]`),
			recv(`"unencodable message: x"`),
			recv(`{not json`),
		},
		want: `--> batch [ping, notifications/initialized]
[{"id":1,"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]
<-- batch [response]
[{"id":1,"jsonrpc":"2.0","result":{"html":"<b>&</b>"}}]
<-- not JSON-RPC
"unencodable message: x"
<-- unparsable
{not json
`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Transcript{Volatile: tc.volatile, msgs: tc.msgs}
			if got := compact(t, tr.Text()); got != tc.want {
				t.Errorf("Text() =\n%s\nwant\n%s", got, tc.want)
			}
			if again := compact(t, tr.Text()); again != compact(t, tr.Text()) {
				t.Error("Text() changes from call to call")
			}
		})
	}
}

// sent and recv return a message sent or received.
func sent(s string) Message { return Message{Sent: true, JSON: json.RawMessage(s)} }
func recv(s string) Message { return Message{JSON: json.RawMessage(s)} }

// compact turns the indented JSON of a transcript's text back into one
// line per message, and drops the blank lines, for tables of expected
// texts that fit on a line.
func compact(t *testing.T, text string) string {
	t.Helper()
	var out strings.Builder
	for block := range strings.SplitSeq(strings.TrimSuffix(text, "\n\n"), "\n\n") {
		head, body, _ := strings.Cut(block, "\n")
		out.WriteString(head + "\n")
		var v any
		if json.Unmarshal([]byte(body), &v) != nil {
			out.WriteString(body + "\n")
			continue
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		out.WriteString(b.String())
	}
	return out.String()
}

// TestTextIndented: the text shows each message indented, members sorted
// at every depth, separated by blank lines.
func TestTextIndented(t *testing.T) {
	tr := &Transcript{msgs: []Message{
		sent(`{"method":"ping","jsonrpc":"2.0","id":3,"params":{"b":[1,{"d":1,"c":2}],"a":1.50}}`),
		recv(`{"jsonrpc":"2.0","id":3,"result":{}}`),
	}}
	want := `--> ping
{
  "id": 1,
  "jsonrpc": "2.0",
  "method": "ping",
  "params": {
    "a": 1.50,
    "b": [
      1,
      {
        "c": 2,
        "d": 1
      }
    ]
  }
}

<-- response
{
  "id": 1,
  "jsonrpc": "2.0",
  "result": {}
}

`
	if got := tr.Text(); got != want {
		t.Errorf("Text() =\n%s\nwant\n%s", got, want)
	}
}

// TestDiff: the lines that differ, with two lines of context, under the
// line numbers of each hunk.
func TestDiff(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{"one line", "a\nb\nc\nd\ne\nf\n", "a\nb\nc\nX\ne\nf\n", "@@ want line 2, got line 2\n b\n c\n-d\n+X\n e\n f\n"},
		{"added at the end", "a\nb\n", "a\nb\nc\n", "@@ want line 1, got line 1\n a\n b\n+c\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n1\n2\n3\n4\n5\n6\n7\n9\n", "@@ want line 1, got line 1\n+0\n 1\n 2\n@@ want line 6, got line 7\n 6\n 7\n-8\n 9\n"},
		{"removed", "a\nb\nc\n", "a\nc\n", "@@ want line 1, got line 1\n a\n-b\n c\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := diff(tc.want, tc.got); got != tc.diff {
				t.Errorf("diff =\n%s\nwant\n%s", got, tc.diff)
			}
		})
	}
}

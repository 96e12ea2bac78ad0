package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// onceCounts are the effects of the order tool of onceServer, shared by
// the replicas of a test.
type onceCounts struct {
	reserved atomic.Int64 // in Once, before the first ask
	charged  atomic.Int64 // in Once, between the asks
	mu       sync.Mutex
	rounds   []int // InputRound of each run, in order
	replicas []string
}

func (c *onceCounts) runs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.rounds)
}

type onceConfirm struct {
	OK bool `json:"ok"`
}

// onceServer returns a server named replica with the tool "order": it
// reserves (once), asks for a confirmation, charges (once) and asks
// again.
func onceServer(t *testing.T, replica string, opts *ServerOptions, c *onceCounts) *Server {
	t.Helper()
	// The replicas of one server share its name: a requestState is bound
	// to it.
	s := NewServer(&Implementation{Name: "orders", Version: "1"}, opts)
	must(t, AddTool(s, &Tool{Name: "order"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		c.mu.Lock()
		c.rounds = append(c.rounds, InputRound(ctx))
		c.replicas = append(c.replicas, replica)
		c.mu.Unlock()
		id, err := Once(ctx, "reserve", func(context.Context) (string, error) {
			return fmt.Sprintf("order-%d", c.reserved.Add(1)), nil
		})
		if err != nil {
			return "", err
		}
		first, _, err := ElicitAs[onceConfirm](ctx, req, "Reserve "+id+"?")
		if err != nil {
			return "", err
		}
		receipt, err := Once(ctx, "charge", func(context.Context) (int64, error) {
			return c.charged.Add(1), nil
		})
		if err != nil {
			return "", err
		}
		second, _, err := ElicitAs[onceConfirm](ctx, req, "Charge receipt "+fmt.Sprint(receipt)+"?")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %v %v", id, first.OK, second.OK), nil
	}))
	return s
}

// onceClientOptions returns the options of a client of era (EraAuto finds
// 2026-07-28 with our server) that confirms every ask.
func onceClientOptions(era Era) *ClientOptions {
	return &ClientOptions{Era: era, ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
		return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"ok": true}}, nil
	}}
}

// onceConnect joins a client to s over the transport named tr: "memory",
// "stdio" (a pair of OS pipes) or "http" (Streamable HTTP).
func onceConnect(t *testing.T, tr string, s *Server, c *Client) *ClientSession {
	t.Helper()
	ctx := t.Context()
	var ct, st transport.Transport
	switch tr {
	case "memory":
		ct, st = transport.NewInMemoryTransports()
	case "stdio":
		c2sR, c2sW, err := os.Pipe()
		must(t, err)
		s2cR, s2cW, err := os.Pipe()
		must(t, err)
		t.Cleanup(func() {
			for _, f := range []*os.File{c2sR, c2sW, s2cR, s2cW} {
				f.Close()
			}
		})
		ct = &transport.IOTransport{Reader: s2cR, Writer: c2sW}
		st = &transport.IOTransport{Reader: c2sR, Writer: s2cW}
	case "http":
		h := NewStreamableHTTPHandler(s, nil)
		srv := httptest.NewServer(h)
		t.Cleanup(func() { srv.Close(); h.Close() })
		cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL})
		must(t, err)
		t.Cleanup(func() { cs.Close(); cs.Wait() })
		return cs
	default:
		t.Fatalf("no transport %q", tr)
	}
	ss, err := s.Connect(ctx, st)
	must(t, err)
	cs, err := c.Connect(ctx, ct)
	must(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cs.Wait()
		ss.Wait()
	})
	return cs
}

// TestOnceSideEffectOnce runs a tool with an effect before each of its two
// asks in both eras and over every transport kind: on 2026-07-28 the
// handler runs three times (InputRound 0, 1, 2), in the handshake era
// once, and each effect, done through Once, happens once either way.
func TestOnceSideEffectOnce(t *testing.T) {
	checkGoroutines(t)
	eras := []struct {
		name    string
		era     Era
		version string
		rounds  []int
	}{
		{"handshake", EraHandshake, LatestVersion, []int{0}},
		{"2026-07-28 by default", EraAuto, Version20260728, []int{0, 1, 2}},
	}
	for _, e := range eras {
		for _, tr := range []string{"memory", "stdio", "http"} {
			t.Run(e.name+"/"+tr, func(t *testing.T) {
				var counts onceCounts
				s := onceServer(t, "server", nil, &counts)
				cs := onceConnect(t, tr, s, NewClient(&Implementation{Name: "c", Version: "1"}, onceClientOptions(e.era)))
				if got := cs.ProtocolVersion(); got != e.version {
					t.Fatalf("protocol version %q, want %q", got, e.version)
				}
				res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "order"})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*TextContent).Text; res.IsError || got != "order-1 true true" {
					t.Fatalf("result %q (isError %v)", got, res.IsError)
				}
				if r, c := counts.reserved.Load(), counts.charged.Load(); r != 1 || c != 1 {
					t.Errorf("reserved %d times and charged %d times, want 1 and 1", r, c)
				}
				if got := counts.runs(); !slices.Equal(got, e.rounds) {
					t.Errorf("the handler ran in rounds %v, want %v", got, e.rounds)
				}
			})
		}
	}
}

// roundRobin sends each request to the next of its servers in turn.
type roundRobin struct {
	hosts []string
	next  atomic.Int64
	rt    *http.Transport
	// tamper, if set, rewrites the body of a request.
	tamper func(t *testing.T, body []byte) []byte
	t      *testing.T
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Host = rr.hosts[int(rr.next.Add(1)-1)%len(rr.hosts)]
	r.Host = ""
	if rr.tamper != nil && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = rr.tamper(rr.t, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = nil
	}
	return rr.rt.RoundTrip(r)
}

// replicas serves the order tool from one server per key ring in keys,
// each behind its own HTTP handler, and returns a 2026-07-28 client whose
// requests go to the replicas in turn, the next one to the first.
func replicas(t *testing.T, keys [][][]byte, counts *onceCounts, tamper func(*testing.T, []byte) []byte) *ClientSession {
	t.Helper()
	rr := &roundRobin{rt: &http.Transport{}, tamper: tamper, t: t}
	t.Cleanup(rr.rt.CloseIdleConnections)
	var first string
	for i, ring := range keys {
		s := onceServer(t, fmt.Sprint("replica-", i), &ServerOptions{Keys: mustRing(t, ring...)}, counts)
		h := NewStreamableHTTPHandler(s, nil)
		srv := httptest.NewServer(h)
		t.Cleanup(func() { srv.Close(); h.Close() })
		u, err := url.Parse(srv.URL)
		must(t, err)
		rr.hosts = append(rr.hosts, u.Host)
		if first == "" {
			first = srv.URL
		}
	}
	c := NewClient(&Implementation{Name: "c", Version: "1"}, onceClientOptions(EraAuto))
	cs, err := c.Connect(t.Context(), &transport.StreamableClientTransport{URL: first, HTTPClient: &http.Client{Transport: rr}})
	must(t, err)
	t.Cleanup(func() { cs.Close(); cs.Wait() })
	rr.next.Store(0) // the next request goes to the first replica
	if cs.ProtocolVersion() != Version20260728 {
		t.Fatalf("protocol version %q", cs.ProtocolVersion())
	}
	return cs
}

// TestOnceAcrossReplicas sends each round of a call to the next of two or
// three servers that share the key ring (round 1 on A, its retries on B
// and C): the effects still happen once, and the runs move from replica
// to replica. A key rotated mid-flow (the new key first, the old one
// still in the ring) verifies until it is removed. Replicas with
// different keys refuse each other's state (the control: the rounds did
// cross).
func TestOnceAcrossReplicas(t *testing.T) {
	checkGoroutines(t)
	newKey, oldKey := []byte("new-key-0123456789abcdef0123456789"), []byte("old-key-0123456789abcdef0123456789")
	shared := [][]byte{newKey, oldKey}
	tests := []struct {
		name string
		keys [][][]byte
		fail string // the error of the call, "" for success
	}{
		{"shared key ring", [][][]byte{shared, shared}, ""},
		{"key rotation under way", [][][]byte{shared, {shared[1], shared[0]}}, ""},
		{"different keys", [][][]byte{{[]byte("key-a-0123456789abcdef0123456789")}, {[]byte("key-b-0123456789abcdef0123456789")}}, "does not hold"},
		{"three replicas, one ring", [][][]byte{shared, shared, shared}, ""},
		{"rotated mid-flow", [][][]byte{{oldKey}, {newKey, oldKey}, {newKey, oldKey}}, ""},
		{"rotated mid-flow, old key removed after its last use", [][][]byte{{oldKey}, {newKey, oldKey}, {newKey}}, ""},
		{"old key removed too soon", [][][]byte{{oldKey}, {newKey}, {newKey}}, "does not hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var counts onceCounts
			cs := replicas(t, tt.keys, &counts, nil)
			res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "order"})
			if tt.fail != "" {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tt.fail) {
					t.Fatalf("call: %v, want -32602 %q", err, tt.fail)
				}
				if r := counts.reserved.Load(); r != 1 {
					t.Errorf("reserved %d times, want 1", r)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*TextContent).Text; got != "order-1 true true" {
				t.Fatalf("result %q", got)
			}
			if r, c := counts.reserved.Load(), counts.charged.Load(); r != 1 || c != 1 {
				t.Errorf("reserved %d times and charged %d times, want 1 and 1", r, c)
			}
			counts.mu.Lock()
			defer counts.mu.Unlock()
			if !slices.Equal(counts.rounds, []int{0, 1, 2}) || counts.replicas[0] == counts.replicas[1] || counts.replicas[1] == counts.replicas[2] {
				t.Errorf("runs in rounds %v on %v, want 0, 1, 2 alternating", counts.rounds, counts.replicas)
			}
			if len(tt.keys) == 3 && counts.replicas[0] == counts.replicas[2] {
				t.Errorf("runs on %v, want one per replica", counts.replicas)
			}
		})
	}
}

// TestOnceTamperedState alters the sealed steps of the requestState the
// client sends back: the server refuses the retry (-32602), and the
// effect is not done again. The recorded result is not readable in the
// state either.
func TestOnceTamperedState(t *testing.T) {
	checkGoroutines(t)
	ring := [][]byte{[]byte("key-0123456789abcdef0123456789ab")}
	var counts onceCounts
	var tampered atomic.Int64
	cs := replicas(t, [][][]byte{ring}, &counts, func(t *testing.T, body []byte) []byte {
		var msg struct {
			JSONRPC string                     `json:"jsonrpc"`
			ID      json.RawMessage            `json:"id"`
			Method  string                     `json:"method"`
			Params  map[string]json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Params["requestState"] == nil {
			return body
		}
		var state string
		must(t, json.Unmarshal(msg.Params["requestState"], &state))
		parts := strings.Split(state, ".") // v2, kid, payload, MAC
		payload, err := base64.RawURLEncoding.DecodeString(parts[2])
		must(t, err)
		if bytes.Contains(payload, []byte("order-1")) {
			t.Errorf("the recorded result is readable in the state: %s", payload)
		}
		var st map[string]any
		must(t, json.Unmarshal(payload, &st))
		s, ok := st["s"].(string)
		if !ok {
			t.Errorf("no sealed steps in the state: %s", payload)
			return body
		}
		sealed, err := base64.StdEncoding.DecodeString(s)
		must(t, err)
		sealed[len(sealed)/2] ^= 1
		st["s"] = base64.StdEncoding.EncodeToString(sealed)
		payload, err = json.Marshal(st)
		must(t, err)
		parts[2] = base64.RawURLEncoding.EncodeToString(payload)
		msg.Params["requestState"], _ = json.Marshal(strings.Join(parts, "."))
		tampered.Add(1)
		out, err := json.Marshal(msg)
		must(t, err)
		return out
	})
	_, err := cs.CallTool(t.Context(), &CallToolParams{Name: "order"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "failed verification") {
		t.Fatalf("call with an altered step: %v, want -32602", err)
	}
	if tampered.Load() != 1 {
		t.Fatalf("%d retries altered, want 1", tampered.Load())
	}
	if r := counts.reserved.Load(); r != 1 {
		t.Errorf("reserved %d times, want 1", r)
	}
}

// TestOnceSealedSteps checks the sealing of steps under the signing key:
// they open under any key of a rotation that signed them, and not once
// altered (even in a state signed again, which only a holder of the key
// could do), nor under another key.
func TestOnceSealedSteps(t *testing.T) {
	oldKey, newKey := []byte("old-key-0123456789abcdef0123456789"), []byte("new-key-0123456789abcdef0123456789")
	before := testSigner(t, "s", oldKey)
	after := testSigner(t, "s", newKey, oldKey)
	plain := []byte(`{"reserve":"order-1"}`)
	sealed, err := before.sealSteps(plain)
	must(t, err)
	if bytes.Contains(sealed, []byte("order-1")) {
		t.Fatal("the steps are not sealed")
	}
	signed, err := before.sign(&requestState{Expires: 1 << 40, Steps: sealed})
	must(t, err)
	st, err := after.verify(signed, time.Now())
	must(t, err)
	steps, err := openSteps(st.key, st.Steps)
	if err != nil || string(steps["reserve"]) != `"order-1"` {
		t.Fatalf("opened after rotation: %v, %v", steps, err)
	}
	altered := slices.Clone(sealed)
	altered[len(altered)-1] ^= 1
	if _, err := openSteps(before.ring.signer(), altered); err == nil {
		t.Error("altered steps opened")
	}
	if _, err := openSteps(after.ring.signer(), sealed); err == nil {
		t.Error("steps opened under another key")
	}
}

// TestOnceSemantics checks Once within one run, in both eras and without
// input rounds: a name recorded returns its result without running fn
// again, an error is not recorded, and the bounds on the steps of a
// request are the same in both eras.
func TestOnceSemantics(t *testing.T) {
	checkGoroutines(t)
	for _, era := range []Era{EraHandshake, EraAuto} {
		t.Run(fmt.Sprint(era), func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			var calls atomic.Int64
			count := func(v string) func(context.Context) (string, error) {
				return func(context.Context) (string, error) { calls.Add(1); return v, nil }
			}
			tool := func(name string, h func(ctx context.Context) (string, error)) {
				must(t, AddTool(s, &Tool{Name: name}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (string, error) {
					return h(ctx)
				}))
			}
			tool("repeat", func(ctx context.Context) (string, error) {
				a, err1 := Once(ctx, "x", count("first"))
				b, err2 := Once(ctx, "x", count("second"))
				return fmt.Sprintf("%v %v %v %v", a, b, err1, err2), nil
			})
			tool("failed", func(ctx context.Context) (string, error) {
				_, err := Once(ctx, "x", func(context.Context) (string, error) { calls.Add(1); return "", io.ErrUnexpectedEOF })
				v, err2 := Once(ctx, "x", count("again"))
				return fmt.Sprintf("%v %v %v", errors.Is(err, io.ErrUnexpectedEOF), v, err2), nil
			})
			tool("concurrent", func(ctx context.Context) (string, error) {
				var wg sync.WaitGroup
				got := make([]string, 8)
				for i := range got {
					wg.Go(func() { got[i], _ = Once(ctx, "x", count("shared")) })
				}
				wg.Wait()
				return strings.Join(slices.Compact(got), ","), nil
			})
			tool("many", func(ctx context.Context) (string, error) {
				var err error
				for i := 0; err == nil; i++ {
					_, err = Once(ctx, fmt.Sprint("step-", i), count("v"))
				}
				return fmt.Sprint(errors.Is(err, ErrOnceLimit)), nil
			})
			tool("large", func(ctx context.Context) (string, error) {
				_, err := Once(ctx, "big", count(strings.Repeat("a", maxOnceBytes)))
				return fmt.Sprint(errors.Is(err, ErrOnceLimit)), nil
			})
			tool("unnamed", func(ctx context.Context) (string, error) {
				_, err := Once(ctx, "", count("v"))
				return fmt.Sprint(err != nil), nil
			})
			cs := onceConnect(t, "memory", s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: era}))
			tests := []struct {
				tool  string
				want  string
				calls int64
			}{
				{"repeat", "first first <nil> <nil>", 1},
				{"failed", "true again <nil>", 2},
				{"concurrent", "shared", 1},
				{"many", "true", maxOnceSteps},
				{"large", "true", 1},
				{"unnamed", "true", 0},
			}
			for _, tt := range tests {
				calls.Store(0)
				res, err := cs.CallTool(t.Context(), &CallToolParams{Name: tt.tool})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*TextContent).Text; got != tt.want || calls.Load() != tt.calls {
					t.Errorf("%s: %s with %d calls of fn, want %q with %d", tt.tool, got, calls.Load(), tt.want, tt.calls)
				}
			}
		})
	}
}

// TestOnceAcrossRounds checks Once over input rounds: steps recorded to
// the full bounds (64 steps, 256 KiB) fit in the request state and are
// not run again, a step that failed runs again in the next round, and a
// recorded result that does not decode into the T of the next round is an
// error rather than a reason to run the step again.
func TestOnceAcrossRounds(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	var calls atomic.Int64
	must(t, AddTool(s, &Tool{Name: "flaky"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		v, err := Once(ctx, "flaky", func(context.Context) (string, error) {
			if calls.Add(1) == 1 {
				return "", errors.New("not this time")
			}
			return "done", nil
		})
		for _, q := range []string{"one", "two"} {
			if _, _, err := ElicitAs[onceConfirm](ctx, req, q); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%v %v", v, err), nil
	}))
	must(t, AddTool(s, &Tool{Name: "changed"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		if InputRound(ctx) == 0 {
			if _, err := Once(ctx, "x", func(context.Context) (string, error) { return "text", nil }); err != nil {
				return "", err
			}
		} else if _, err := Once(ctx, "x", func(context.Context) (int, error) { calls.Add(1); return 1, nil }); err != nil {
			return "", err
		}
		_, _, err := ElicitAs[onceConfirm](ctx, req, "ok?")
		return "", err
	}))
	must(t, AddTool(s, &Tool{Name: "big"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		// As much as the bounds allow, in many steps and one.
		var n int
		for i := range maxOnceSteps - 1 {
			v, err := Once(ctx, fmt.Sprint("s", i), func(context.Context) ([]byte, error) {
				calls.Add(1)
				return bytes.Repeat([]byte{0xff}, 2000), nil // 2,668 bytes of JSON
			})
			if err != nil {
				return "", err
			}
			n += len(v)
		}
		st := stepsFrom(ctx)
		st.mu.Lock()
		room := maxOnceBytes - st.size - len("last") - len(`""`)
		st.mu.Unlock()
		v, err := Once(ctx, "last", func(context.Context) (string, error) {
			calls.Add(1)
			return strings.Repeat("a", room), nil // to the byte
		})
		if err != nil {
			return "", err
		}
		if _, _, err := ElicitAs[onceConfirm](ctx, req, "ok?"); err != nil {
			return "", err
		}
		if st.size != maxOnceBytes {
			return "", fmt.Errorf("recorded %d bytes, want %d", st.size, maxOnceBytes)
		}
		return fmt.Sprint(n + len(v)), nil
	}))
	cs := onceConnect(t, "memory", s, NewClient(&Implementation{Name: "c", Version: "1"}, onceClientOptions(EraAuto)))
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || calls.Load() != maxOnceSteps {
		t.Fatalf("big: %v (isError %v) after %d calls, want %d", res.Content, res.IsError, calls.Load(), maxOnceSteps)
	}
	calls.Store(0)
	res, err = cs.CallTool(t.Context(), &CallToolParams{Name: "flaky"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*TextContent).Text; got != "done <nil>" || calls.Load() != 2 {
		t.Errorf("flaky: %s after %d calls, want done after 2", got, calls.Load())
	}
	calls.Store(0)
	res, err = cs.CallTool(t.Context(), &CallToolParams{Name: "changed"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*TextContent).Text; !res.IsError || !strings.Contains(got, "decoding its recorded result into int") || calls.Load() != 0 {
		t.Errorf("changed: %s (isError %v) after %d calls, want the decoding error and none", got, res.IsError, calls.Load())
	}
}

//go:build !mcpkit_nohttp

package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// ModernReplicas checks, end to end, replicas that serve the stateless
// era (2026-07-28) as one server: three Streamable HTTP handlers of three
// mcp.Servers behind a round-robin reverse proxy on 127.0.0.1, sharing a
// key ring and the Bus and StateClaimer that newBus and newClaimer make
// (a nil function, or one that returns nil, leaves that part out and its
// scenario is skipped), with an mcp.Client of 2026-07-28:
//
//   - Lists: each replica gives the same bytes for every page of
//     tools/list (ttlMs and cacheScope included), and a cursor one
//     replica made pages on another.
//   - InputRounds: a tool asking two questions answers after its rounds
//     ran on different replicas.
//   - Rotation: a request state made before a key rotation verifies on
//     replicas that rotated, until the old key is dropped; a ring that
//     never held the key refuses it.
//   - Listen: a subscriptions/listen stream held by one replica hears the
//     tool list change made on another (needs the bus).
//   - PlainCalls: tools/list and tools/call make no call of the bus or the
//     claimer.
//   - SingleUse: a request state is accepted once over all replicas
//     (needs the claimer).
//
// No goroutine outlives a scenario.
func ModernReplicas(t *testing.T, newBus func(t *testing.T) mcp.Bus, newClaimer func(t *testing.T) mcp.StateClaimer) {
	bus := func(t *testing.T) mcp.Bus {
		if newBus == nil {
			return nil
		}
		return newBus(t)
	}
	claimer := func(t *testing.T) mcp.StateClaimer {
		if newClaimer == nil {
			return nil
		}
		return newClaimer(t)
	}
	t.Run("Lists", func(t *testing.T) { modernLists(t, bus(t)) })
	t.Run("InputRounds", func(t *testing.T) { modernInputRounds(t, bus(t), claimer(t)) })
	t.Run("Rotation", func(t *testing.T) { modernRotation(t) })
	t.Run("Listen", func(t *testing.T) {
		b := bus(t)
		if b == nil {
			t.Skip("no bus")
		}
		modernListen(t, b)
	})
	t.Run("PlainCalls", func(t *testing.T) { modernPlainCalls(t, bus(t), claimer(t)) })
	t.Run("SingleUse", func(t *testing.T) {
		c := claimer(t)
		if c == nil {
			t.Skip("no state claimer")
		}
		modernSingleUse(t, c)
	})
}

// modernFleet is three replicas of one 2026-07-28 server behind a
// round-robin proxy. Each slot's server can be replaced (a replica
// restarted with another key ring) while the fleet serves.
type modernFleet struct {
	t       *testing.T
	bus     mcp.Bus
	claimer mcp.StateClaimer
	tools   int // plain tools each server has

	mu      sync.Mutex
	servers [3]*mcp.Server
	slots   [3]atomic.Pointer[transport.StreamableHTTPHandler]
	direct  [3]*httptest.Server // each replica without the proxy
	proxy   *httptest.Server

	hits   [3]atomic.Int32
	listen atomic.Int32 // 1 + the slot that took the last subscriptions/listen
}

// modernAskOut is what the "ask" tool returns.
type modernAskOut struct {
	Answer string `json:"answer"`
}

// newModernFleet starts three replicas, slot i with rings[i].
func newModernFleet(t *testing.T, rings [3]*mcp.KeyRing, bus mcp.Bus, claimer mcp.StateClaimer) *modernFleet {
	t.Helper()
	f := &modernFleet{t: t, bus: bus, claimer: claimer, tools: 5}
	var urls []*url.URL
	for i := range 3 {
		f.replace(i, rings[i])
		f.direct[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f.hits[i].Add(1)
			if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
				f.listen.Store(int32(i) + 1)
			}
			f.slots[i].Load().ServeHTTP(w, r)
		}))
		u, _ := url.Parse(f.direct[i].URL)
		urls = append(urls, u)
	}
	f.proxy = roundRobinProxy(urls, nil)
	t.Cleanup(func() {
		f.proxy.Close()
		for i := range 3 {
			f.slots[i].Load().Close()
			f.direct[i].Close()
			f.mu.Lock()
			f.servers[i].Close()
			f.mu.Unlock()
		}
	})
	return f
}

// newServer returns a replica's server with ring.
func (f *modernFleet) newServer(ring *mcp.KeyRing) *mcp.Server {
	f.t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "modern-replica", Version: "1"}, &mcp.ServerOptions{
		Keys: ring, Bus: f.bus, StateClaimer: f.claimer, PageSize: 2,
	})
	for k := range f.tools {
		err := s.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", k), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		if err != nil {
			f.t.Fatal(err)
		}
	}
	schema := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}},"required":["v"]}`)
	err := mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (modernAskOut, error) {
		var answers []string
		for _, q := range []string{"first", "second"} {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: q, RequestedSchema: schema})
			if err != nil {
				return modernAskOut{}, err
			}
			answers = append(answers, fmt.Sprint(res.Content["v"]))
		}
		return modernAskOut{Answer: strings.Join(answers, "/")}, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// replace serves slot i with a new server holding ring, closing the
// server it had.
func (f *modernFleet) replace(i int, ring *mcp.KeyRing) {
	s := f.newServer(ring)
	h := mcp.NewStreamableHTTPHandler(s, nil)
	f.mu.Lock()
	old := f.servers[i]
	f.servers[i] = s
	f.mu.Unlock()
	if oldH := f.slots[i].Swap(h); oldH != nil {
		oldH.Close()
	}
	if old != nil {
		old.Close()
	}
}

// client connects a 2026-07-28 client through the proxy, closed at the
// end of the scenario; answer answers its elicitations.
func (f *modernFleet) client(ctx context.Context, answer func(question string) string) *mcp.ClientSession {
	f.t.Helper()
	opts := &mcp.ClientOptions{Era: mcp.EraModern}
	if answer != nil {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"v": answer(req.Params.Message)}}, nil
		}
	}
	return f.clientWith(ctx, opts)
}

func (f *modernFleet) clientWith(ctx context.Context, opts *mcp.ClientOptions) *mcp.ClientSession {
	f.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: f.proxy.URL})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cs.Close() })
	if v := cs.ProtocolVersion(); v != mcp.Version20260728 {
		f.t.Fatalf("the client speaks %s, want %s", v, mcp.Version20260728)
	}
	return cs
}

// rawPost sends a 2026-07-28 request for method with params to url and
// returns its JSON-RPC response. A tools/call names the tool "ask" (the
// Mcp-Name header mirrors it).
func rawPost(t *testing.T, url, method string, id int, params string) []byte {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = strings.TrimSuffix(params, "}") + "," + meta + "}"
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", method)
	if method == "tools/call" {
		req.Header.Set("Mcp-Name", "ask")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s: %s", method, resp.Status, data)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The answer is the last event's data.
		var last []byte
		for line := range bytes.Lines(data) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				last = bytes.TrimSpace(d)
			}
		}
		data = last
	}
	return data
}

func modernLists(t *testing.T, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		f := newModernFleet(t, sameRing(), bus, nil)
		// Every page, asked of each replica, is the same text, cursors,
		// ttlMs and cacheScope included.
		cursor := ""
		pages := 0
		for {
			params := ""
			if cursor != "" {
				params = fmt.Sprintf(`{"cursor":%q}`, cursor)
			}
			var first []byte
			for i := range 3 {
				got := rawPost(t, f.direct[i].URL, "tools/list", 1, params)
				if first == nil {
					first = got
				} else if !bytes.Equal(got, first) {
					t.Fatalf("page %d: replica %d answered\n%s\nreplica 0\n%s", pages, i, got, first)
				}
			}
			var page struct {
				Result struct {
					Tools      []json.RawMessage `json:"tools"`
					NextCursor string            `json:"nextCursor"`
					TTLMs      *int64            `json:"ttlMs"`
				} `json:"result"`
			}
			if err := json.Unmarshal(first, &page); err != nil {
				t.Fatal(err)
			}
			if page.Result.TTLMs == nil {
				t.Errorf("page %d has no ttlMs: %s", pages, first)
			}
			pages++
			if cursor = page.Result.NextCursor; cursor == "" {
				break
			}
			if pages > 10 {
				t.Fatal("the pages never end")
			}
		}
		if want := (f.tools + 1 + 1) / 2; pages != want { // the plain tools and "ask", two a page
			t.Errorf("%d pages, want %d", pages, want)
		}
		// The client pages through the proxy: each page from another
		// replica, with the cursor the one before made.
		cs := f.client(ctx, nil)
		before := f.totalHits()
		n := 0
		for tool, err := range cs.Tools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == "" {
				t.Error("a tool without a name")
			}
			n++
		}
		if n != f.tools+1 {
			t.Errorf("the client listed %d tools, want %d", n, f.tools+1)
		}
		if served := f.totalHits() - before; served < int32(pages) {
			t.Errorf("%d requests for %d pages", served, pages)
		}
	})
}

func (f *modernFleet) totalHits() int32 {
	return f.hits[0].Load() + f.hits[1].Load() + f.hits[2].Load()
}

func modernInputRounds(t *testing.T, bus mcp.Bus, claimer mcp.StateClaimer) {
	CheckGoroutines(t, func(ctx context.Context) {
		f := newModernFleet(t, sameRing(), bus, claimer)
		cs := f.client(ctx, func(q string) string { return q + "!" })
		for range 3 { // each call's three requests start on another replica
			var before [3]int32
			for i := range 3 {
				before[i] = f.hits[i].Load()
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			var out modernAskOut
			if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Answer != "first!/second!" {
				t.Fatalf("ask = %s (%v), want first!/second!", res.StructuredContent, err)
			}
			served := 0
			for i := range 3 {
				if f.hits[i].Load() > before[i] {
					served++
				}
			}
			if served < 2 {
				t.Errorf("the rounds of one call ran on %d replica(s), want several", served)
			}
		}
	})
}

// sameRing returns one random ring for the three slots.
func sameRing() [3]*mcp.KeyRing {
	r := mcp.NewRandomKeyRing()
	return [3]*mcp.KeyRing{r, r, r}
}

// keyRing returns the ring of keys, failing t on an error.
func keyRing(t *testing.T, keys ...[]byte) *mcp.KeyRing {
	t.Helper()
	r, err := mcp.NewKeyRing(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// firstRound asks "ask" of url and returns its input_required result's
// requestState.
func firstRound(t *testing.T, url string) string {
	t.Helper()
	var res struct {
		Result struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	data := rawPost(t, url, "tools/call", 7, `{"name":"ask","arguments":{}}`)
	if err := json.Unmarshal(data, &res); err != nil || res.Result.ResultType != "input_required" || res.Result.RequestState == "" {
		t.Fatalf("ask: %s (%v), want an input_required result with a requestState", data, err)
	}
	return res.Result.RequestState
}

func modernRotation(t *testing.T) {
	CheckGoroutines(t, func(ctx context.Context) {
		k1 := bytes.Repeat([]byte{1}, mcp.MinKeyBytes)
		k2 := bytes.Repeat([]byte{2}, mcp.MinKeyBytes)
		old := keyRing(t, k1)
		f := newModernFleet(t, [3]*mcp.KeyRing{old, old, old}, nil, nil)
		key := learnFirstKey(t, f.direct[0].URL)

		// A state made with k1, before the rotation.
		state := firstRound(t, f.direct[0].URL)
		// Step 1: k2 added second everywhere. Step 2: k2 first.
		for _, ring := range []*mcp.KeyRing{keyRing(t, k1, k2), keyRing(t, k2, k1)} {
			for i := range 3 {
				f.replace(i, ring)
			}
			for i := range 3 {
				if ok, body := retryRoundKey(t, f.direct[i].URL, state, key); !ok {
					t.Fatalf("ring %v, replica %d refused a state of k1: %s", ring, i, body)
				}
			}
		}
		// A state made by a replica signing with k2 verifies on the others.
		state2 := firstRound(t, f.direct[1].URL)
		for i := range 3 {
			if ok, body := retryRoundKey(t, f.direct[i].URL, state2, key); !ok {
				t.Fatalf("replica %d refused a state of k2: %s", i, body)
			}
		}
		// Step 3: k1 dropped: its states are refused, k2's still verify.
		for i := range 3 {
			f.replace(i, keyRing(t, k2))
		}
		for i := range 3 {
			if ok, _ := retryRoundKey(t, f.direct[i].URL, state, key); ok {
				t.Fatalf("replica %d took a state of k1 after k1 was dropped", i)
			}
			if ok, body := retryRoundKey(t, f.direct[i].URL, state2, key); !ok {
				t.Fatalf("replica %d refused a state of k2: %s", i, body)
			}
		}
		// Another ring's state is refused.
		other := newModernFleet(t, sameRing(), nil, nil)
		foreign := firstRound(t, other.direct[0].URL)
		for i := range 3 {
			if ok, _ := retryRoundKey(t, f.direct[i].URL, foreign, key); ok {
				t.Fatalf("replica %d took another ring's state", i)
			}
		}
	})
}

// learnFirstKey returns the inputRequests key of the first question of
// "ask" on url.
func learnFirstKey(t *testing.T, url string) string {
	t.Helper()
	data := rawPost(t, url, "tools/call", 6, `{"name":"ask","arguments":{}}`)
	var res struct {
		Result struct {
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &res); err != nil || len(res.Result.InputRequests) != 1 {
		t.Fatalf("ask: %s (%v), want one input request", data, err)
	}
	for k := range res.Result.InputRequests {
		return k
	}
	return ""
}

// retryRoundKey is retryRound answering the question named key.
func retryRoundKey(t *testing.T, url, state, key string) (bool, []byte) {
	t.Helper()
	params := fmt.Sprintf(`{"name":"ask","arguments":{},"requestState":%q,"inputResponses":{%q:{"action":"accept","content":{"v":"x"}}}}`, state, key)
	data := rawPost(t, url, "tools/call", 8, params)
	var res struct {
		Result *struct {
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	return res.Result != nil && res.Result.ResultType == "input_required", data
}

func modernListen(t *testing.T, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		f := newModernFleet(t, sameRing(), bus, nil)
		changed := make(chan struct{}, 10)
		cs := f.clientWith(ctx, &mcp.ClientOptions{
			Era: mcp.EraModern,
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedNotification) {
				changed <- struct{}{}
			},
		})
		sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		holder := int(f.listen.Load()) - 1
		if holder < 0 {
			t.Fatal("no replica took the listen stream")
		}
		// The change is made on another replica only.
		other := (holder + 1) % 3
		f.mu.Lock()
		s := f.servers[other]
		f.mu.Unlock()
		err = s.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("the listen stream on replica %d did not hear the change made on replica %d", holder, other)
		}
	})
}

// countingBus counts the messages published on a Bus but the list
// changes (`"k":"list"`, see docs/SCALING.md), which the tools each
// replica registers at its start publish, whenever they go out.
type countingBus struct {
	mcp.Bus
	n atomic.Int64
}

func (b *countingBus) Publish(ctx context.Context, msg []byte) error {
	if !bytes.Contains(msg, []byte(`"k":"list"`)) {
		b.n.Add(1)
	}
	return b.Bus.Publish(ctx, msg)
}

// countingClaimer counts the calls of a StateClaimer.
type countingClaimer struct {
	mcp.StateClaimer
	n atomic.Int64
}

func (c *countingClaimer) Claim(ctx context.Context, id string, until time.Time) (bool, error) {
	c.n.Add(1)
	return c.StateClaimer.Claim(ctx, id, until)
}

func modernPlainCalls(t *testing.T, bus mcp.Bus, claimer mcp.StateClaimer) {
	CheckGoroutines(t, func(ctx context.Context) {
		var cb *countingBus
		var cc *countingClaimer
		var b mcp.Bus
		var c mcp.StateClaimer
		if bus != nil {
			cb = &countingBus{Bus: bus}
			b = cb
		}
		if claimer != nil {
			cc = &countingClaimer{StateClaimer: claimer}
			c = cc
		}
		f := newModernFleet(t, sameRing(), b, c)
		cs := f.client(ctx, nil)
		for range 30 {
			if _, err := cs.ListTools(mcp.WithoutCache(ctx), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t0"}); err != nil {
				t.Fatal(err)
			}
		}
		if cb != nil && cb.n.Load() != 0 {
			t.Errorf("plain requests published %d bus messages", cb.n.Load())
		}
		if cc != nil && cc.n.Load() != 0 {
			t.Errorf("plain requests claimed %d states", cc.n.Load())
		}
	})
}

func modernSingleUse(t *testing.T, claimer mcp.StateClaimer) {
	CheckGoroutines(t, func(ctx context.Context) {
		f := newModernFleet(t, sameRing(), nil, claimer)
		key := learnFirstKey(t, f.direct[0].URL)
		state := firstRound(t, f.direct[0].URL)
		if ok, body := retryRoundKey(t, f.direct[1].URL, state, key); !ok {
			t.Fatalf("the first retry was refused: %s", body)
		}
		for _, i := range []int{2, 0, 1} {
			if ok, _ := retryRoundKey(t, f.direct[i].URL, state, key); ok {
				t.Fatalf("replica %d took a request state used already", i)
			}
		}
	})
}

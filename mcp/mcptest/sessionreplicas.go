//go:build !mcpkit_nohttp

package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// replicas are three Streamable HTTP handlers of three servers sharing a
// key ring and a session store, behind a round-robin reverse proxy.
type replicas struct {
	handlers []*transport.StreamableHTTPHandler
	servers  []*httptest.Server
	proxy    *httptest.Server
	hits     [3]atomic.Int32 // requests each replica served
}

// logOut is what the "log" tool returns: the replica that ran it.
type logOut struct {
	Replica int `json:"replica"`
}

// newReplicas starts three replicas on store with opts; each has a tool
// "log" that logs an info then an error message tagged with its call
// number.
func newReplicas(t *testing.T, store transport.SessionStore, opts transport.StreamableHTTPOptions) *replicas {
	t.Helper()
	ring := mcp.NewRandomKeyRing()
	rs := &replicas{}
	var urls []*url.URL
	for i := range 3 {
		s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring})
		type in struct {
			N int `json:"n"`
		}
		err := mcp.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (logOut, error) {
			for _, l := range []mcp.LoggingLevel{mcp.LoggingLevelInfo, mcp.LoggingLevelError} {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Data: in.N}); err != nil {
					return logOut{}, err
				}
			}
			return logOut{Replica: i}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.SessionStore = store
		h := mcp.NewStreamableHTTPHandler(s, &o)
		rs.handlers = append(rs.handlers, h)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rs.hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		rs.servers = append(rs.servers, srv)
		u, _ := url.Parse(srv.URL)
		urls = append(urls, u)
	}
	rs.proxy = roundRobinProxy(urls, nil)
	t.Cleanup(func() {
		rs.proxy.Close()
		for i, h := range rs.handlers {
			h.Close()
			rs.servers[i].Close()
		}
	})
	return rs
}

// post sends a JSON-RPC message to url, naming session sid if not "",
// and returns the status (0 when the request failed, reported on t).
func post(t *testing.T, url, sid, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// SessionStoreReplicas checks a [transport.SessionStore] end to end:
// three Streamable HTTP handlers of three mcp.Servers sharing a key ring
// and a store that newStore makes, behind a round-robin reverse proxy on
// 127.0.0.1, with an mcp.Client of the handshake era. Initialize lands on
// one replica, and the requests that follow on the others, which restore
// the session from the store; a log level set on one replica holds on the
// others; after DELETE (the client's Close) every replica answers 404;
// with MaxSessions 10, 40 initializes at once admit exactly 10. No
// goroutine outlives a scenario.
func SessionStoreReplicas(t *testing.T, newStore func(t *testing.T) transport.SessionStore) {
	t.Run("Session", func(t *testing.T) { replicasSession(t, newStore(t)) })
	t.Run("Admission", func(t *testing.T) { replicasAdmission(t, newStore(t)) })
}

func replicasSession(t *testing.T, store transport.SessionStore) {
	CheckGoroutines(t, func(ctx context.Context) {
		rs := newReplicas(t, store, transport.StreamableHTTPOptions{SessionRecheck: -1})
		var (
			mu   sync.Mutex
			logs []string // "<level> <n>"
			got  = make(chan struct{}, 100)
		)
		c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
			Era: mcp.EraHandshake,
			LoggingMessageHandler: func(_ context.Context, n *mcp.LoggingMessageNotification) {
				mu.Lock()
				logs = append(logs, fmt.Sprint(n.Params.Level, " ", n.Params.Data))
				mu.Unlock()
				if n.Params.Level == mcp.LoggingLevelError {
					got <- struct{}{}
				}
			},
		})
		cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: rs.proxy.URL, DisableStandaloneStream: true})
		if err != nil {
			t.Fatal(err)
		}
		sid := cs.ID()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		ran := map[int]bool{}
		call := func(n int) {
			t.Helper()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "log", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))})
			if err != nil || res.IsError {
				t.Fatalf("call %d: %v %+v", n, err, res)
			}
			var out logOut
			if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
				t.Fatal(err)
			}
			ran[out.Replica] = true
			select {
			case <-got: // the error message, which follows the info one
			case <-ctx.Done():
				t.Fatal("no log message")
			}
		}
		for n := range 3 {
			call(n)
		}
		if len(ran) != 3 {
			t.Fatalf("the tool ran on replicas %v, want all three", ran)
		}
		if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevelError); err != nil {
			t.Fatal(err)
		}
		for n := 3; n < 6; n++ {
			call(n)
		}
		mu.Lock()
		want := []string{"info 0", "error 0", "info 1", "error 1", "info 2", "error 2", "error 3", "error 4", "error 5"}
		if !slices.Equal(logs, want) {
			t.Errorf("log messages %q, want %q", logs, want)
		}
		mu.Unlock()
		for i, h := range rs.handlers {
			if !slices.Contains(h.SessionIDs(), sid) {
				t.Errorf("replica %d does not hold the session", i)
			}
		}
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		for i, srv := range rs.servers {
			if st := post(t, srv.URL, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); st != http.StatusNotFound {
				t.Errorf("replica %d after DELETE: status %d, want 404", i, st)
			}
		}
	})
}

// replicasAdmission sends 40 initializes at once to three replicas
// sharing store with MaxSessions 10: exactly 10 are admitted.
func replicasAdmission(t *testing.T, store transport.SessionStore) {
	CheckGoroutines(t, func(ctx context.Context) {
		rs := newReplicas(t, store, transport.StreamableHTTPOptions{MaxSessions: 10})
		var (
			wg             sync.WaitGroup
			admitted, busy atomic.Int32
		)
		for range 40 {
			wg.Go(func() {
				switch st := post(t, rs.proxy.URL, "", initializeBody); st {
				case http.StatusOK:
					admitted.Add(1)
				case http.StatusServiceUnavailable:
					busy.Add(1)
				default:
					t.Errorf("status %d", st)
				}
			})
		}
		wg.Wait()
		if admitted.Load() != 10 || busy.Load() != 30 {
			t.Errorf("admitted %d, refused %d; want 10 and 30", admitted.Load(), busy.Load())
		}
		for i := range rs.hits {
			if rs.hits[i].Load() == 0 {
				t.Errorf("replica %d served nothing", i)
			}
		}
	})
}

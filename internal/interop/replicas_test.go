package interop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/examples/stdio-server/features"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestTypeScriptClientAgainstReplicas runs the scenario of
// TestTypeScriptClientAgainstOurHTTPServer, in the handshake era, against
// three replicas of the example server behind a round-robin reverse proxy
// with no affinity: one key ring, session store, bus and task store,
// in memory (redisstore has the same on Redis). Every request of the
// session may land on another replica than the one that initialized it,
// the client's answer to the sampling tool's request included, which
// must reach the replica that asked.
//
// The proxy enables full duplex: see docs/SCALING.md, "A Go reverse
// proxy".
func TestTypeScriptClientAgainstReplicas(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	ring := mcp.NewRandomKeyRing()
	store := transport.NewMemorySessionStore(nil)
	bus := new(mcp.MemoryBus)
	tasks := mcp.NewMemoryTaskStore(nil)
	ownerKey := []byte("the owner key the replicas share, 32+ bytes")
	var urls []*url.URL
	var hits [3]atomic.Int32
	for i := range 3 {
		s, err := features.NewServer(func(o *mcp.ServerOptions) {
			o.Keys = ring
			o.Bus = bus
			o.Tasks.Store = tasks
			o.Tasks.OwnerKey = ownerKey
			o.Tasks.ReplicaID = string(rune('a' + i))
		})
		if err != nil {
			t.Fatal(err)
		}
		h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store, SessionRecheck: -1})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(func() {
			h.Close()
			srv.Close()
			s.Close()
		})
		u, _ := url.Parse(srv.URL)
		urls = append(urls, u)
	}
	var next atomic.Int32
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(urls[int(next.Add(1)-1)%len(urls)]) },
		FlushInterval: -1,
	}
	// Full duplex: otherwise the HTTP/1 server closes the request body
	// when the proxy writes the response headers, the transport's last
	// read of the body fails, and it tears down the replica's connection
	// with the response stream on it (golang/go#40747).
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	sum := runTSClient(ctx, t, modules, exampleClientOptions(), "--url", proxy.URL+"/mcp")
	checkExampleSummary(t, sum, false)
	for i := range hits {
		if hits[i].Load() == 0 {
			t.Errorf("replica %d served no request", i)
		}
	}
}

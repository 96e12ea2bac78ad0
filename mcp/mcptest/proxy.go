//go:build !mcpkit_nohttp

package mcptest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// roundRobinProxy starts, on 127.0.0.1, a reverse proxy sending each
// request to the next of urls in turn, through tr (http.DefaultTransport
// if nil), writing event streams out as they come.
//
// Its handler enables full duplex before proxying. Without it the HTTP/1
// server drains and closes a request's body when the proxy writes the
// response's headers, while the proxy's transport, having sent the
// declared length, still reads the body once more to find its end; that
// read fails, and the transport tears down the connection to the replica
// and, with it, the response stream under way (golang/go#40747). It
// happens when a replica answers before that last read, which a loaded
// machine makes likely: a listen stream or a long call then ends early.
func roundRobinProxy(urls []*url.URL, tr http.RoundTripper) *httptest.Server {
	var next atomic.Int32
	rp := &httputil.ReverseProxy{
		Transport: tr,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(urls[int(next.Add(1)-1)%len(urls)])
		},
		FlushInterval: -1,
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
}

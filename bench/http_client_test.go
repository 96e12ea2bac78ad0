package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkHTTPClient measures a client's side of one tools/call over
// Streamable HTTP alone: the client is dialled to its server as usual,
// then its HTTP client's transport answers each POST with the answer the
// server gave the first call, its id replaced by the request's, without
// a connection or another goroutine. What is left is the client's own
// work for a call (encoding the request, the HTTP client's, reading and
// decoding the answer, the call's bookkeeping) in a deterministic loop,
// whose instructions cachegrind can count, as BenchmarkHTTPHandler does
// for the servers.
func BenchmarkHTTPClient(b *testing.B) {
	for _, t := range httpClientTargets() {
		b.Run(t.name, func(b *testing.B) {
			c, rt := replayedClient(b, t)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := c.echo(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if n := rt.replayed.Load(); n < int64(b.N) {
				b.Fatalf("%d calls, %d POSTs replayed", b.N, n)
			}
		})
	}
}

// TestHTTPClient checks that every target of BenchmarkHTTPClient gets
// its calls answered by the replay, with no request reaching the server.
func TestHTTPClient(t *testing.T) {
	for _, tgt := range httpClientTargets() {
		t.Run(tgt.name, func(t *testing.T) {
			c, rt := replayedClient(t, tgt)
			for range 3 {
				if err := c.echo(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if n := rt.replayed.Load(); n != 3 {
				t.Fatalf("%d POSTs replayed, want 3", n)
			}
		})
	}
}

// httpClientTargets are the clients BenchmarkHTTPClient measures: the
// floor's and mcpkit's, of each era.
func httpClientTargets() []httpTarget {
	return []httpTarget{
		httpTargets[0], // floor
		httpTargets[1], // mcpkit
		{"floor-latest", latestHTTPTargets[0].serve, latestHTTPTargets[0].dial},
		{"mcpkit-latest", mcpkitHTTPServe, mcpkitModernHTTPDial},
	}
}

// replayedClient dials t's client to t's server and makes one echo call
// through a replayRoundTripper, which records the answer; from then on it
// replays that answer to every POST.
func replayedClient(tb testing.TB, t httpTarget) (*httpConn, *replayRoundTripper) {
	tb.Helper()
	if t.name != "floor" && t.name != "mcpkit" && t.name != "floor-latest" && t.name != "mcpkit-latest" {
		tb.Fatalf("unexpected target %s", t.name)
	}
	s := startHTTP(tb, t)
	rt := &replayRoundTripper{next: s.hc.Transport}
	s.hc.Transport = rt
	c := s.dial(tb, t)
	if err := c.echo(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if rt.body == nil {
		tb.Fatal("no tools/call answer recorded")
	}
	rt.replay.Store(true)
	return c, rt
}

// replayRoundTripper passes requests to next, recording the answer to
// the first tools/call POST, until replay is set; then it answers every
// POST itself with that answer, its JSON-RPC id replaced by the
// request's. Calls are sequential: its buffer is not shared.
type replayRoundTripper struct {
	next     http.RoundTripper
	replay   atomic.Bool
	replayed atomic.Int64

	status int
	header http.Header
	body   []byte // the recorded answer
	idAt   [2]int // where its id is: body[idAt[0]:idAt[1]]

	req bytes.Buffer // the request being answered
	out []byte
}

var errNoID = errors.New("replay: no JSON-RPC id")

// RoundTrip implements http.RoundTripper.
func (rt *replayRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if !rt.replay.Load() || r.Method != http.MethodPost {
		if r.Method != http.MethodPost || rt.body != nil {
			return rt.next.RoundTrip(r)
		}
		data, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		resp, err := rt.next.RoundTrip(r)
		if err != nil || !bytes.Contains(data, []byte(`"tools/call"`)) {
			return resp, err
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		start, end := jsonID(answer)
		if start < 0 {
			return nil, errNoID
		}
		rt.status, rt.header, rt.body, rt.idAt = resp.StatusCode, resp.Header.Clone(), answer, [2]int{start, end}
		rt.header.Del("Content-Length")
		return resp, nil
	}
	rt.req.Reset()
	_, err := rt.req.ReadFrom(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	start, end := jsonID(rt.req.Bytes())
	if start < 0 {
		return nil, errNoID
	}
	rt.out = append(append(append(rt.out[:0], rt.body[:rt.idAt[0]]...), rt.req.Bytes()[start:end]...), rt.body[rt.idAt[1]:]...)
	rt.replayed.Add(1)
	return &http.Response{
		Status:        strconv.Itoa(rt.status) + " " + http.StatusText(rt.status),
		StatusCode:    rt.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rt.header,
		Body:          io.NopCloser(bytes.NewReader(rt.out)),
		ContentLength: int64(len(rt.out)),
		Request:       r,
	}, nil
}

// jsonID returns where the number after the first `"id":` of a message
// is, or -1.
func jsonID(msg []byte) (start, end int) {
	i := bytes.Index(msg, []byte(`"id":`))
	if i < 0 {
		return -1, -1
	}
	start = i + len(`"id":`)
	end = start
	for end < len(msg) && msg[end] >= '0' && msg[end] <= '9' {
		end++
	}
	if end == start {
		return -1, -1
	}
	return start, end
}

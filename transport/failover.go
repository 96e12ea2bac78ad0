//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Failover: a response stream whose writer died.
//
// With a session store and a relay, a response stream's ID names the
// replica writing it, "<n>.<replica>", followed, when the POST carried one
// request whose ID is short enough, by that ID: ".n<number>" or
// ".s<string>". A replica following the stream's event log for a client
// that resumed there (see httpSession.tail) asks the relay, while the log
// is quiet, whether the writer is still subscribed to the bus; once it is
// not (its process ended), it answers the request with an error, so that
// the client gets exactly one answer within a bound instead of waiting for
// a response no one will write. The error is jsonrpc.CodeConnectionClosed
// (the request's connection to its server closed): the request may have
// run in part, and the client decides whether to send it again.

// writerCheckEvery is how often a replica following a quiet stream that
// another replica writes asks whether the writer lives.
const writerCheckEvery = 2 * time.Second

// writerDrainWait bounds the last read of a stream whose writer died:
// what it stored before dying is served before the error.
const writerDrainWait = 200 * time.Millisecond

// maxStreamIDBytes bounds the stream IDs the handler makes, within what
// the stores accept (redisstore takes 64 bytes).
const maxStreamIDBytes = 64

// responseStreamID returns the ID of the n-th response stream this
// replica numbers for a session, answering requests.
func (sr *sessionRecords) responseStreamID(n int64, requests []jsonrpc.ID) string {
	if sr.relay == nil {
		return strconv.FormatInt(n, 10) + "." + sr.streamTag
	}
	id := strconv.FormatInt(n, 10) + "." + sr.self
	if len(requests) == 1 {
		if enc := encodeStreamRequest(requests[0]); enc != "" && len(id)+1+len(enc) <= maxStreamIDBytes {
			id += "." + enc
		}
	}
	return id
}

// encodeStreamRequest returns the request ID as part of a stream ID, or ""
// when it cannot be one: "n" and an integer, or "s" and a string that is
// a valid name (mcplink.ValidName).
func encodeStreamRequest(id jsonrpc.ID) string {
	if n, ok := id.Int64(); ok {
		return "n" + strconv.FormatInt(n, 10)
	}
	if !id.IsString() {
		return ""
	}
	s := id.String()
	if !mcplink.ValidName(s) {
		return ""
	}
	return "s" + s
}

// streamWriter parses a response stream's ID: the replica writing it and
// the request it answers, if the ID names them.
func streamWriter(streamID string) (replica string, request jsonrpc.ID, ok bool) {
	parts := strings.Split(streamID, ".")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "get" || !mcplink.ValidName(parts[1]) {
		return "", jsonrpc.ID{}, false
	}
	if _, err := strconv.ParseInt(parts[0], 10, 64); err != nil {
		return "", jsonrpc.ID{}, false
	}
	if len(parts) == 3 {
		enc := parts[2]
		switch {
		case len(enc) > 1 && enc[0] == 'n':
			if n, err := strconv.ParseInt(enc[1:], 10, 64); err == nil {
				request = jsonrpc.Int64ID(n)
			}
		case len(enc) > 1 && enc[0] == 's' && mcplink.ValidName(enc[1:]):
			request = jsonrpc.StringID(enc[1:])
		}
	}
	return parts[1], request, true
}

// writerWatch follows whether the writer of a stream followed here lives.
type writerWatch struct {
	s       *httpSession
	replica string     // "" when there is no writer to ask of
	request jsonrpc.ID // the request the stream answers; absent if unknown
	next    time.Time  // when to ask next
}

// watchWriter returns the watch of the stream streamID: one that never
// asks without a relay, or for a stream of this replica or of no replica.
func (s *httpSession) watchWriter(streamID string) *writerWatch {
	w := &writerWatch{s: s}
	sr := s.h.store
	if sr == nil || sr.relay == nil {
		return w
	}
	replica, request, ok := streamWriter(streamID)
	if !ok || replica == sr.self {
		return w
	}
	w.replica, w.request, w.next = replica, request, time.Now().Add(writerCheckEvery)
	return w
}

// deadline returns when the wait for the log's next events should end to
// ask again, bounded by quiet.
func (w *writerWatch) deadline(quiet time.Time) time.Time {
	if w.replica == "" || quiet.Before(w.next) {
		return quiet
	}
	return w.next
}

// gone reports whether the writer is known to have ended, asking the
// relay when it is time. A relay that cannot tell, or fails, is taken
// for a living writer.
func (w *writerWatch) gone(ctx context.Context) bool {
	if w.replica == "" || time.Now().Before(w.next) {
		return false
	}
	w.next = time.Now().Add(writerCheckEvery)
	alive, err := w.s.h.store.relay.Subscribed(ctx, w.replica)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		w.replica = "" // never ask again
		return false
	case err != nil:
		w.s.h.logger.Debug("mcp http: asking whether a stream's writer lives failed", "err", err)
		return false
	}
	return !alive
}

// answerGone writes to replay the error answer to the stream's request,
// if it is known.
func (w *writerWatch) answerGone(replay *httpStream) {
	w.s.h.logger.Warn("mcp http: the replica writing a resumed response stream ended before its end", "replica", w.replica, "session", w.s.id)
	if !w.request.IsValid() {
		return
	}
	data := errorAnswer([]jsonrpc.ID{w.request}, jsonrpc.CodeConnectionClosed, "the server process running the request ended before answering; it may have run in part")
	replay.mu.Lock()
	replay.writeEventLocked("", data)
	replay.mu.Unlock()
}

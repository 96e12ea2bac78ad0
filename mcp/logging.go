package mcp

import (
	"context"
	"log/slog"
	"slices"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// LoggingHandlerOptions configures the slog handler from
// [NewLoggingHandler]. The zero value is usable.
type LoggingHandlerOptions struct {
	// Name names the logger in each message (the "logger" member of
	// notifications/message). Empty omits it.
	Name string
	// Level is the lowest slog level sent; the client's logging/setLevel
	// filters further. Zero means slog.LevelDebug.
	Level slog.Leveler
}

// NewLoggingHandler returns an slog.Handler that sends each record to the
// client of ss as a notifications/message, honouring the level the client
// set. Attributes and groups become members of the message's data object.
// A record logged with a handler's context is sent at once, tied to the
// handler's request, and waits at most as long as that context lasts.
// Any other is queued for the session and sent by its notification
// goroutine, so that logging never waits for the client; when the
// session's queue is full (see [ServerOptions.NotificationQueue]) it is
// dropped. Send failures are dropped: logging must not fail the caller.
func NewLoggingHandler(ss *ServerSession, opts *LoggingHandlerOptions) slog.Handler {
	h := &loggingHandler{ss: ss, level: slog.LevelDebug}
	if opts != nil {
		h.logger = opts.Name
		if opts.Level != nil {
			h.level = opts.Level
		}
	}
	return h
}

type loggingHandler struct {
	ss     *ServerSession
	logger string
	level  slog.Leveler
	attrs  []slog.Attr // pre-resolved attributes, innermost group last
	groups []string
}

// Enabled reports whether a record at level l would reach the client.
func (h *loggingHandler) Enabled(_ context.Context, l slog.Level) bool {
	if l < h.level.Level() {
		return false
	}
	h.ss.mu.Lock()
	min := h.ss.logLevel
	h.ss.mu.Unlock()
	return min == "" || !levelFromSlog(l).less(min)
}

// Handle sends the record as a notifications/message.
func (h *loggingHandler) Handle(ctx context.Context, r slog.Record) error {
	data := make(map[string]any, r.NumAttrs()+len(h.attrs)+1)
	data["message"] = r.Message
	target := data
	for _, a := range h.attrs {
		addAttr(target, a)
	}
	for _, g := range h.groups {
		sub, ok := target[g].(map[string]any)
		if !ok {
			sub = map[string]any{}
			target[g] = sub
		}
		target = sub
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(target, a)
		return true
	})
	params := &LoggingMessageParams{Level: levelFromSlog(r.Level), Logger: h.logger, Data: data}
	if _, ok := jsonrpc.RelatedRequest(ctx); ok {
		// Inside a handler: the message belongs with its request (on
		// HTTP, on the request's stream, before its response), and ctx
		// ends with the request.
		_ = h.ss.Log(ctx, params)
		return nil
	}
	h.ss.queueLog(params)
	return nil
}

func addAttr(m map[string]any, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		sub := map[string]any{}
		for _, g := range a.Value.Group() {
			addAttr(sub, g)
		}
		if a.Key == "" {
			for k, v := range sub {
				m[k] = v
			}
		} else {
			m[a.Key] = sub
		}
		return
	}
	m[a.Key] = a.Value.Any()
}

// WithAttrs returns a handler that adds attrs to every message.
func (h *loggingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := &loggingHandler{ss: h.ss, logger: h.logger, level: h.level, groups: h.groups}
	if len(h.groups) == 0 {
		c.attrs = append(slices.Clip(h.attrs), attrs...)
		return c
	}
	// Attributes inside a group: nest them under the group path.
	c.attrs = slices.Clip(h.attrs)
	c.groups = nil
	nested := slog.Attr{Key: h.groups[len(h.groups)-1], Value: slog.GroupValue(attrs...)}
	for i := len(h.groups) - 2; i >= 0; i-- {
		nested = slog.Attr{Key: h.groups[i], Value: slog.GroupValue(nested)}
	}
	c.attrs = append(c.attrs, nested)
	c.groups = h.groups
	return c
}

// WithGroup returns a handler that nests later attributes under name.
func (h *loggingHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &loggingHandler{ss: h.ss, logger: h.logger, level: h.level, attrs: h.attrs, groups: append(slices.Clip(h.groups), name)}
}

// levelFromSlog maps an slog level onto the syslog levels MCP uses.
func levelFromSlog(l slog.Level) LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return LoggingLevelDebug
	case l < slog.LevelWarn:
		return LoggingLevelInfo
	case l < slog.LevelError:
		return LoggingLevelWarning
	case l < slog.LevelError+4:
		return LoggingLevelError
	case l < slog.LevelError+8:
		return LoggingLevelCritical
	case l < slog.LevelError+12:
		return LoggingLevelAlert
	}
	return LoggingLevelEmergency
}

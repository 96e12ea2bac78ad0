package transport

import (
	"context"

	"github.com/mcpkit/mcpkit/internal/principal"
)

// WithPrincipal returns a context carrying the authenticated identity of an
// HTTP request. Authentication middleware in front of an MCP HTTP handler
// calls it on the request's context; the handlers in this package then
// bind each session to the principal that created it and refuse its use
// by any other (HTTP 403), so a leaked session ID cannot be used by
// another user. The bearer-token middleware of package auth records the
// verified token's identity this way itself.
func WithPrincipal(ctx context.Context, p string) context.Context {
	return principal.With(ctx, p)
}

// PrincipalFromContext returns the identity recorded by [WithPrincipal]
// (or by package auth's middleware), or "".
func PrincipalFromContext(ctx context.Context) string {
	return principal.From(ctx)
}

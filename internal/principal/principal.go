// Package principal carries the authenticated identity of an HTTP request
// in its context. It is the one context key that package auth (which
// verifies tokens) and package transport (which binds sessions to the
// identity that created them) share without importing each other.
package principal

import "context"

type key struct{}

// With returns a context carrying principal, the identity an HTTP request
// was authenticated as.
func With(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, key{}, principal)
}

// From returns the identity recorded by With, or "".
func From(ctx context.Context) string {
	p, _ := ctx.Value(key{}).(string)
	return p
}

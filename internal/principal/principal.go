// Package principal carries the authenticated identity of an HTTP request
// in its context. It is the one context key that package auth (which
// verifies tokens) and package transport (which binds sessions to the
// identity that created them) share without importing each other.
package principal

import "context"

type key struct{}

// A Source is a value that names an identity, such as package auth's
// verified token: stored with WithSource, it is found by both From and
// Value, so one context value serves both packages.
type Source interface {
	Principal() string
}

// With returns a context carrying principal, the identity an HTTP request
// was authenticated as.
func With(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, key{}, principal)
}

// WithSource returns a context carrying s, whose Principal names the
// identity.
func WithSource(ctx context.Context, s Source) context.Context {
	return context.WithValue(ctx, key{}, s)
}

// From returns the identity recorded by With or WithSource, or "".
func From(ctx context.Context) string {
	switch v := ctx.Value(key{}).(type) {
	case string:
		return v
	case Source:
		return v.Principal()
	}
	return ""
}

// Value returns the Source recorded by WithSource, or nil.
func Value(ctx context.Context) Source {
	s, _ := ctx.Value(key{}).(Source)
	return s
}

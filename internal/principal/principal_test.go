package principal

import (
	"context"
	"testing"
)

type source string

func (s source) Principal() string { return string(s) }

func TestPrincipal(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		ctx  context.Context
		want string
		src  Source
	}{
		{"none", ctx, "", nil},
		{"string", With(ctx, "alice"), "alice", nil},
		{"source", WithSource(ctx, source("bob")), "bob", source("bob")},
		{"inner replaced", With(WithSource(ctx, source("bob")), "carol"), "carol", nil},
	}
	for _, tt := range tests {
		if got := From(tt.ctx); got != tt.want {
			t.Errorf("%s: From = %q, want %q", tt.name, got, tt.want)
		}
		if got := Value(tt.ctx); got != tt.src {
			t.Errorf("%s: Value = %v, want %v", tt.name, got, tt.src)
		}
	}
}

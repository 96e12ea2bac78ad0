package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestRequestStateSigner checks the integrity of request states: what was
// signed verifies, with any key of the rotation, and a state that was
// altered, signed by a key the server does not hold (another ring's, an
// unknown kid, a kid swapped for another key of the ring), issued by
// another server (audience), expired or malformed is refused with
// -32602.
func TestRequestStateSigner(t *testing.T) {
	oldKey, newKey := []byte("old-key-0123456789abcdef0123456789"), []byte("new-key-0123456789abcdef0123456789")
	before := testSigner(t, "orders", oldKey)
	after := testSigner(t, "orders", newKey, oldKey)
	removed := testSigner(t, "orders", newKey)
	other := testSigner(t, "orders", []byte("another-server-key-0000000000000000"))
	otherAudience := testSigner(t, "billing", oldKey)
	now := time.Now()
	st := func() *requestState {
		return &requestState{ID: newStateID(), Expires: now.Add(time.Minute).Unix(), Method: "tools/call", Params: "p", Principal: "u",
			Answers: map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}}
	}
	signed, err := before.sign(st())
	must(t, err)
	expired := st()
	expired.Expires = now.Add(-time.Second).Unix()
	signedExpired, err := before.sign(expired)
	must(t, err)
	billing, err := otherAudience.sign(st())
	must(t, err)
	// The parts: "v2", kid, payload, MAC.
	parts := strings.Split(signed, ".")
	if len(parts) != 4 || parts[0] != "v2" || parts[1] != before.ring.KIDs()[0] {
		t.Fatalf("state %q: want v2.<kid>.<payload>.<mac>", signed)
	}
	// Flip one character of the payload.
	p := len("v2.") + len(parts[1]) + 5
	flipped := signed[:p] + string(rune(signed[p]^1)) + signed[p+1:]
	// The same payload and MAC under the kid of another key of the ring.
	swapped := strings.Join([]string{"v2", after.ring.KIDs()[0], parts[2], parts[3]}, ".")
	tests := []struct {
		name   string
		s      *stateSigner
		state  string
		reason string // "" when it verifies
	}{
		{"verifies", before, signed, ""},
		{"verifies after rotation (old key second)", after, signed, ""},
		{"old key removed", removed, signed, "does not hold"},
		{"another ring", other, signed, "does not hold"},
		{"unknown kid", before, "v2.AAAAAA." + parts[2] + "." + parts[3], "does not hold"},
		{"kid of another key of the ring", after, swapped, "failed verification"},
		{"altered payload", before, flipped, "failed verification"},
		{"appended", before, signed + "-TAMPERED", "failed verification"},
		{"MAC cut short", before, signed[:len(signed)-2], "failed verification"},
		{"no MAC", before, signed[:strings.LastIndex(signed, ".")], "malformed"},
		{"no kid", before, "v2." + parts[2], "malformed"},
		{"another audience", before, billing, "another server"},
		{"expired", before, signedExpired, "expired"},
		{"not ours", before, "eyJ2IjoxfQ", "not one this server issued"},
		{"version 1", before, "v1." + parts[2] + "." + parts[3], "not one this server issued"},
		{"too large", before, "v2." + strings.Repeat("A", maxRequestState), "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.s.verify(tt.state, now)
			if tt.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.Method != "tools/call" || string(got.Answers["k"]) != `{"action":"accept"}` || got.Audience != "orders" || got.ID == "" {
					t.Fatalf("verified state %+v", got)
				}
				return
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tt.reason) {
				t.Fatalf("error %v, want -32602 mentioning %q", err, tt.reason)
			}
		})
	}
	// A new state is signed with the first key: the old rotation can no
	// longer verify it.
	fresh, err := after.sign(st())
	must(t, err)
	if _, err := before.verify(fresh, now); err == nil {
		t.Fatal("a state signed with the new key verified under the old one alone")
	}
	if _, err := removed.verify(fresh, now); err != nil {
		t.Fatalf("a state signed with the new key, under the new key alone: %v", err)
	}
}

// TestInputRoundKeys checks the keys of asks without WithInputKey: the
// same params give the same key in every run, repeats of the same ask get
// their own, and an answer that is not the method's result is asked for
// again.
func TestInputRoundKeys(t *testing.T) {
	newRound := func(answers map[string]json.RawMessage) *inputRound {
		return &inputRound{caps: &ClientCapabilities{}, answers: answers, used: map[string]json.RawMessage{},
			pending: map[string]*InputRequest{}, seen: map[string]int{}}
	}
	ctx := context.Background()
	ask := func(r *inputRound, msg string) (string, error) {
		res := &ElicitResult{}
		err := r.ask(ctx, MethodElicitationCreate, &ElicitParams{Message: msg, RequestedSchema: json.RawMessage(`{"type":"object"}`)}, res)
		return string(res.Action), err
	}
	first := newRound(map[string]json.RawMessage{})
	for _, m := range []string{"a", "a", "b"} {
		if _, err := ask(first, m); !errors.Is(err, ErrInputRequired) {
			t.Fatalf("unanswered ask: %v", err)
		}
	}
	if len(first.pending) != 3 {
		t.Fatalf("%d pending asks, want 3 (a repeated ask has a key of its own): %v", len(first.pending), first.pending)
	}
	answers := map[string]json.RawMessage{}
	for k := range first.pending {
		answers[k] = json.RawMessage(`{"action":"accept","content":{}}`)
	}
	second := newRound(answers)
	for _, m := range []string{"a", "a", "b"} {
		if action, err := ask(second, m); err != nil || action != "accept" {
			t.Fatalf("answered ask: %q, %v", action, err)
		}
	}
	var key string
	for k := range first.pending {
		key = k
		break
	}
	bad := newRound(map[string]json.RawMessage{key: json.RawMessage(`12345`)})
	for _, m := range []string{"a", "a", "b"} {
		ask(bad, m)
	}
	if _, ok := bad.pending[key]; !ok {
		t.Fatalf("an answer that is not an ElicitResult was taken: pending %v", bad.pending)
	}
}

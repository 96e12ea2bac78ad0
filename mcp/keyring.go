package mcp

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/transport"
)

// A KeyRing mints and checks the session IDs of the HTTP handlers.
var _ transport.SessionIDTagger = (*KeyRing)(nil)

// A KeyRing holds the secret keys a server signs with: the requestState
// of 2026-07-28 input-required results (see [InputRequiredResult]) and
// the tags of the session IDs its HTTP handlers mint. The first key
// signs; every key verifies. Each key has a key ID (kid) that goes with
// what it signs, so that verification looks the key up by its kid
// instead of trying every key.
//
// Replicas that serve the same clients must hold the same ring: a
// requestState or a session ID made by one replica verifies on another
// only if the second holds the key that made it. To rotate a key, add
// the new key second on every replica (all verify it, none signs with
// it), then put it first on every replica, and once all sign with it and
// the longest ServerOptions.RequestStateTTL and session lifetime have
// passed, drop the old one.
//
// Without a configured ring a [Server] makes one with a random key of its
// own, valid in this process only: a retry of an input round served by
// another replica, or a request on a session another replica opened, is
// then refused, as if forged. Behind a balancer that spreads a client's
// requests over replicas, configure the same ring on all of them (from a
// secret store, [ReadKeyRing] for a key file).
//
// A KeyRing never shows its keys: its String, Format and LogValue give
// the key IDs only. It is immutable and safe for concurrent use. Make
// one with [NewKeyRing], [ReadKeyRing] or [NewRandomKeyRing]: the zero
// KeyRing holds no key, verifies nothing and cannot sign.
type KeyRing struct {
	keys  []*ringKey          // the first signs
	byKID map[string]*ringKey // every key, by kid
}

// MinKeyBytes is the least length of a key of a [KeyRing]: the size of
// the HMAC-SHA256 output, below which the MAC is weaker than it can be.
const MinKeyBytes = 32

// kidBytes is the length of a key ID before encoding: 6 base64url
// characters. It names a key among the few of one ring, so collisions
// only need to be unlikely between those (NewKeyRing refuses them).
const kidBytes = 4

// Errors of the constructors of [KeyRing], wrapped with the detail.
var (
	// ErrKeyTooShort is the error for a key of fewer than MinKeyBytes
	// bytes.
	ErrKeyTooShort = errors.New("mcp: key too short")
	// ErrNoKeys is the error for a ring without a key.
	ErrNoKeys = errors.New("mcp: no keys")
	// ErrDuplicateKey is the error for a key given twice (or two keys of
	// one key ID, which is as unlikely as a collision of SHA-256 on 32
	// bits).
	ErrDuplicateKey = errors.New("mcp: duplicate key")
)

// ringKey is one key of a ring, with the keys derived from it for each
// use, so that a MAC made for one use never verifies for another.
type ringKey struct {
	kid     string
	state   []byte    // HMAC key of request states
	steps   []byte    // AES-256 key of the sealed steps of Once
	session []byte    // HMAC key of session-ID tags
	macs    sync.Pool // of *macer under state
	sids    sync.Pool // of *macer under session
}

// Format implements [fmt.Formatter]: a key shows its kid only, so that
// printing a copy of a KeyRing shows no key.
func (k *ringKey) Format(f fmt.State, _ rune) { io.WriteString(f, "mcp.key("+k.kid+")") }

// derive returns the key for one use of key: HMAC-SHA256(key, label).
func derive(key []byte, label string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(label))
	return h.Sum(nil)
}

func newRingKey(key []byte) *ringKey {
	id := derive(key, "mcpkit key ID")
	k := &ringKey{
		kid:     base64.RawURLEncoding.EncodeToString(id[:kidBytes]),
		state:   derive(key, "mcpkit requestState v2"),
		steps:   derive(key, "mcpkit requestState steps v2"),
		session: derive(key, "mcpkit session ID v1"),
	}
	newMacerPool(&k.macs, k.state)
	newMacerPool(&k.sids, k.session)
	return k
}

// NewKeyRing returns a ring of the given keys, each of at least
// MinKeyBytes bytes of secret randomness; the first signs. The ring keeps
// no reference to the slices.
func NewKeyRing(keys ...[]byte) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, ErrNoKeys
	}
	r := &KeyRing{byKID: make(map[string]*ringKey, len(keys))}
	for i, key := range keys {
		if len(key) < MinKeyBytes {
			return nil, fmt.Errorf("%w: key %d has %d bytes, want at least %d", ErrKeyTooShort, i+1, len(key), MinKeyBytes)
		}
		k := newRingKey(key)
		if _, dup := r.byKID[k.kid]; dup {
			return nil, fmt.Errorf("%w: key %d", ErrDuplicateKey, i+1)
		}
		r.byKID[k.kid] = k
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// ReadKeyRing reads a ring from a key file: one hex-encoded key of at
// least MinKeyBytes bytes per line, the signing key first. Blank lines
// and comments (from '#' to the end of the line) are ignored. Errors name
// the line, never the key.
func ReadKeyRing(r io.Reader) (*KeyRing, error) {
	var keys [][]byte
	lines := map[string]int{} // line of each key, by its hex
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, err := hex.DecodeString(line)
		if err != nil {
			return nil, fmt.Errorf("mcp: key file line %d: not a hex-encoded key", n)
		}
		if len(key) < MinKeyBytes {
			return nil, fmt.Errorf("%w: key file line %d: %d bytes, want at least %d (%d hex digits)",
				ErrKeyTooShort, n, len(key), MinKeyBytes, 2*MinKeyBytes)
		}
		h := strings.ToLower(line)
		if first, dup := lines[h]; dup {
			return nil, fmt.Errorf("%w: key file line %d repeats line %d", ErrDuplicateKey, n, first)
		}
		lines[h] = n
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mcp: reading the key file: %w", err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w in the key file", ErrNoKeys)
	}
	ring, err := NewKeyRing(keys...)
	for _, k := range keys {
		clear(k)
	}
	clear(lines)
	return ring, err
}

// NewRandomKeyRing returns a ring of one random key, which no other
// process holds: what a [Server] without ServerOptions.Keys uses.
func NewRandomKeyRing() *KeyRing {
	key := make([]byte, MinKeyBytes)
	rand.Read(key) // never fails
	r, _ := NewKeyRing(key)
	return r
}

// KIDs returns the key IDs of the ring, the signing key's first. They
// are derived from the keys (the first 4 bytes of an HMAC-SHA256 under
// the key, base64url), so replicas given the same keys agree on them, and
// they tell nothing of the keys.
func (r KeyRing) KIDs() []string {
	kids := make([]string, len(r.keys))
	for i, k := range r.keys {
		kids[i] = k.kid
	}
	return kids
}

// String describes the ring by its key IDs; it never shows a key.
func (r KeyRing) String() string {
	return "mcp.KeyRing{kids: " + strings.Join(r.KIDs(), ",") + "}"
}

// Format implements [fmt.Formatter]: every verb prints String, so that no
// verb (%x, %#v) shows a key. Its receiver is a value, so that a copy of
// a ring prints as the ring does.
func (r KeyRing) Format(f fmt.State, _ rune) { io.WriteString(f, r.String()) }

// LogValue implements [slog.LogValuer]: the key IDs, never a key.
func (r *KeyRing) LogValue() slog.Value {
	if r == nil {
		return slog.StringValue("nil")
	}
	return slog.GroupValue(slog.Any("kids", r.KIDs()))
}

// signer returns the signing key.
func (r *KeyRing) signer() *ringKey { return r.keys[0] }

// key returns the key of the given kid.
func (r *KeyRing) key(kid string) *ringKey { return r.byKID[kid] }

// macer is an HMAC-SHA256 under one key with scratch buffers, pooled so
// that a MAC costs no allocation.
type macer struct {
	h   hash.Hash
	out [sha256.Size]byte
	buf [256]byte
}

func newMacerPool(p *sync.Pool, key []byte) {
	p.New = func() any { return &macer{h: hmac.New(sha256.New, key)} }
}

// sum sets dst to the HMAC-SHA256 of b then s under a macer of pool.
// Both go through the macer's buffer, so that neither escapes to the
// heap through the hash's interface.
func sum(pool *sync.Pool, dst *[sha256.Size]byte, b []byte, s string) {
	m := pool.Get().(*macer)
	m.h.Reset()
	for len(b) > 0 {
		n := copy(m.buf[:], b)
		m.h.Write(m.buf[:n])
		b = b[n:]
	}
	for len(s) > 0 {
		n := copy(m.buf[:], s)
		m.h.Write(m.buf[:n])
		s = s[n:]
	}
	*dst = [sha256.Size]byte(m.h.Sum(m.out[:0]))
	pool.Put(m)
}

// Session IDs. A session ID a ring mints is "<kid>.<random>.<tag>": the
// kid of the signing key, 16 random bytes and the first 12 bytes of an
// HMAC-SHA256 of "<kid>.<random>" under the key's session key, both
// base64url: 46 characters of [A-Za-z0-9_.-], within the visible ASCII
// the transports require. A request's session ID is checked before the
// session is looked up, so that forged or random IDs cost one HMAC and no
// lookup (in a shared store: no round trip).
const (
	sidRandomLen = 22 // base64url of 16 bytes
	sidTagBytes  = 12
	sidTagLen    = 16 // base64url of 12 bytes
	sidKIDLen    = 6  // base64url of kidBytes
	sidLen       = sidKIDLen + 1 + sidRandomLen + 1 + sidTagLen
)

// MintSessionID returns a new session ID, random and tagged with the
// signing key. It implements [transport.SessionIDTagger].
func (r *KeyRing) MintSessionID() string {
	var random [16]byte
	rand.Read(random[:]) // never fails
	return r.sessionID(&random)
}

// sessionID returns the session ID of the given random part.
func (r *KeyRing) sessionID(random *[16]byte) string {
	k := r.signer()
	var b [sidLen]byte
	copy(b[:], k.kid)
	b[sidKIDLen] = '.'
	base64.RawURLEncoding.Encode(b[sidKIDLen+1:], random[:])
	b[sidKIDLen+1+sidRandomLen] = '.'
	var mac [sha256.Size]byte
	sum(&k.sids, &mac, b[:sidKIDLen+1+sidRandomLen], "")
	base64.RawURLEncoding.Encode(b[sidLen-sidTagLen:], mac[:sidTagBytes])
	return string(b[:])
}

// CheckSessionID reports whether id is a session ID a key of the ring
// minted (whether or not the session still exists). It implements
// [transport.SessionIDTagger].
func (r *KeyRing) CheckSessionID(id string) bool {
	if len(id) != sidLen || id[sidKIDLen] != '.' || id[sidLen-sidTagLen-1] != '.' {
		return false
	}
	k := r.key(id[:sidKIDLen])
	if k == nil {
		return false
	}
	var tag [sidTagBytes]byte
	if n, err := base64.RawURLEncoding.Decode(tag[:], []byte(id[sidLen-sidTagLen:])); err != nil || n != sidTagBytes {
		return false
	}
	var mac [sha256.Size]byte
	sum(&k.sids, &mac, nil, id[:sidLen-sidTagLen-1])
	return hmac.Equal(tag[:], mac[:sidTagBytes])
}

// SessionHash returns a keyed hash of s for a session store's record: an
// HMAC-SHA256 under the session key of the key that tagged id (the
// signing key when id is "" or names no key of the ring). It implements
// [transport.SessionHasher].
func (r *KeyRing) SessionHash(id, label, s string) string {
	k := r.signer()
	if len(id) == sidLen {
		if k2 := r.key(id[:sidKIDLen]); k2 != nil {
			k = k2
		}
	}
	h := hmac.New(sha256.New, k.session)
	h.Write([]byte("mcpkit session hash\x00" + label + "\x00"))
	h.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

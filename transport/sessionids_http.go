//go:build !mcpkit_nohttp

package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"sync"
)

// localSessionIDs is the SessionIDTagger of a handler without one: a
// random key of its own, so its IDs verify in this handler only. An ID is
// "<random>.<tag>": 16 random bytes and the first 12 bytes of their
// HMAC-SHA256, base64url.
type localSessionIDs struct {
	key  []byte
	macs sync.Pool // of *localMAC
}

// localMAC is an HMAC under the key with its scratch buffers, pooled so
// that a check costs no allocation.
type localMAC struct {
	h   hash.Hash
	in  [localRandomLen]byte
	out [sha256.Size]byte
}

const (
	localRandomLen = 22 // base64url of 16 bytes
	localTagLen    = 16 // base64url of 12 bytes
	localSIDLen    = localRandomLen + 1 + localTagLen
)

func newLocalSessionIDs() *localSessionIDs {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand.Read panics rather than return an error)
	l := &localSessionIDs{key: key}
	l.macs.New = func() any { return &localMAC{h: hmac.New(sha256.New, key)} }
	return l
}

// tag sets tag to the tag of the random part of an ID.
func (l *localSessionIDs) tag(tag *[12]byte, random string) {
	m := l.macs.Get().(*localMAC)
	m.h.Reset()
	copy(m.in[:], random)
	m.h.Write(m.in[:])
	copy(tag[:], m.h.Sum(m.out[:0]))
	l.macs.Put(m)
}

// MintSessionID implements [SessionIDTagger].
func (l *localSessionIDs) MintSessionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails
	random := base64.RawURLEncoding.EncodeToString(b[:])
	var tag [12]byte
	l.tag(&tag, random)
	return random + "." + base64.RawURLEncoding.EncodeToString(tag[:])
}

// CheckSessionID implements [SessionIDTagger].
func (l *localSessionIDs) CheckSessionID(id string) bool {
	if len(id) != localSIDLen || id[localRandomLen] != '.' {
		return false
	}
	var got, want [12]byte
	if n, err := base64.RawURLEncoding.Decode(got[:], []byte(id[localRandomLen+1:])); err != nil || n != len(got) {
		return false
	}
	l.tag(&want, id[:localRandomLen])
	return hmac.Equal(got[:], want[:])
}

// sessionIDsOr returns t, or a tagger with a random key of its own when t
// is nil.
func sessionIDsOr(t SessionIDTagger) SessionIDTagger {
	if t == nil {
		return newLocalSessionIDs()
	}
	return t
}

// keyedHash returns the base64url HMAC-SHA256 of s under key, for the
// principal and peer fields of a record.
func keyedHash(key []byte, label, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write([]byte{0})
	m.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SessionHash implements [SessionHasher] under the tagger's key.
func (l *localSessionIDs) SessionHash(_, label, s string) string {
	return keyedHash(l.key, label, s)
}

package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Defaults of DPoP on the resource server.
const (
	// DefaultDPoPWindow is how far a proof's "iat" may be from the
	// server's clock, either way: 5 minutes.
	DefaultDPoPWindow = 5 * time.Minute
	// DefaultDPoPReplayCacheSize bounds the proof IDs remembered to
	// refuse replays: 100,000 (about 5 MB). When it is full of proofs
	// still within the window, new proofs are refused (503) rather than
	// an old ID forgotten.
	DefaultDPoPReplayCacheSize = 100000
	// DefaultDPoPNonceLifetime is how long a server nonce is handed out
	// before the next: 5 minutes. The previous one is still accepted, so
	// a nonce lives at most twice as long.
	DefaultDPoPNonceLifetime = 5 * time.Minute
)

// ErrDPoPNonceRequired reports a DPoP proof without the current server
// nonce; the middleware answers 401 error="use_dpop_nonce" with a
// DPoP-Nonce header, and the client retries with it.
var ErrDPoPNonceRequired = fmt.Errorf("%w: use the server's nonce", ErrInvalidDPoPProof)

// ErrDPoPReplayed reports a DPoP proof presented a second time.
var ErrDPoPReplayed = fmt.Errorf("%w: replayed", ErrInvalidDPoPProof)

// DPoPOptions configure DPoP (RFC 9449) at a resource server. The zero
// value accepts DPoP-bound tokens with their proofs beside bearer tokens,
// without nonces.
//
// A token whose TokenInfo has a ConfirmationThumbprint is accepted only
// with the DPoP scheme ("Authorization: DPoP <token>") and a valid proof
// in a single DPoP header: signed by the key of that thumbprint, for this
// request's method and URL, for this token ("ath"), recent ("iat" within
// Window), and never seen before ("jti", remembered until it leaves the
// window). A challenge to a request without a token names the Bearer
// scheme, or the DPoP scheme with the algorithms accepted (algs="...")
// when Required is set; clients also learn of DPoP from the Protected
// Resource Metadata (DPoPSigningAlgValuesSupported).
type DPoPOptions struct {
	// Required refuses bearer tokens: every token must be DPoP-bound.
	Required bool
	// Algorithms lists the JWS algorithms accepted in proofs; nil means
	// [DefaultAlgorithms]. "none" and HMAC are never accepted.
	Algorithms []string
	// Window bounds how far a proof's "iat" may be from now; zero means
	// [DefaultDPoPWindow].
	Window time.Duration
	// ReplayCacheSize bounds the proof IDs remembered; zero means
	// [DefaultDPoPReplayCacheSize].
	ReplayCacheSize int
	// Nonce makes the server require its own nonces in proofs (RFC 9449
	// section 9): a proof without the current (or previous) nonce is
	// answered 401 error="use_dpop_nonce" with the nonce in DPoP-Nonce.
	// Nonces are derived from a secret and the time: the server keeps no
	// state per client.
	Nonce bool
	// NonceLifetime is how long a nonce is handed out; zero means
	// [DefaultDPoPNonceLifetime].
	NonceLifetime time.Duration
	// NonceKey is the secret nonces are derived from (at least 32
	// bytes). Nil means a random one per middleware; servers behind a
	// load balancer share one.
	NonceKey []byte
	// BaseURL is the scheme and host (and port) clients reach this server
	// at, such as "https://mcp.example.com"; a proof's "htu" must be it
	// followed by the request's path. "" means the origin of
	// ResourceOptions.Resource, unless URLFromRequest is set.
	BaseURL string
	// URLFromRequest takes the origin of "htu" from the request instead:
	// its Host header, and https when it came over TLS, http otherwise.
	URLFromRequest bool
	// TrustForwardedProto, with URLFromRequest, takes the scheme from the
	// X-Forwarded-Proto header when present. Set it only behind a proxy
	// that sets that header.
	TrustForwardedProto bool
}

// dpopVerifier checks the proofs of requests.
type dpopVerifier struct {
	opts    DPoPOptions
	origin  string
	window  time.Duration
	replay  *replayCache
	nonces  *nonceSource
	algs    []string
	now     func() time.Time
	algList string // for WWW-Authenticate algs="..."
}

func newDPoPVerifier(opts DPoPOptions, resource string, now func() time.Time) (*dpopVerifier, error) {
	v := &dpopVerifier{opts: opts, now: now, window: orDefault(opts.Window, DefaultDPoPWindow)}
	switch {
	case opts.BaseURL != "":
		u, err := url.Parse(opts.BaseURL)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("auth: DPoP base URL %q must be a scheme and a host", opts.BaseURL)
		}
		v.origin = strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
	case !opts.URLFromRequest:
		u, err := url.Parse(resource)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("auth: resource %q is not an absolute URL", resource)
		}
		v.origin = strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
	}
	v.algs = opts.Algorithms
	if v.algs == nil {
		v.algs = DefaultAlgorithms()
	}
	var kept []string
	for _, a := range v.algs {
		if a != "none" && !strings.HasPrefix(strings.ToUpper(a), "HS") {
			kept = append(kept, a)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("auth: no asymmetric DPoP algorithm is allowed")
	}
	v.algs = kept
	v.algList = strings.Join(kept, " ")
	size := opts.ReplayCacheSize
	if size <= 0 {
		size = DefaultDPoPReplayCacheSize
	}
	// A proof is accepted while its iat is within the window of now, and
	// iat may lie up to a window ahead: its ID is kept for two windows.
	v.replay = newReplayCache(size, 2*v.window)
	if opts.Nonce {
		key := opts.NonceKey
		if key == nil {
			key = make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return nil, err
			}
		} else if len(key) < 32 {
			return nil, errors.New("auth: a DPoP nonce key must have at least 32 bytes")
		}
		v.nonces = &nonceSource{key: key, lifetime: orDefault(opts.NonceLifetime, DefaultDPoPNonceLifetime)}
	}
	return v, nil
}

// requestURL returns the URL a proof for r must name.
func (v *dpopVerifier) requestURL(r *http.Request) string {
	origin := v.origin
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if v.opts.TrustForwardedProto {
			if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
				scheme = p
			}
		}
		origin = scheme + "://" + strings.ToLower(r.Host)
	}
	return origin + r.URL.EscapedPath()
}

// check verifies the DPoP proof of r for token, bound to thumbprint jkt.
// It returns the nonce to send back (DPoP-Nonce), or "".
func (v *dpopVerifier) check(r *http.Request, token, jkt string) (nonce string, err error) {
	proofs := r.Header.Values("DPoP")
	if len(proofs) != 1 || proofs[0] == "" || strings.Contains(proofs[0], ",") {
		return "", fmt.Errorf("%w: want exactly one DPoP header", ErrInvalidDPoPProof)
	}
	now := v.now()
	p, err := ParseDPoPProof(proofs[0], &DPoPCheck{
		Method:      r.Method,
		URL:         v.requestURL(r),
		AccessToken: token,
		Algorithms:  v.algs,
		Window:      v.window,
		Now:         func() time.Time { return now },
	})
	if err != nil {
		return "", err
	}
	if p.Thumbprint != jkt {
		return "", fmt.Errorf("%w: signed by a key the token is not bound to", ErrInvalidDPoPProof)
	}
	if v.nonces != nil {
		cur := v.nonces.nonce(now, 0)
		switch p.Nonce {
		case cur:
		case v.nonces.nonce(now, -1):
			nonce = cur // accepted, and the client should move on
		default:
			return cur, ErrDPoPNonceRequired
		}
	}
	if err := v.replay.add(p.Thumbprint, p.ID, now); err != nil {
		return "", err
	}
	return nonce, nil
}

// nonceSource derives nonces from a secret and the time: the nonce of an
// epoch (time divided by lifetime) is the HMAC of its number.
type nonceSource struct {
	key      []byte
	lifetime time.Duration
}

// nonce returns the nonce of the epoch of now plus delta.
func (s *nonceSource) nonce(now time.Time, delta int64) string {
	epoch := now.UnixNano()/int64(s.lifetime) + delta
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(epoch))
	m := hmac.New(sha256.New, s.key)
	m.Write(b[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// replayCache remembers the proofs seen, by the SHA-256 of their key's
// thumbprint and ID, for ttl. It holds at most size; entries are queued
// in the order they came, which is the order they expire in.
type replayCache struct {
	ttl  time.Duration
	size int

	mu    sync.Mutex
	seen  map[[sha256.Size]byte]struct{}
	queue []replayEntry // queue[head:] are live
	head  int
}

type replayEntry struct {
	key   [sha256.Size]byte
	until time.Time
}

// errReplayCacheFull reports a replay cache full of live entries.
var errReplayCacheFull = fmt.Errorf("%w: too many DPoP proofs in the window; try again later", ErrVerifierUnavailable)

func newReplayCache(size int, ttl time.Duration) *replayCache {
	return &replayCache{ttl: ttl, size: size, seen: make(map[[sha256.Size]byte]struct{})}
}

// add records a proof, or reports it replayed, or the cache full.
func (c *replayCache) add(thumbprint, id string, now time.Time) error {
	h := sha256.New()
	h.Write([]byte(thumbprint))
	h.Write([]byte{0})
	h.Write([]byte(id))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.head < len(c.queue) && !now.Before(c.queue[c.head].until) {
		delete(c.seen, c.queue[c.head].key)
		c.head++
	}
	if c.head > len(c.queue)/2 {
		c.queue = append(c.queue[:0], c.queue[c.head:]...)
		c.head = 0
	}
	if _, ok := c.seen[key]; ok {
		return ErrDPoPReplayed
	}
	if len(c.queue)-c.head >= c.size {
		return errReplayCacheFull
	}
	c.queue = append(c.queue, replayEntry{key: key, until: now.Add(c.ttl)})
	c.seen[key] = struct{}{}
	return nil
}

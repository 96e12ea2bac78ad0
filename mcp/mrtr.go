package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// Multi round-trip requests (2026-07-28, SEP-2322). A handler that needs
// input from the client (an elicitation, a sampling, the roots) asks for
// it through its session's Elicit, CreateMessage or ListRoots, the same
// code on both eras. On a handshake-era session the ask is a request to
// the client, as it always was. On a 2026-07-28 request there is no
// channel back to the client: the ask fails with [ErrInputRequired], the
// handler returns that error, and the server answers the request with an
// [InputRequiredResult] listing every ask of this run. The client answers
// them and sends the request again, with the answers (inputResponses) and
// the requestState the server gave it; the server runs the handler again
// from the start, and this time each ask the client answered returns its
// answer. So a handler must ask the same things, with the same params, in
// every run until it has its answers, and must not act on the world
// before its last ask but through [Once], whose results the retries read
// instead of doing the work again ([InputRound] tells the run).
//
// The requestState holds the answers of the earlier rounds, which the
// client sends only once, and binds them to the request they were given
// for: the method, the params (but for _meta, inputResponses and
// requestState), the caller's principal, and an expiry. It is signed
// with HMAC-SHA256 under a key of the server's (see
// [ServerOptions.Keys]), so a state that was altered, has expired, or was
// issued for another request, by another server (its name) or under a key
// the server does not hold is refused (-32602). It takes no memory on the
// server: any replica that shares the key ring can serve the retry; with
// [ServerOptions.StateClaimer], each state serves one retry only. It also
// carries the results of the handler's [Once] steps, sealed, and the
// number of the round.

// ErrInputRequired is the error Elicit, CreateMessage and ListRoots return
// on a 2026-07-28 request whose client has not answered the ask yet.
// Return it from the handler (wrapped or not): the server then answers
// with an [InputRequiredResult], and the client's retry runs the handler
// again from the start, with the answer. What the handler did before the
// ask is done again in that run, but for the steps it did through [Once].
var ErrInputRequired = errors.New("mcp: the request needs input from the client; return this error from the handler")

// InputRequiredResult is a 2026-07-28 server's answer to a tools/call,
// prompts/get or resources/read that needs input from the client first:
// the client fulfils the input requests and sends the request again, with
// the answers and the request state.
type InputRequiredResult struct {
	// Meta is the result's _meta member (see [Meta]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType is [ResultTypeInputRequired]. Required.
	ResultType ResultType `json:"resultType,omitempty"`
	// InputRequests are the requests the client must fulfil, by key; the
	// retry carries each answer under the same key. Optional, but one of
	// InputRequests and RequestState is present.
	InputRequests map[string]*InputRequest `json:"inputRequests,omitempty"`
	// RequestState is opaque to the client, which sends it back unchanged
	// with the retry. Optional.
	RequestState string `json:"requestState,omitempty"`
}

// InputRequest is one request a server needs the client to fulfil before
// it can complete a 2026-07-28 request: elicitation/create,
// sampling/createMessage or roots/list, with its params.
type InputRequest struct {
	// Method is the request's method. Required.
	Method string `json:"method"`
	// Params are the request's params, as for the method sent as a
	// request of its own. Optional.
	Params json.RawMessage `json:"params,omitempty"`
}

func (r *InputRequiredResult) resultMeta() *Meta                  { return &r.Meta }
func (r *InputRequiredResult) resultType() *ResultType            { return &r.ResultType }
func (r *InputRequiredResult) cacheHints() (**int64, *CacheScope) { return nil, nil }

// supportsInput reports whether a request of method may be answered with
// an InputRequiredResult.
func supportsInput(method string) bool {
	switch method {
	case MethodToolsCall, MethodPromptsGet, MethodResourcesRead:
		return true
	}
	return false
}

// retryFields gives the members a retry of a request carries, for the
// params types of the methods that support input requests.
func retryFields(p Params) (*map[string]json.RawMessage, *string) {
	switch p := p.(type) {
	case *CallToolParams:
		return &p.InputResponses, &p.RequestState
	case *GetPromptParams:
		return &p.InputResponses, &p.RequestState
	case *ReadResourceParams:
		return &p.InputResponses, &p.RequestState
	}
	return nil, nil
}

type inputKeyKey struct{}

// WithInputKey returns a context under which the next Elicit,
// CreateMessage or ListRoots of a handler serving a 2026-07-28 request is
// keyed by key in the [InputRequiredResult] (and in the client's answers).
// Without it the key is derived from the method and the params, the same
// in every run. Keys must be unique within a request.
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKeyKey{}, key)
}

// inputRound is the state of one run of a handler serving a 2026-07-28
// request that supports input requests.
type inputRound struct {
	caps *ClientCapabilities

	mu      sync.Mutex
	answers map[string]json.RawMessage // from requestState and inputResponses
	used    map[string]json.RawMessage // the answers the run asked for
	pending map[string]*InputRequest   // the asks not answered yet
	seen    map[string]int             // derived keys, for repeats

	steps stepStore // the steps of Once
}

type inputRoundKey struct{}

func inputRoundFrom(ctx context.Context) *inputRound {
	r, _ := ctx.Value(inputRoundKey{}).(*inputRound)
	return r
}

// ask answers an Elicit, CreateMessage or ListRoots of a handler serving a
// 2026-07-28 request: from the client's answers, or by recording the ask
// and returning ErrInputRequired.
func (r *inputRound) ask(ctx context.Context, method string, params Params, result Result) error {
	data, err := marshalStd(params)
	if err != nil {
		return fmt.Errorf("mcp: encoding %s params: %w", method, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key, _ := ctx.Value(inputKeyKey{}).(string)
	if key == "" {
		sum := sha256.Sum256(append([]byte(method+"\x00"), data...))
		key = method + "#" + hex.EncodeToString(sum[:6])
		if r.seen == nil {
			r.seen = map[string]int{}
		}
		if n := r.seen[key]; n > 0 {
			r.seen[key] = n + 1
			key = fmt.Sprintf("%s.%d", key, n+1)
		} else {
			r.seen[key] = 1
		}
	}
	if answer, ok := r.answers[key]; ok {
		if err := unmarshalStd(answer, result); err == nil && lackingMember(result) == "" {
			if r.used == nil {
				r.used = map[string]json.RawMessage{}
			}
			r.used[key] = answer
			return nil
		}
		// An answer that is not the method's result is no answer: ask
		// again.
	}
	if len(r.pending) >= maxInputRequests {
		return fmt.Errorf("mcp: more than %d input requests in one round", maxInputRequests)
	}
	if r.pending == nil {
		r.pending = map[string]*InputRequest{}
	}
	r.pending[key] = &InputRequest{Method: method, Params: data}
	return fmt.Errorf("%s %q: %w", method, key, ErrInputRequired)
}

// hasPending reports whether the run asked for input not given yet.
func (r *inputRound) hasPending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) > 0
}

// Bounds on input requests and request state.
const (
	// maxInputRequests bounds the input requests of one round.
	maxInputRequests = 64
	// maxRequestState bounds a requestState the server accepts or issues.
	maxRequestState = 1 << 20
	// defaultRequestStateTTL is how long a requestState is valid when
	// ServerOptions.RequestStateTTL is zero.
	defaultRequestStateTTL = 10 * time.Minute
)

// requestState is what a requestState carries, before it is signed.
type requestState struct {
	Version   int                        `json:"v"`
	ID        string                     `json:"id"`          // unique: the key of a single-use claim
	Audience  string                     `json:"aud"`         // the name of the server that issued it
	Expires   int64                      `json:"exp"`         // Unix seconds
	Method    string                     `json:"m"`           // the request's method
	Params    string                     `json:"p"`           // digest of its params
	Principal string                     `json:"pr"`          // digest of the caller's principal
	Answers   map[string]json.RawMessage `json:"a"`           // the answers so far
	Asked     []string                   `json:"k,omitempty"` // the keys asked last
	Round     int                        `json:"r,omitempty"` // the round the retry runs: 1 for the first
	Steps     []byte                     `json:"s,omitempty"` // the results of Once, sealed

	key *ringKey // the key that verified the state
}

// stateVersion is the version of the request states this server issues
// and accepts. Version 1 (before key rings) had neither kid nor audience.
const (
	stateVersion = 2
	statePrefix  = "v2."
)

// stateSigner signs and verifies request states with the server's key
// ring, for one audience: the server's name.
type stateSigner struct {
	ring    *KeyRing
	aud     string
	ttl     time.Duration
	claimer StateClaimer // nil: states may be used until they expire
}

func newStateSigner(ring *KeyRing, audience string, ttl time.Duration) stateSigner {
	if ring == nil || len(ring.keys) == 0 {
		ring = NewRandomKeyRing()
	}
	if ttl <= 0 {
		ttl = defaultRequestStateTTL
	}
	return stateSigner{ring: ring, aud: audience, ttl: ttl}
}

// newStateID returns a unique ID for a request state: 128 random bits.
func newStateID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sign returns the requestState for st, which it marks with the version
// and the audience: "v2.", the kid of the signing key, ".", the payload,
// ".", and the HMAC-SHA256 of all that precedes the last dot under the
// key, base64url. The kid is thus inside the MAC, and the audience inside
// the payload.
func (s *stateSigner) sign(st *requestState) (string, error) {
	st.Version, st.Audience = stateVersion, s.aud
	payload, err := jsonv2.Marshal(st, jsonv2.Deterministic(true))
	if err != nil {
		return "", err
	}
	k := s.ring.signer()
	enc := base64.RawURLEncoding
	n := len(statePrefix) + len(k.kid) + 1 + enc.EncodedLen(len(payload)) + 1 + enc.EncodedLen(sha256.Size)
	if n > maxRequestState {
		return "", fmt.Errorf("mcp: request state of %d bytes exceeds %d", n, maxRequestState)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, statePrefix...)
	buf = append(buf, k.kid...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	var sig [sha256.Size]byte
	sum(&k.macs, &sig, buf, "")
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig[:])
	return string(buf), nil
}

// errBadState is the error a requestState that fails verification gets.
func errBadState(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: requestState " + why}
}

// verify checks a requestState and returns what it carries. The kid
// names the key to check the MAC with: no other key is tried.
func (s *stateSigner) verify(state string, now time.Time) (*requestState, error) {
	if len(state) > maxRequestState {
		return nil, errBadState("too large")
	}
	rest, ok := strings.CutPrefix(state, statePrefix)
	if !ok {
		return nil, errBadState("is not one this server issued")
	}
	kid, rest, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, errBadState("is malformed")
	}
	k := s.ring.key(kid)
	if k == nil {
		return nil, errBadState("failed verification (signed with a key this server does not hold)")
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return nil, errBadState("is malformed")
	}
	p64, m64 := rest[:i], rest[i+1:]
	enc := base64.RawURLEncoding
	var sig [sha256.Size]byte
	if len(m64) != enc.EncodedLen(len(sig)) {
		return nil, errBadState("failed verification (altered, or signed with another key)")
	}
	if n, err := enc.Decode(sig[:], []byte(m64)); err != nil || n != len(sig) {
		return nil, errBadState("failed verification (altered, or signed with another key)")
	}
	var want [sha256.Size]byte
	sum(&k.macs, &want, nil, state[:len(state)-len(m64)-1])
	if !hmac.Equal(sig[:], want[:]) {
		return nil, errBadState("failed verification (altered, or signed with another key)")
	}
	payload, err := enc.DecodeString(p64)
	if err != nil {
		return nil, errBadState("is malformed")
	}
	var st requestState
	if err := jsonv2.Unmarshal(payload, &st); err != nil || st.Version != stateVersion {
		return nil, errBadState("is malformed")
	}
	if st.Audience != s.aud {
		return nil, errBadState("was issued by another server")
	}
	if now.Unix() > st.Expires {
		return nil, errBadState("has expired")
	}
	st.key = k
	return &st, nil
}

// digest returns a short, stable digest of s.
func digest(s []byte) string {
	sum := sha256.Sum256(s)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// paramsDigest digests the params of a request as the client sent them
// but for _meta and the retry's own members, which change from one try to
// the next.
func paramsDigest(p Params) (string, error) {
	responses, state := retryFields(p)
	meta := p.meta()
	savedMeta, savedResponses, savedState := *meta, *responses, *state
	*meta, *responses, *state = Meta{}, nil, ""
	data, err := marshalStd(p)
	*meta, *responses, *state = savedMeta, savedResponses, savedState
	if err != nil {
		return "", err
	}
	return digest(data), nil
}

// startInputRound prepares the run of a handler serving req, a 2026-07-28
// request of a method that supports input requests: it verifies the
// request state, if any, and gathers the client's answers.
func (s *Server) startInputRound(ctx context.Context, req Request) (context.Context, *inputRound, error) {
	p := req.Parameters()
	responses, state := retryFields(p)
	rc := &carrierCtx[inputRoundKey, inputRound]{Context: ctx} // the round and its context in one allocation
	r := &rc.v
	r.caps = p.meta().ClientCapabilities // maps made when needed
	if *state != "" {
		st, err := s.states.verify(*state, time.Now())
		if err != nil {
			return nil, nil, err
		}
		pd, err := paramsDigest(p)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case st.Method != req.Method() || st.Params != pd:
			return nil, nil, errBadState("was issued for another request")
		case st.Principal != digest([]byte(transport.PrincipalFromContext(ctx))):
			return nil, nil, errBadState("was issued to another caller")
		}
		var steps map[string]json.RawMessage
		if len(st.Steps) > 0 {
			if steps, err = openSteps(st.key, st.Steps); err != nil {
				return nil, nil, errBadState("failed verification (its steps do not open)")
			}
		}
		if err := s.claimState(ctx, st); err != nil {
			return nil, nil, err
		}
		r.answers = st.Answers
		r.steps.load(st.Round, steps)
	}
	for k, v := range *responses {
		if r.answers == nil {
			r.answers = make(map[string]json.RawMessage, len(*responses))
		}
		if len(r.answers) >= 4*maxInputRequests && r.answers[k] == nil {
			break // bounded: enough answers for any handler
		}
		r.answers[k] = v
	}
	return rc, r, nil
}

// finishInputRound turns a run that asked for input the client has not
// given into an InputRequiredResult; it returns nil when the run asked
// for none.
func (s *Server) finishInputRound(ctx context.Context, req Request, r *inputRound) (*InputRequiredResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) == 0 {
		return nil, nil
	}
	pd, err := paramsDigest(req.Parameters())
	if err != nil {
		return nil, err
	}
	steps, next, err := r.steps.snapshot()
	if err != nil {
		return nil, fmt.Errorf("mcp: encoding the results of Once: %w", err)
	}
	var sealed []byte
	if steps != nil {
		if sealed, err = s.states.sealSteps(steps); err != nil {
			return nil, err
		}
	}
	st := &requestState{
		ID:        newStateID(),
		Expires:   time.Now().Add(s.states.ttl).Unix(),
		Method:    req.Method(),
		Params:    pd,
		Principal: digest([]byte(transport.PrincipalFromContext(ctx))),
		Answers:   r.used, // may be nil: the first round
		Asked:     slices.Sorted(maps.Keys(r.pending)),
		Round:     next,
		Steps:     sealed,
	}
	state, err := s.states.sign(st)
	if err != nil {
		return nil, err
	}
	return &InputRequiredResult{ResultType: ResultTypeInputRequired, InputRequests: r.pending, RequestState: state}, nil
}

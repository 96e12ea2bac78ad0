package mcp

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// Work done once across input rounds. On a 2026-07-28 request a handler
// that asks for input runs again from the start for each round of
// answers (see [ErrInputRequired]); in the handshake era it runs once.
// Once makes the work of a named step happen once in both eras: the first
// run records the step's result, and the requestState carries it to the
// retries, which read it instead of running the step again. The results
// are sealed (AES-256-GCM under a key derived from the signing key of
// [ServerOptions.Keys]) inside the signed state, so the client can
// neither read nor alter them, and any replica that shares the keys reads
// them.

// Bounds on the steps of one request, the same in both eras.
const (
	// maxOnceSteps bounds the steps Once records for one request.
	maxOnceSteps = 64
	// maxOnceBytes bounds the bytes of the steps' names and JSON results
	// of one request; sealed and encoded they take less than half of
	// the 1 MiB a request state may hold.
	maxOnceBytes = 256 << 10
)

// ErrOnceLimit is the error [Once] returns, wrapped, for a step past the
// bounds of what one request may record: 64 steps, and 256 KiB of step
// names and JSON results in all. Past the count the step's function is
// not run; past the size it has run, and its result cannot be carried to
// the next round, so the handler should fail the request rather than ask
// for input.
var ErrOnceLimit = errors.New("mcp: past the bound on the steps one request records")

// stepStore records the steps of one request: those of earlier rounds,
// from the request state, and those of this run.
type stepStore struct {
	mu      sync.Mutex
	round   int                        // 0 on the first run, n on the n-th retry
	results map[string]json.RawMessage // recorded results, by step name
	size    int                        // bytes of the names and results recorded
	running map[string]chan struct{}   // steps whose function runs, closed when it returns
}

type stepStoreKey struct{}

// carrierCtx is a context carrying a value of its own, v, which Value
// returns (a pointer to it) for the key type K: one allocation for the
// context and the value, rather than a context.WithValue over the value.
// A request's record of steps and its input round go so.
type carrierCtx[K comparable, T any] struct {
	context.Context
	v T
}

// Value implements [context.Context].
func (c *carrierCtx[K, T]) Value(key any) any {
	if _, ok := key.(K); ok {
		return &c.v
	}
	return c.Context.Value(key)
}

// withStepStore returns ctx with a record of steps for a request that
// runs once: a request of the handshake era that could ask for input.
func withStepStore(ctx context.Context) context.Context {
	return &carrierCtx[stepStoreKey, stepStore]{Context: ctx}
}

// stepsFrom returns the record of steps of the request ctx serves, or nil
// when it serves none that can ask for input.
func stepsFrom(ctx context.Context) *stepStore {
	if s, ok := ctx.Value(stepStoreKey{}).(*stepStore); ok {
		return s
	}
	if r := inputRoundFrom(ctx); r != nil {
		return &r.steps
	}
	return nil
}

// Once runs fn, the step name of a handler, once for the request ctx
// serves, and returns its result. On a 2026-07-28 request the handler
// runs again from the start for each round of input it asks for (see
// [ServerRequest.Elicit]); the first run that completes the step records
// its result in the request state, and the runs that follow return the
// recorded result without calling fn. In the handshake era the handler
// runs once, and so does fn. Work with effects outside the handler (a
// charge, a message sent, a row written) that comes before the
// handler's last ask belongs in Once; so does anything whose result must
// not change from one round to the next (a generated ID, the time).
//
//	orderID, err := mcp.Once(ctx, "reserve", func(ctx context.Context) (string, error) {
//		return inventory.Reserve(ctx, in.Item) // once, whatever the rounds
//	})
//	if err != nil {
//		return "", err
//	}
//	answer, _, err := mcp.ElicitAs[confirmation](ctx, req, "Confirm order "+orderID+"?")
//	if err != nil {
//		return "", err // on 2026-07-28, mcp.ErrInputRequired: the retry skips "reserve"
//	}
//
// Names are the handler's own and must be the same in every run. Once
// with a name it has recorded for this request returns the recorded
// result, in this run as in the next (and two goroutines of one run that
// call Once with the same name run fn once between them). A client that
// sends the same request state twice gets the recorded results both
// times; a request sent anew, without the state, is a new request. The result travels as
// JSON, encoded and decoded as the SDK encodes a typed tool's output, so
// T must survive a round trip through JSON; Once returns the decoded
// copy in every run and both eras, so a T that does not survive it fails
// the same everywhere. A recorded result that no longer decodes into T
// (the handler changed between rounds) is an error, not a reason to run
// fn again.
//
// An error from fn is returned and not recorded: the next run calls fn
// again. So fn should fail only when its work did not happen; when it
// may have happened in part, return a result that says so instead. The
// results are bounded, the same in both eras (see [ErrOnceLimit]), and
// sealed in the signed request state: the client can neither read nor
// alter them, a state that was altered is refused with -32602, and
// nothing is kept on the server between rounds.
//
// Once records for the requests that can ask for input: tools/call,
// prompts/get and resources/read. Elsewhere (or with a ctx not from a
// handler) it calls fn and returns what fn returns.
func Once[T any](ctx context.Context, name string, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if name == "" {
		return zero, errors.New("mcp: Once needs a step name")
	}
	s := stepsFrom(ctx)
	if s == nil {
		return fn(ctx)
	}
	for {
		s.mu.Lock()
		if data, ok := s.results[name]; ok {
			s.mu.Unlock()
			return decodeStep[T](name, data)
		}
		if ch := s.running[name]; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue // recorded, or failed: then run it here
			case <-ctx.Done():
				return zero, ctx.Err()
			}
		}
		if len(s.results)+len(s.running) >= maxOnceSteps {
			s.mu.Unlock()
			return zero, fmt.Errorf("mcp: step %q: more than %d steps in one request: %w", name, maxOnceSteps, ErrOnceLimit)
		}
		if s.running == nil {
			s.running = map[string]chan struct{}{}
		}
		ch := make(chan struct{})
		s.running[name] = ch
		s.mu.Unlock()
		return runStep(ctx, s, name, ch, fn)
	}
}

// runStep runs the step name and records its result.
func runStep[T any](ctx context.Context, s *stepStore, name string, ch chan struct{}, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	defer func() {
		// Also when fn panics: a waiter must not wait for ever.
		s.mu.Lock()
		delete(s.running, name)
		s.mu.Unlock()
		close(ch)
	}()
	v, err := fn(ctx)
	if err != nil {
		return zero, err
	}
	data, err := marshalStd(v)
	if err != nil {
		return zero, fmt.Errorf("mcp: step %q: encoding its result: %w", name, err)
	}
	s.mu.Lock()
	if n := s.size + len(name) + len(data); n > maxOnceBytes {
		s.mu.Unlock()
		return zero, fmt.Errorf("mcp: step %q: its result of %d bytes brings the request's steps to %d bytes, more than %d: %w",
			name, len(data), n, maxOnceBytes, ErrOnceLimit)
	}
	if s.results == nil {
		s.results = map[string]json.RawMessage{}
	}
	s.results[name] = data
	s.size += len(name) + len(data)
	s.mu.Unlock()
	return decodeStep[T](name, data)
}

// decodeStep decodes the recorded result of the step name.
func decodeStep[T any](name string, data []byte) (T, error) {
	var v T
	if err := unmarshalStd(data, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("mcp: step %q: decoding its recorded result into %v: %w", name, reflect.TypeFor[T](), err)
	}
	return v, nil
}

// InputRound reports which run of its handler the request ctx serves: 0
// on the first run, and n on the run of the n-th retry of a 2026-07-28
// request that asked for input (the handler runs again from the start
// for each), which is the number of rounds of answers so far. It is 0 in the handshake era, where the handler runs once,
// and for a ctx not from a handler.
func InputRound(ctx context.Context) int {
	s := stepsFrom(ctx)
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.round
}

// load fills s with the round and the steps a verified request state
// carries.
func (s *stepStore) load(round int, results map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.round = round
	s.results = results
	s.size = 0
	for k, v := range results {
		s.size += len(k) + len(v)
	}
}

// snapshot returns the JSON of the recorded steps, or nil when there are
// none, and the round the next run will be.
func (s *stepStore) snapshot() ([]byte, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.results) == 0 {
		return nil, s.round + 1, nil
	}
	data, err := marshalStd(s.results)
	return data, s.round + 1, err
}

// stepsAEAD returns the cipher that seals the steps in a request state
// signed with k.
func stepsAEAD(k *ringKey) (cipher.AEAD, error) {
	block, err := aes.NewCipher(k.steps) // 32 bytes: AES-256
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(block)
}

// sealSteps seals the JSON of the recorded steps under the signing key.
func (s *stateSigner) sealSteps(plain []byte) ([]byte, error) {
	aead, err := stepsAEAD(s.ring.signer())
	if err != nil {
		return nil, err
	}
	return aead.Seal(nil, nil, plain, nil), nil
}

// openSteps opens the steps of a request state that k verified.
func openSteps(k *ringKey, sealed []byte) (map[string]json.RawMessage, error) {
	aead, err := stepsAEAD(k)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, nil, sealed, nil)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := unmarshalStd(plain, &m); err != nil {
		return nil, err
	}
	return m, nil
}

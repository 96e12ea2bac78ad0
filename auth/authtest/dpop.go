package authtest

import (
	"crypto/rand"
	"errors"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/auth"
)

// nonceState is the server's DPoP nonce and the one before it.
type nonceState struct {
	current, previous string
	issued            time.Time
}

// currentNonce returns the DPoP nonce to give clients, making a new one
// every NonceTTL.
func (s *Server) currentNonce() string {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nonces.current == "" || now.Sub(s.nonces.issued) >= NonceTTL {
		s.nonces.previous = s.nonces.current
		s.nonces.current = rand.Text()
		s.nonces.issued = now
	}
	return s.nonces.current
}

// nonceValid reports whether n is the current nonce or the one before.
func (s *Server) nonceValid(n string) bool {
	cur := s.currentNonce()
	s.mu.Lock()
	defer s.mu.Unlock()
	return n != "" && (n == cur || n == s.nonces.previous)
}

func errDPoP(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_dpop_proof", description: desc}
}

// checkDPoP checks the DPoP proof of a token request (RFC 9449 section
// 4.3) and returns its key's thumbprint, or "" when the request has no
// proof and none is required.
func (s *Server) checkDPoP(r *http.Request) (string, *oauthError) {
	proofs := r.Header.Values("DPoP")
	switch {
	case len(proofs) > 1:
		return "", errDPoP("more than one DPoP header")
	case len(proofs) == 0 && s.opts.RequireDPoP:
		return "", errDPoP("a DPoP proof is required")
	case len(proofs) == 0:
		return "", nil
	}
	p, err := auth.ParseDPoPProof(proofs[0], &auth.DPoPCheck{
		Method: http.MethodPost,
		URL:    s.URL + pathToken,
		Window: ProofWindow,
		Now:    s.now,
	})
	if err != nil {
		return "", errDPoP(err.Error())
	}
	if s.opts.RequireDPoPNonce && !s.nonceValid(p.Nonce) {
		return "", &oauthError{
			status: http.StatusBadRequest, code: "use_dpop_nonce",
			description: "the DPoP proof must carry the server's nonce",
			header:      http.Header{"Dpop-Nonce": {s.currentNonce()}},
		}
	}
	switch err := s.proofIDs.add(p.Thumbprint+" "+p.ID, p.IssuedAt.Add(ProofWindow+time.Second), s.now()); {
	case errors.Is(err, errSeen):
		return "", errDPoP("the proof was used before (jti replayed)")
	case err != nil:
		return "", errUnavailable("too many DPoP proofs to remember; try later")
	}
	return p.Thumbprint, nil
}

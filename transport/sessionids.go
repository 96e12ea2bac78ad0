package transport

// SessionIDTagger mints the session IDs of an HTTP handler and checks
// those requests present. A minted ID carries a tag (a truncated MAC
// under a secret key) that CheckSessionID verifies, so that a request
// naming a forged or random session ID is refused (404, as an unknown
// session) before any session is looked up, in this process or in a
// shared store. Minted IDs must be unguessable (128 random bits or more)
// and of visible ASCII (0x21 to 0x7E). Package mcp's KeyRing is one,
// shared by replicas that hold the same keys; see
// [StreamableHTTPOptions.SessionIDs]. Implementations are safe for
// concurrent use.
type SessionIDTagger interface {
	// MintSessionID returns a new session ID.
	MintSessionID() string
	// CheckSessionID reports whether id carries a valid tag. It must be
	// cheap and must not block: it runs on every request naming a
	// session, before anything else looks at the ID.
	CheckSessionID(id string) bool
}

package auth

import (
	"net/http"
	"strings"
)

// Bounds on what ParseWWWAuthenticate reads from a response: a server (or
// whatever answers in its place) decides what the header holds.
const (
	// maxChallengeBytes bounds the WWW-Authenticate text parsed, all
	// header lines together: 16 KiB; the rest is ignored.
	maxChallengeBytes = 16 << 10
	// maxChallenges bounds the challenges returned: 16.
	maxChallenges = 16
	// maxChallengeParams bounds the parameters kept per challenge: 32.
	maxChallengeParams = 32
)

// A Challenge is one authentication challenge of a WWW-Authenticate
// header (RFC 9110 section 11.6.1), such as
//
//	Bearer error="insufficient_scope", scope="files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"
type Challenge struct {
	// Scheme is the authentication scheme as sent, such as "Bearer" or
	// "DPoP"; schemes compare case-insensitively.
	Scheme string
	// Token68 is the challenge's token68 form, when it has one instead
	// of parameters.
	Token68 string
	// Params holds the auth-params by lower-case name, with quoted
	// strings unquoted. A repeated name keeps its first value.
	Params map[string]string
}

// Param returns the value of the named parameter (case-insensitive), or
// "".
func (c *Challenge) Param(name string) string {
	return c.Params[strings.ToLower(name)]
}

// Is reports whether the challenge's scheme is scheme, ignoring case.
func (c *Challenge) Is(scheme string) bool {
	return strings.EqualFold(c.Scheme, scheme)
}

// Scopes returns the challenge's scope parameter split at spaces.
func (c *Challenge) Scopes() []string {
	return strings.Fields(c.Param("scope"))
}

// ParseWWWAuthenticate parses the WWW-Authenticate header lines of a
// response (h.Values("WWW-Authenticate")) into their challenges, in
// order. It is lenient: text it cannot read is skipped, never an error.
// At most 16 KiB of text, 16 challenges and 32 parameters per challenge
// are read.
func ParseWWWAuthenticate(values []string) []Challenge {
	var out []Challenge
	total := 0
	for _, v := range values {
		if total+len(v) > maxChallengeBytes {
			v = v[:max(0, maxChallengeBytes-total)]
		}
		total += len(v)
		p := challengeParser{s: v}
		out = p.parse(out)
		if len(out) >= maxChallenges || total >= maxChallengeBytes {
			break
		}
	}
	if len(out) > maxChallenges {
		out = out[:maxChallenges]
	}
	return out
}

// challenges returns the challenges of a response's headers.
func challenges(h http.Header) []Challenge {
	return ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) parse(out []Challenge) []Challenge {
	for p.i < len(p.s) && len(out) < maxChallenges {
		p.skipListSeparators()
		if p.i >= len(p.s) {
			break
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skipSpace()
		if t, ok := p.token68(); ok {
			c.Token68 = t
		} else {
			p.params(&c)
		}
		out = append(out, c)
	}
	return out
}

// params reads auth-params until the end or the start of the next
// challenge (a token not followed by "=").
func (p *challengeParser) params(c *Challenge) {
	for p.i < len(p.s) {
		p.skipListSeparators()
		start := p.i
		name := p.token()
		if name == "" {
			if p.i < len(p.s) {
				p.i++ // junk: skip it
			}
			continue
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			p.i = start // the next challenge's scheme
			return
		}
		p.i++ // '='
		p.skipSpace()
		var val string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			val = p.quoted()
		} else {
			val = p.token()
		}
		name = strings.ToLower(name)
		if _, dup := c.Params[name]; !dup && len(c.Params) < maxChallengeParams {
			c.Params[name] = val
		}
	}
}

// token68 reads a token68 (RFC 9110 section 11.2) when one stands alone
// before the end or a comma.
func (p *challengeParser) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && isToken68(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if k < len(p.s) && p.s[k] != ',' {
		return "", false
	}
	t := p.s[p.i:j]
	// A lone token followed by a comma is a scheme-only challenge's
	// neighbour, not a token68, unless it carries token68-only bytes.
	if !strings.ContainsAny(t, "=/+~.") {
		return "", false
	}
	p.i = k
	return t, true
}

func (p *challengeParser) token() string {
	j := p.i
	for j < len(p.s) && isTokenChar(p.s[j]) {
		j++
	}
	t := p.s[p.i:j]
	p.i = j
	return t
}

// quoted reads a quoted-string, undoing quoted-pairs; an unterminated one
// runs to the end.
func (p *challengeParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case ch == '\\' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case ch == '"':
			p.i++
			return b.String()
		default:
			b.WriteByte(ch)
			p.i++
		}
	}
	return b.String()
}

func (p *challengeParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *challengeParser) skipListSeparators() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

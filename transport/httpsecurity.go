//go:build !mcpkit_nohttp

package transport

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// HTTPSecurity configures the checks an MCP HTTP server makes on every
// request before anything else, against cross-site requests from browsers
// and DNS rebinding. The zero value is the safe default:
//
//   - A request with an Origin header is refused (403) unless the origin
//     has the same host and port as the request's Host header, or is listed
//     in AllowedOrigins. Requests without Origin (non-browser clients) pass.
//   - A server listening on a loopback address refuses (403) requests whose
//     Host is not a loopback name (localhost, 127.0.0.1, [::1], any port)
//     or listed in AllowedHosts. A DNS-rebinding page in a browser sends its
//     own host name, so it is refused.
type HTTPSecurity struct {
	// AllowedOrigins lists further origins allowed to call, such as
	// "https://app.example.com". "*" allows any origin.
	AllowedOrigins []string
	// AllowedHosts lists further Host header values accepted by a server on
	// a loopback address, with or without a port.
	AllowedHosts []string
	// DisableHostCheck turns the loopback Host check off.
	DisableHostCheck bool
}

// check returns the HTTP status and reason to refuse r with, or 0.
func (s *HTTPSecurity) check(r *http.Request) (int, string) {
	if origin := headerValue(r.Header, "Origin"); origin != "" && !s.originAllowed(origin, r.Host) {
		return http.StatusForbidden, "Forbidden: origin not allowed"
	}
	if !s.DisableHostCheck && onLoopback(r) && !s.hostAllowed(r.Host) {
		return http.StatusForbidden, "Forbidden: host not allowed"
	}
	return 0, ""
}

func (s *HTTPSecurity) originAllowed(origin, host string) bool {
	if slices.Contains(s.AllowedOrigins, "*") || slices.Contains(s.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, host) || (isLoopbackHost(u.Host) && isLoopbackHost(host) && portOf(u) == portOfHost(host))
}

func (s *HTTPSecurity) hostAllowed(host string) bool {
	if isLoopbackHost(host) {
		return true
	}
	name := hostName(host)
	for _, h := range s.AllowedHosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// onLoopback reports whether r arrived on a loopback address.
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostName strips the port from a Host header value.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

func portOfHost(host string) string {
	if _, p, err := net.SplitHostPort(host); err == nil {
		return p
	}
	return ""
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return ""
}

// isLoopbackHost reports whether a Host value names the local machine.
func isLoopbackHost(host string) bool {
	name := strings.ToLower(hostName(host))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// accepts reports whether an Accept header admits the media type typ
// ("application/json" or "text/event-stream"). It allocates nothing,
// however long the header: a peer cannot make it work for more than the
// header's bytes.
func accepts(header []string, typ string) bool {
	major, _, _ := strings.Cut(typ, "/")
	for _, h := range header {
		for part := range strings.SplitSeq(h, ",") {
			mt, params, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			if !strings.EqualFold(mt, typ) && mt != "*/*" &&
				!(len(mt) == len(major)+2 && strings.EqualFold(mt[:len(major)], major) && mt[len(major):] == "/*") {
				continue
			}
			if !qZero(params) {
				return true
			}
		}
	}
	return false
}

// acceptsJSONAndSSE reports whether header, a POST's Accept values,
// accepts both application/json and text/event-stream, as the transport
// requires. The values clients send (this package's client among them)
// are matched whole before the general parse of accepts.
func acceptsJSONAndSSE(header []string) bool {
	if len(header) == 1 {
		switch header[0] {
		case acceptJSONOrSSE, "application/json,text/event-stream",
			"text/event-stream, application/json", "text/event-stream,application/json":
			return true
		}
	}
	return accepts(header, "application/json") && accepts(header, "text/event-stream")
}

// qZero reports whether the parameters of a media range (what follows
// its first ';') set q to zero: explicitly not acceptable.
func qZero(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			v = strings.Trim(strings.TrimSpace(v), `"`)
			return v != "" && strings.TrimLeft(v, "0.") == ""
		}
	}
	return false
}

// isJSONContent reports whether a Content-Type header is application/json.
func isJSONContent(ct string) bool {
	if ct == "application/json" {
		return true // the common case, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

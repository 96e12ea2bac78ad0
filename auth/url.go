package auth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrInsecureURL reports a URL that authorization refuses: one that is not
// HTTPS and not a loopback HTTP URL, or that is not absolute.
var ErrInsecureURL = errors.New("auth: URL must be https (or http on loopback)")

// CheckURL reports whether raw may be used as an authorization server,
// resource, metadata or redirect URL: it must be absolute, carry no
// fragment and no user information, and use HTTPS, except on loopback
// (http://127.0.0.1, http://[::1], http://localhost), which is accepted for
// development and tests. The error wraps [ErrInsecureURL].
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q does not parse", ErrInsecureURL, raw)
	}
	return checkURL(u)
}

func checkURL(u *url.URL) error {
	switch {
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%w: %q is not an absolute URL", ErrInsecureURL, u.Redacted())
	case u.User != nil:
		return fmt.Errorf("%w: %q carries user information", ErrInsecureURL, u.Redacted())
	case u.Fragment != "":
		return fmt.Errorf("%w: %q has a fragment", ErrInsecureURL, u.Redacted())
	case strings.EqualFold(u.Scheme, "https"):
		return nil
	case strings.EqualFold(u.Scheme, "http") && IsLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%w: %q", ErrInsecureURL, u.Redacted())
}

// IsLoopback reports whether host (a host name or IP address, without a
// port) names the local machine: "localhost" or a loopback IP address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

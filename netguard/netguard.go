// Package netguard decides which network endpoints Switchboard may dial.
//
// CheckURL is the floor applied to every configured URL before connecting:
// only http, https, ws and wss; no credentials in the URL; a remote host needs
// https or wss; loopback, private, link-local, CGNAT and cloud-metadata
// addresses are refused unless the server opts in with allow_local_endpoint,
// which admits exactly that URL's own host:port, plaintext included.
// Cloud-metadata endpoints are refused even then.
//
// CheckURL judges only what the URL says. Host names other than the
// localhost family are not resolved here; a name that resolves to a private
// address is the business of the guarded dialer, which uses the same range
// table through [Blocked] and [IsMetadata].
package netguard

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// An Error is a URL that CheckURL refused.
type Error struct {
	// URL is the URL as written, minus its userinfo, query and fragment
	// (any of which may carry a credential).
	URL string
	// Host is the host as written (no brackets, port or userinfo); empty
	// when the URL did not get that far.
	Host string
	// Addr is the address Host denotes when it is an IP literal in any
	// spelling; the zero Addr otherwise.
	Addr netip.Addr
	// Reason says what is wrong and, where there is one, what to do.
	Reason string
}

func (e *Error) Error() string {
	u := e.URL
	if u == "" {
		return "url: " + e.Reason
	}
	if needsQuote(u) {
		u = strconv.Quote(u)
	}
	return "url " + u + ": " + e.Reason
}

func needsQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f || s[i] == '"' {
			return true
		}
	}
	return false
}

const (
	credentialsReason = "credentials in the URL are not allowed; use headers with a {{secrets.NAME}} placeholder"
	allowHint         = "set allow_local_endpoint = true to allow this server to reach it"
)

// CheckURL reports whether raw may be dialed. allowLocal is the server's
// allow_local_endpoint. The error never contains the URL's userinfo.
//
// With allowLocal, every address [Blocked] reports is admitted for this URL's
// own host (plaintext included), and so is plaintext to a host name: the
// operator has said the server is local, and the guarded dialer checks what
// the name resolves to. Cloud-metadata endpoints are refused regardless.
// A non-nil error is always an *Error.
func CheckURL(raw string, allowLocal bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &Error{URL: redactRaw(raw), Reason: "not a valid URL: " + parseReason(err)}
	}
	e := &Error{URL: redactedURL(raw, u)}
	fail := func(format string, args ...any) error {
		e.Reason = fmt.Sprintf(format, args...)
		return e
	}

	var secure bool
	switch u.Scheme {
	case "https", "wss":
		secure = true
	case "http", "ws":
	case "":
		return fail("missing scheme; want https://, wss://, http:// or ws://")
	default:
		// url.Parse limits a scheme to [a-z0-9+.-], so quoting it is safe.
		return fail("scheme %q is not allowed; want https, wss, http or ws", u.Scheme)
	}
	// A '@' in the fragment means the writer most likely put a password
	// containing '#' into the userinfo; treat it as the credential it is.
	if u.User != nil || strings.Contains(u.Fragment, "@") {
		return fail(credentialsReason)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return fail("a host is required")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fail("invalid port %q", p)
		}
	}

	host := u.Hostname()
	e.Host = host
	addr, isIP, err := ParseHost(host)
	if err != nil {
		return fail("%v", err)
	}
	if !isIP {
		name := canonicalName(host)
		switch {
		case isMetadataName(name):
			return fail("%s is a cloud metadata endpoint; it is refused even with allow_local_endpoint", host)
		case IsLoopbackName(name):
			if !allowLocal {
				return fail("%s is a loopback name; %s", host, allowHint)
			}
			return nil
		case !secure && !allowLocal:
			return fail("plain %s to a remote host is not allowed; use %ss (or set allow_local_endpoint = true if %s is on the local network)", u.Scheme, u.Scheme, host)
		}
		return nil
	}

	e.Addr = addr
	shown := host
	if canon := addr.String(); canon != host {
		shown = host + " (" + canon + ")"
	}
	if IsMetadata(addr) {
		return fail("%s is a cloud metadata endpoint; it is refused even with allow_local_endpoint", shown)
	}
	if reason, blocked := Blocked(addr); blocked {
		if !allowLocal {
			return fail("%s is %s; %s", shown, reason, allowHint)
		}
		return nil
	}
	if !secure {
		return fail("plain %s to a remote host is not allowed; use %ss", u.Scheme, u.Scheme)
	}
	return nil
}

// redactedURL renders u without userinfo, query or fragment. When raw shows
// signs of a credential that url.Parse did not file as userinfo (an '@' in
// the fragment or in an opaque URL), it falls back to redactRaw.
func redactedURL(raw string, u *url.URL) string {
	if strings.Contains(u.Fragment, "@") || strings.Contains(u.Opaque, "@") {
		return redactRaw(raw)
	}
	v := *u
	v.User = nil
	v.RawQuery, v.ForceQuery = "", false
	v.Fragment, v.RawFragment = "", ""
	return v.String()
}

// redactRaw renders a URL that may not parse without anything that could be
// userinfo. It over-redacts on purpose: everything from the authority's start
// up to the last '@' anywhere goes (a password may contain '/', '?' or '#',
// which end the authority for url.Parse), then the query and fragment.
func redactRaw(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "//"); i >= 0 {
		prefix, rest = raw[:i+2], raw[i+2:]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return prefix + rest
}

// parseReason returns the reason of a url.Parse error without the quoted
// fragment of input it usually carries: that fragment can be part of a
// password (`https://u:p/w@h` fails with `invalid port ":p"`).
func parseReason(err error) string {
	msg := err.Error()
	if ue, ok := err.(*url.Error); ok {
		msg = ue.Err.Error()
	}
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "net/url: "))
	if msg == "" {
		msg = "malformed"
	}
	return msg
}

// The longest host name and label DNS allows.
const (
	maxHostName = 253
	maxLabel    = 63
)

// ParseHost parses a URL host as written (no brackets, no port) the way
// resolvers and browsers would: an IPv6 literal (zone allowed), an IPv4
// address in any inet_aton spelling (decimal 2130706433, octal 0177.0.0.1,
// hex 0x7f.0.0.1, short forms 127.1), or a host name. A host that ends in a
// numeric label but is no valid IPv4 address is an error, not a name, since
// some resolver may still read it as an address. Names must be ASCII
// (punycode for internationalized names) letters, digits, '-', '_' and
// '.', at most 253 characters of labels of at most 63, as DNS allows.
func ParseHost(host string) (addr netip.Addr, isIP bool, err error) {
	if host == "" {
		return netip.Addr{}, false, fmt.Errorf("a host is required")
	}
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return netip.Addr{}, false, fmt.Errorf("%q is not a valid IPv6 address", host)
		}
		return a, true, nil
	}
	s := strings.TrimSuffix(host, ".")
	if s == "" {
		return netip.Addr{}, false, fmt.Errorf("%q is not a valid host name", host)
	}
	// DNS's bounds (RFC 1035 §2.3.4, in the text form without the final
	// dot): a longer name resolves nowhere, and it is no name to quote
	// whole in a message.
	if len(s) > maxHostName {
		return netip.Addr{}, false, fmt.Errorf("a host name is at most %d characters, and this one has %d", maxHostName, len(s))
	}
	labels := strings.Split(s, ".")
	if looksNumeric(labels[len(labels)-1]) {
		a, ok := parseIPv4(labels)
		if !ok {
			return netip.Addr{}, false, fmt.Errorf("%q looks like an IPv4 address but is not a valid one", host)
		}
		return a, true, nil
	}
	for _, l := range labels {
		if l == "" {
			return netip.Addr{}, false, fmt.Errorf("%q is not a valid host name (empty label)", host)
		}
		if len(l) > maxLabel {
			return netip.Addr{}, false, fmt.Errorf("a label of a host name (between dots) is at most %d characters, and %s… has %d", maxLabel, l[:16], len(l))
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case c >= 0x80:
				// Go's HTTP client maps internationalized names through IDNA, which turns
				// fullwidth digits like "１２７.０.０.１" into an IPv4 address we never saw.
				return netip.Addr{}, false, fmt.Errorf("%q is not a valid host name; write internationalized names in punycode (xn--…)", host)
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
			default:
				return netip.Addr{}, false, fmt.Errorf("%q is not a valid host name", host)
			}
		}
	}
	return netip.Addr{}, false, nil
}

// looksNumeric reports whether a label would make a WHATWG URL parser treat
// the host as IPv4: all decimal digits, or 0x followed by hex digits.
func looksNumeric(l string) bool {
	if l == "" {
		return false
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		for i := 2; i < len(l); i++ {
			if !isHex(l[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseIPv4 implements inet_aton: one to four parts, each decimal, octal
// (leading 0) or hex (0x); the last part fills all remaining bytes.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums [4]uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(parts) - 1
	var v uint64
	for i := 0; i < last; i++ {
		if nums[i] > 255 {
			return netip.Addr{}, false
		}
		v |= nums[i] << (8 * (3 - i))
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v |= nums[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" { // WHATWG reads a bare "0x" as zero
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	// ParseUint with an explicit base accepts neither signs nor underscores.
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

func canonicalName(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// IsLoopbackName reports whether a host name always means this machine:
// localhost, any *.localhost (RFC 6761), localhost.localdomain, ip6-localhost
// and ip6-loopback. Case and one trailing dot are ignored.
func IsLoopbackName(host string) bool {
	name := canonicalName(host)
	switch name {
	case "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback":
		return true
	}
	return strings.HasSuffix(name, ".localhost")
}

// isMetadataName reports names that reach a cloud metadata service.
func isMetadataName(host string) bool {
	switch canonicalName(host) {
	case "metadata.google.internal", "metadata.goog":
		return true
	}
	return false
}

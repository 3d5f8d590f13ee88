// Package clientaddr finds the address of the client that sent a request
// when it came through proxies (a load balancer): the one place that says
// who "the client" is, for the per-client session limit, the login
// throttle and the logs.
//
// Behind a balancer every connection comes from the balancer's address,
// and a limit per address becomes one limit for everyone. A balancer says
// whom it forwards for in two ways, and both are believed only from peers
// the operator lists as trusted proxies ([Trusted]); from anyone else they
// are a claim any client can make, and believing it would let one client
// pass as many (escaping its limit) or as another (spending theirs):
//
//   - X-Forwarded-For, read by [Handler]: walked from the right, the
//     addresses of trusted proxies skipped, the first other address is the
//     client's. Each proxy appends the address it received the request
//     from, so the entries right of the first untrusted one were written by
//     proxies we trust, and those left of it by whoever sent it, which is
//     why they are ignored.
//   - The PROXY protocol (v1 text or v2 binary, HAProxy's), read by
//     [Listener] before the first byte of HTTP: the connection's
//     RemoteAddr becomes the source address the header gives.
//
// Trusting nothing, the default, leaves every address as the connection
// has it. [Of] returns what Handler found, and is what code asks when it
// means "the client".
package clientaddr

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Trusted is a set of proxies, by address prefix, whose word on a
// connection's client is believed. A nil *Trusted trusts nothing.
type Trusted struct {
	prefixes []netip.Prefix
}

// ParseTrusted parses a list of trusted proxies, each a CIDR prefix
// ("10.0.0.0/8", "fd00::/8") or a single address ("127.0.0.1"). An empty
// list returns nil: nothing trusted. The error names the entry at fault.
func ParseTrusted(list []string) (*Trusted, error) {
	if len(list) == 0 {
		return nil, nil
	}
	t := &Trusted{}
	for i, s := range list {
		p, err := ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy [%d]: %w", i, err)
		}
		t.prefixes = append(t.prefixes, p)
	}
	return t, nil
}

// ParsePrefix parses one trusted proxy: a CIDR prefix or an address (a
// prefix of its full length). Bits set beyond the prefix's length are
// refused ("10.0.0.1/8"): they suggest the writer meant something else.
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf(`%q is not an address or a CIDR prefix such as "10.0.0.0/8"`, s)
		}
		if p.Addr().Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q: a zone is not allowed", s)
		}
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("%q has bits set beyond its /%d; write %q", s, p.Bits(), p.Masked())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf(`%q is not an address or a CIDR prefix such as "10.0.0.0/8"`, s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Contains reports whether a is a trusted proxy's address.
func (t *Trusted) Contains(a netip.Addr) bool {
	if t == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client returns the client's address for a request that peer sent with
// header h: peer itself unless peer is trusted and h has X-Forwarded-For;
// then the rightmost address in it that is not a trusted proxy's (the
// leftmost, when all are). A malformed entry reached in the walk makes it
// peer: a proxy we trust writes well-formed entries, so a malformed one
// was not written by one, and nothing left of it can be believed either.
func (t *Trusted) Client(peer netip.Addr, h http.Header) netip.Addr {
	peer = peer.Unmap()
	if !t.Contains(peer) {
		return peer
	}
	values := h.Values("X-Forwarded-For")
	if len(values) == 0 {
		return peer
	}
	// Several X-Forwarded-For lines are one list, in order (RFC 9110 §5.3).
	list := strings.Join(values, ",")
	client := peer
	for list != "" {
		var entry string
		if i := strings.LastIndexByte(list, ','); i >= 0 {
			list, entry = list[:i], list[i+1:]
		} else {
			list, entry = "", list
		}
		a, ok := parseEntry(strings.TrimSpace(entry))
		if !ok {
			return peer
		}
		client = a
		if !t.Contains(a) {
			return a
		}
	}
	return client
}

// parseEntry parses one X-Forwarded-For entry: an address, bracketed or
// not, with or without a port (some proxies add one).
func parseEntry(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() && a.Zone() == "" {
			return a, true
		}
	}
	return netip.Addr{}, false
}

type clientKey struct{}

// Handler serves h with each request's client found: [Of] returns the
// address X-Forwarded-For gives when the request came from a trusted
// proxy (t), else the connection's. A nil t trusts nothing; the request's
// RemoteAddr is left as the connection has it either way (the peer, for
// the logs that need it).
func Handler(h http.Handler, t *Trusted) http.Handler {
	if t == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			h.ServeHTTP(w, r)
			return
		}
		if c := t.Client(ap.Addr(), r.Header); c != ap.Addr().Unmap() {
			r = r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
		}
		h.ServeHTTP(w, r)
	})
}

// Of returns the address of the client that sent r: the one [Handler]
// found behind trusted proxies, else the IP of r.RemoteAddr (which a
// [Listener] has made the PROXY header's source). It is the zero Addr for
// a request that came over no IP connection (a Unix socket).
func Of(r *http.Request) netip.Addr {
	if a, ok := r.Context().Value(clientKey{}).(netip.Addr); ok {
		return a
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// String is [Of] for a log line: the client's IP, or r.RemoteAddr as it
// is when Of has none.
func String(r *http.Request) string {
	if a := Of(r); a.IsValid() {
		return a.String()
	}
	return r.RemoteAddr
}

// Key is what a client is counted under, in the limits per client: the
// client's IP ([Of]), an IPv6 one cut to its /64 (one host commonly has a
// whole /64 to pick from); r.RemoteAddr as it is when Of has none.
func Key(r *http.Request) string {
	a := Of(r)
	if !a.IsValid() {
		return r.RemoteAddr
	}
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(64)
		return p.String()
	}
	return a.String()
}

// addrOf returns the IP of a net.Addr, the zero Addr for a non-IP one.
func addrOf(a net.Addr) netip.Addr {
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip.Unmap()
	case nil:
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

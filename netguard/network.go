package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
)

// A Network is the operator's policy for every outbound connection (the
// [network] table of Switchboard's config): ranges to admit or refuse on top
// of the block list, and an explicit proxy. The zero Network and a nil
// *Network change nothing.
type Network struct {
	// AllowCIDRs admits blocked addresses in these prefixes, any port
	// (see [Dialer]). Cloud-metadata addresses stay refused.
	AllowCIDRs []netip.Prefix
	// DenyCIDRs refuses addresses in these prefixes, public ones included.
	DenyCIDRs []netip.Prefix
	// Proxy, when set, is an http:// or https:// proxy that requests to
	// public addresses go through; its userinfo, if any, is already
	// resolved and is sent as Proxy-Authorization. HTTP_PROXY and
	// HTTPS_PROXY are ignored either way.
	Proxy *url.URL
}

// Transport returns an *http.Transport (see [NewHTTPTransport]) that dials
// through a copy of d with n's ranges added.
//
// With a proxy, the dialer sees only the proxy's address, so each request's
// target is judged before the proxy is asked for it: its host is resolved
// and every answer checked as [Dialer.DialContext] would, and a refusal
// fails the request with a *[DialError] before anything is sent. A target
// whose answers are all blocked addresses that d admits (a server's
// allow_local_endpoint, an allowed CIDR) is dialed directly, since a proxy
// on the way out cannot usually reach it; every other target goes through
// the proxy. The proxy's own host:port is admitted by the dialer (resolved
// once, now, bounded by ctx, like [LocalEndpoint]), but is not an admitted
// target. The proxy resolves a target name again on its own: protection
// against DNS rebinding of a proxied target is the proxy's.
func (n *Network) Transport(ctx context.Context, d *Dialer) *http.Transport {
	judge := *d
	if n == nil {
		return NewHTTPTransport(&judge)
	}
	judge.AllowCIDRs = append(slices.Clip(d.AllowCIDRs), n.AllowCIDRs...)
	judge.DenyCIDRs = append(slices.Clip(d.DenyCIDRs), n.DenyCIDRs...)
	if n.Proxy == nil {
		return NewHTTPTransport(&judge)
	}
	proxy := *n.Proxy
	bare := proxy
	bare.User = nil
	// Unresolved now: the dialer refuses a blocked proxy address, saying
	// which, and a public one needs no admitting.
	local, _ := LocalEndpoint(ctx, d.Resolver, bare.String())
	dial := judge
	dial.AllowLocal = append(slices.Clip(judge.AllowLocal), local...)
	t := NewHTTPTransport(&dial)
	t.Proxy = judge.proxyFunc(&proxy)
	return t
}

// proxyFunc is an http.Transport Proxy function: proxy, for a target d
// admits that is not all local; nil (direct) for one whose answers are all
// blocked but admitted; an error for one d refuses.
func (d *Dialer) proxyFunc(proxy *url.URL) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		port := req.URL.Port()
		if port == "" {
			p := defaultPort(req.URL.Scheme)
			if p == 0 {
				return nil, &DialError{Addr: req.URL.Host, Reason: fmt.Sprintf("scheme %q has no default port", req.URL.Scheme)}
			}
			port = strconv.Itoa(int(p))
		}
		targets, err := d.Check(req.Context(), "tcp", net.JoinHostPort(req.URL.Hostname(), port))
		if err != nil {
			return nil, err
		}
		for _, t := range targets {
			if _, blocked := Blocked(t.Addr()); !blocked {
				return proxy, nil
			}
		}
		return nil, nil
	}
}

// CheckURL is [CheckURL] with n's ranges: a URL whose host is an address
// literal in AllowCIDRs passes as allow_local_endpoint would let it (the
// operator has said the range is reachable, plaintext included), and one in
// DenyCIDRs is refused. Cloud-metadata addresses stay refused. Host names
// are judged by the dialer, which resolves them. A non-nil error is always
// an *[Error].
func (n *Network) CheckURL(raw string, allowLocal bool) error {
	err := CheckURL(raw, allowLocal)
	if n == nil || (len(n.AllowCIDRs) == 0 && len(n.DenyCIDRs) == 0) {
		return err
	}
	var e *Error
	if err != nil {
		if !errors.As(err, &e) || !e.Addr.IsValid() {
			return err
		}
	} else {
		u, perr := url.Parse(raw)
		if perr != nil {
			return nil
		}
		a, isIP, _ := ParseHost(u.Hostname())
		if !isIP {
			return nil
		}
		e = &Error{URL: redactedURL(raw, u), Host: u.Hostname(), Addr: a}
	}
	d := &Dialer{AllowCIDRs: n.AllowCIDRs, DenyCIDRs: n.DenyCIDRs}
	reason, refused := d.verdict(e.Addr, 0)
	_, blocked := Blocked(e.Addr)
	switch {
	case refused && err == nil:
		// Only DenyCIDRs can refuse what CheckURL passed.
		e.Reason = e.Host + " is " + reason
		return e
	case !refused && blocked:
		return nil // admitted by AllowCIDRs
	}
	return err
}

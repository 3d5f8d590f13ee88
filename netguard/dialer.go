package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrRefused is what every refusal by a [Dialer] or a [RedirectPolicy]
// matches with errors.Is.
var ErrRefused = errors.New("netguard: refused")

// A Resolver looks host names up. *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// A Dialer dials TCP connections only to addresses Switchboard may reach.
//
// DialContext resolves a host name once, refuses the connection if any
// answer is refused, and then dials the checked address literally. There is
// no second lookup, so a DNS answer that changes between the check and the
// connect (DNS rebinding) cannot reach an internal address. Every answer is
// judged, not only the first, because the system would try the others when
// the first fails.
//
// An address is refused when it is a cloud-metadata endpoint ([IsMetadata],
// always, whatever the allow lists say), when it is in DenyCIDRs, or when
// [Blocked] reports it and neither AllowLocal nor AllowCIDRs admits it.
//
// The zero Dialer is ready to use and refuses every [Blocked] address. A
// Dialer must not be changed while in use.
type Dialer struct {
	// AllowLocal admits exactly these address:port pairs (typically the
	// authored endpoint of a server with allow_local_endpoint; see
	// [LocalEndpoint]). An IPv4-mapped form matches its IPv4 address.
	AllowLocal []netip.AddrPort
	// AllowCIDRs admits blocked addresses in these prefixes, any port.
	AllowCIDRs []netip.Prefix
	// DenyCIDRs refuses addresses in these prefixes, even public ones and
	// even those AllowLocal or AllowCIDRs admit.
	DenyCIDRs []netip.Prefix
	// Resolver looks names up; nil means net.DefaultResolver.
	Resolver Resolver
	// Timeout bounds each connection attempt; 0 means 30s.
	Timeout time.Duration
}

// defaultDialTimeout bounds a TCP connect when the caller sets none: an
// address that swallows SYNs must not hold a goroutine forever.
const defaultDialTimeout = 30 * time.Second

// A DialError is a connection a [Dialer] refused. It matches [ErrRefused].
type DialError struct {
	// Addr is the address asked for, host:port as the caller wrote it.
	Addr string
	// Resolved is the address that was refused: the literal itself, or one
	// of the host name's answers. Zero when the refusal came earlier.
	Resolved netip.Addr
	// Reason says what the address is and why that is refused.
	Reason string

	literal bool // the host was an address, in some spelling
}

func (e *DialError) Error() string {
	host, _, _ := net.SplitHostPort(e.Addr)
	switch {
	case !e.Resolved.IsValid():
		return "dial " + e.Addr + ": " + e.Reason
	case !e.literal:
		return "dial " + e.Addr + ": resolved to " + e.Resolved.String() + ", " + e.Reason
	case host == e.Resolved.String():
		return "dial " + e.Addr + ": " + host + " is " + e.Reason
	}
	return "dial " + e.Addr + ": " + host + " is " + e.Resolved.String() + ", " + e.Reason
}

// Is reports whether target is [ErrRefused].
func (e *DialError) Is(target error) bool { return target == ErrRefused }

// DialContext connects to addr ("host:port") on network "tcp", "tcp4" or
// "tcp6", after checking it as described on [Dialer]. A refusal is a
// *[DialError]; a failure to resolve or connect is returned as the net
// package reports it.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	targets, err := d.Check(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = defaultDialTimeout
	}
	nd := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	var first error
	for _, t := range targets {
		// A literal address: the net package dials it without a lookup.
		c, err := nd.DialContext(ctx, network, t.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// Check resolves addr once and returns the addresses DialContext would
// dial, in the resolver's order, or the reason it would refuse. It does not
// connect.
func (d *Dialer) Check(ctx context.Context, network, addr string) ([]netip.AddrPort, error) {
	literal := false
	refuse := func(a netip.Addr, format string, args ...any) error {
		return &DialError{Addr: addr, Resolved: a, Reason: fmt.Sprintf(format, args...), literal: literal}
	}
	ipNet := ""
	switch network {
	case "tcp":
		ipNet = "ip"
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	default:
		return nil, refuse(netip.Addr{}, "network %q is not allowed; only tcp", network)
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, refuse(netip.Addr{}, "not a host:port address")
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, refuse(netip.Addr{}, "invalid port %q", portStr)
	}
	var addrs []netip.Addr
	// A zone (fe80::1%eth0) is not a host name; ParseHost accepts it too.
	lit, isIP, err := ParseHost(host)
	switch {
	case err != nil:
		return nil, refuse(netip.Addr{}, "%v", err)
	case isIP:
		literal = true
		addrs = []netip.Addr{lit}
	default:
		name := canonicalName(host)
		if isMetadataName(name) {
			return nil, refuse(netip.Addr{}, "%s is a cloud metadata endpoint", host)
		}
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err = r.LookupNetIP(ctx, ipNet, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		if reason, refused := d.verdict(a, uint16(port)); refused {
			return nil, refuse(a, "%s", reason)
		}
		if (network == "tcp4" && !a.Unmap().Is4()) || (network == "tcp6" && !a.Is6()) {
			continue
		}
		out = append(out, netip.AddrPortFrom(a, uint16(port)))
	}
	if len(out) == 0 {
		return nil, refuse(netip.Addr{}, "no %s address for %s", ipNet, host)
	}
	return out, nil
}

// verdict says whether a may be dialed on port, and if not, why. The reason
// completes "ADDR is …".
func (d *Dialer) verdict(a netip.Addr, port uint16) (reason string, refused bool) {
	if !a.IsValid() {
		return "not a valid address", true
	}
	if IsMetadata(a) {
		return "a cloud metadata endpoint; it is refused even when local endpoints are allowed", true
	}
	carried := unwrap(a)
	for _, p := range d.DenyCIDRs {
		if p.Contains(a.WithZone("")) || p.Contains(carried) {
			return "in the denied range " + p.String(), true
		}
	}
	reason, blocked := Blocked(a)
	if !blocked {
		return "", false
	}
	for _, ap := range d.AllowLocal {
		if ap.Port() == port && sameAddr(ap.Addr(), a) {
			return "", false
		}
	}
	for _, p := range d.AllowCIDRs {
		if p.Contains(a.WithZone("")) || p.Contains(carried) {
			return "", false
		}
	}
	if len(d.AllowLocal) > 0 {
		return reason + ", and not the endpoint allow_local_endpoint admits", true
	}
	return reason, true
}

// sameAddr compares addresses ignoring zones and IPv4 mapping.
func sameAddr(a, b netip.Addr) bool {
	return a.WithZone("").Unmap() == b.WithZone("").Unmap()
}

// LocalEndpoint returns the address:port pairs that allow_local_endpoint
// admits for rawURL: the URL's own host and port (80 or 443 by scheme when
// absent), resolved once now when the host is a name (localhost, a compose
// service). Only answers that need admitting are returned (those [Blocked]
// reports), never a cloud-metadata address. A failure to resolve is
// returned; the caller may still dial, and the dialer will then refuse.
func LocalEndpoint(ctx context.Context, r Resolver, rawURL string) ([]netip.AddrPort, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("not a valid URL: %s", parseReason(err))
	}
	port := defaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("invalid port %q", p)
		}
		port = uint16(n)
	}
	if port == 0 {
		return nil, fmt.Errorf("scheme %q has no default port", u.Scheme)
	}
	host := u.Hostname()
	lit, isIP, err := ParseHost(host)
	if err != nil {
		return nil, err
	}
	addrs := []netip.Addr{lit}
	if !isIP {
		if isMetadataName(host) {
			return nil, fmt.Errorf("%s is a cloud metadata endpoint", host)
		}
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
	}
	var out []netip.AddrPort
	for _, a := range addrs {
		if _, blocked := Blocked(a); blocked && !IsMetadata(a) {
			out = append(out, netip.AddrPortFrom(a.WithZone(""), port))
		}
	}
	return out, nil
}

func defaultPort(scheme string) uint16 {
	switch strings.ToLower(scheme) {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	}
	return 0
}

// NewHTTPTransport returns an *http.Transport that dials through d.
//
// It ignores HTTP_PROXY, HTTPS_PROXY and NO_PROXY: a proxy would make the
// connection's real target invisible to d (the proxy, not d, would resolve
// and dial it). TLS is verified against the URL's host name, not the
// address dialed. The timeouts bound each phase but not a response's
// headers, since a Streamable HTTP server may answer a long tool call only
// when it is done.
func NewHTTPTransport(d *Dialer) *http.Transport {
	return &http.Transport{
		Proxy:       nil,
		DialContext: d.DialContext,
		// A handshake that stalls must not outlive a connect timeout.
		TLSHandshakeTimeout: 10 * time.Second,
		// Idle keep-alive connections each hold a goroutine and a socket.
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		// A server that never answers 100-continue must not stall the body.
		ExpectContinueTimeout: time.Second,
		// A custom DialContext disables HTTP/2 unless asked for.
		ForceAttemptHTTP2: true,
	}
}

// alwaysCredential are headers that carry credentials whatever a config
// says, dropped on every cross-origin hop.
var alwaysCredential = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// A RedirectPolicy decides which redirects an http.Client follows, and
// what they carry: never a Referer, and to another origin no credential.
// Use its CheckRedirect method as http.Client.CheckRedirect.
//
// Every hop's URL is checked like a configured one ([CheckURL]); only a hop
// to the original origin (scheme, host and port of the first request) keeps
// AllowLocal, so allow_local_endpoint never admits a redirect target. The
// [Dialer] under the client checks the address it connects to anyway.
//
// A hop to another origin is refused unless AllowCrossOrigin; when allowed,
// it carries none of CredentialHeaders, Authorization, Proxy-Authorization
// or Cookie. Headers that a RoundTripper under the client adds itself are
// out of its reach: such a client must refuse cross-origin redirects.
type RedirectPolicy struct {
	// AllowLocal is the server's allow_local_endpoint, for same-origin hops.
	AllowLocal bool
	// AllowCrossOrigin lets a redirect leave the first request's origin.
	AllowCrossOrigin bool
	// CredentialHeaders are the names of headers that came from config or
	// from a secret; they never follow a redirect to another origin.
	CredentialHeaders []string
	// MaxHops bounds the redirects of one request; 0 means 5.
	MaxHops int
	// Network is the operator's policy; each hop is checked with
	// [Network.CheckURL], so an allowed range admits a hop's literal
	// address as it admits a configured one. Nil: the floor alone.
	Network *Network
}

// A RedirectError is a redirect a [RedirectPolicy] refused. It matches
// [ErrRefused].
type RedirectError struct {
	From, To string // origins or URLs, without userinfo, query or fragment
	Reason   string
	Err      error // the *Error from CheckURL, if that refused
}

func (e *RedirectError) Error() string {
	return "redirect from " + e.From + " to " + e.To + " refused: " + e.Reason
}

func (e *RedirectError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrRefused].
func (e *RedirectError) Is(target error) bool { return target == ErrRefused }

// CheckRedirect is an http.Client CheckRedirect function. Besides
// refusing hops, it removes the Referer header net/http puts on a
// redirected request, on every hop: it carries the previous URL, query
// included, which may hold a token.
func (p *RedirectPolicy) CheckRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	max := p.MaxHops
	if max <= 0 {
		max = 5
	}
	first := via[0].URL
	from, to := origin(via[len(via)-1].URL), origin(req.URL)
	if len(via) > max {
		return &RedirectError{From: from, To: to, Reason: fmt.Sprintf("more than %d redirects", max)}
	}
	same := origin(first) == to
	if err := p.Network.CheckURL(req.URL.String(), same && p.AllowLocal); err != nil {
		reason := err.Error()
		var ne *Error
		if errors.As(err, &ne) {
			reason = ne.Reason
		}
		if !same {
			// The hint to set allow_local_endpoint would mislead: it never
			// admits a redirect target.
			if r, ok := strings.CutSuffix(reason, "; "+allowHint); ok {
				reason = r + "; allow_local_endpoint never admits a redirect target"
			}
		}
		return &RedirectError{From: from, To: to, Reason: reason, Err: err}
	}
	if same {
		return nil
	}
	if !p.AllowCrossOrigin {
		return &RedirectError{From: from, To: to, Reason: "it leaves the origin " + origin(first) + "; set allow_cross_origin_redirects = true to follow it (credentials stay behind)"}
	}
	for _, h := range alwaysCredential {
		req.Header.Del(h)
	}
	for _, h := range p.CredentialHeaders {
		req.Header.Del(h)
	}
	return nil
}

// Origin returns u's origin as [RedirectPolicy] compares them:
// scheme://host:port, lower case, with the default port made explicit, so
// that https://a and https://A:443 are one origin.
func Origin(u *url.URL) string { return origin(u) }

func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if port == "" {
		if p := defaultPort(scheme); p != 0 {
			port = strconv.Itoa(int(p))
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

package netguard

import "net/netip"

// embed says how a row's addresses carry an IPv4 address to be judged instead.
type embed uint8

const (
	embedNone   embed = iota
	embedLast32       // the IPv4 address is the low 32 bits (mapped, compatible, NAT64)
	embed6to4         // the IPv4 address is bits 16–47 (2002:AABB:CCDD::)
)

type rangeRow struct {
	prefix netip.Prefix
	reason string // completes "ADDR is …"
	embed  embed
}

func p(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// ranges is the one table of address ranges Switchboard refuses by default.
// The first matching row wins, so exact addresses and narrow prefixes come
// before the ranges that contain them. A row with an embed kind is not a
// verdict: the IPv4 address it carries is judged instead.
var ranges = []rangeRow{
	// IPv4.
	{p("0.0.0.0/32"), "the unspecified address (RFC 1122)", embedNone},
	{p("0.0.0.0/8"), `a "this network" address (RFC 1122)`, embedNone},
	{p("10.0.0.0/8"), "a private address (RFC 1918)", embedNone},
	{p("100.64.0.0/10"), "a shared CGNAT address (RFC 6598)", embedNone},
	{p("127.0.0.0/8"), "a loopback address (RFC 1122)", embedNone},
	{p("169.254.0.0/16"), "a link-local address (RFC 3927)", embedNone},
	{p("172.16.0.0/12"), "a private address (RFC 1918)", embedNone},
	{p("192.0.0.0/24"), "an IETF protocol assignment (RFC 6890)", embedNone},
	{p("192.0.2.0/24"), "a documentation address (RFC 5737)", embedNone},
	{p("192.88.99.0/24"), "a deprecated 6to4 relay anycast address (RFC 7526)", embedNone},
	{p("192.168.0.0/16"), "a private address (RFC 1918)", embedNone},
	{p("198.18.0.0/15"), "a benchmarking address (RFC 2544)", embedNone},
	{p("198.51.100.0/24"), "a documentation address (RFC 5737)", embedNone},
	{p("203.0.113.0/24"), "a documentation address (RFC 5737)", embedNone},
	{p("224.0.0.0/4"), "a multicast address (RFC 5771)", embedNone},
	{p("255.255.255.255/32"), "the broadcast address (RFC 919)", embedNone},
	{p("240.0.0.0/4"), "a reserved address (RFC 1112)", embedNone},

	// IPv6.
	{p("::/128"), "the unspecified address (RFC 4291)", embedNone},
	{p("::1/128"), "a loopback address (RFC 4291)", embedNone},
	{p("::ffff:0:0/96"), "an IPv4-mapped address (RFC 4291)", embedLast32},
	{p("::/96"), "an IPv4-compatible address (RFC 4291, deprecated)", embedLast32},
	{p("64:ff9b::/96"), "a NAT64 address (RFC 6052)", embedLast32},
	{p("2002::/16"), "a 6to4 address (RFC 3056)", embed6to4},
	{p("2001::/32"), "a Teredo address (RFC 4380)", embedNone},
	{p("2001:2::/48"), "a benchmarking address (RFC 5180)", embedNone},
	{p("2001::/23"), "an IETF protocol assignment (RFC 2928)", embedNone},
	{p("2001:db8::/32"), "a documentation address (RFC 3849)", embedNone},
	{p("3fff::/20"), "a documentation address (RFC 9637)", embedNone},
	{p("fc00::/7"), "a unique local address (RFC 4193)", embedNone},
	{p("fe80::/10"), "a link-local address (RFC 4291)", embedNone},
	{p("fec0::/10"), "a site-local address (RFC 3879)", embedNone},
	{p("ff00::/8"), "a multicast address (RFC 4291)", embedNone},
	// Everything else outside global unicast: 64:ff9b:1::/48 local-use NAT64
	// (RFC 8215), 100::/64 discard (RFC 6666), ::ffff:0:0:0/96 translated
	// (RFC 2765), 5f00::/16 SRv6 (RFC 9602) and the unassigned space.
	{p("::/0"), "not a global unicast address (outside 2000::/3, RFC 4291)", embedNone},
}

// global is the only IPv6 space that may be public (RFC 4291 §2.4).
var global = p("2000::/3")

// Blocked reports whether addr is in a range Switchboard refuses by default,
// and which one. An address that carries an IPv4 address (IPv4-mapped,
// IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged as that
// IPv4 address. A zone is ignored; the zero Addr is blocked.
func Blocked(addr netip.Addr) (reason string, blocked bool) {
	if !addr.IsValid() {
		return "not a valid address", true
	}
	addr = addr.WithZone("")
	for _, r := range ranges {
		if !r.prefix.Contains(addr) {
			continue
		}
		if r.prefix.Bits() == 0 && global.Contains(addr) {
			return "", false
		}
		if r.embed == embedNone {
			return r.reason, true
		}
		v4 := embedded(addr, r.embed)
		reason, blocked := Blocked(v4)
		if !blocked {
			return "", false
		}
		return reason + " carried in " + r.reason, true
	}
	return "", false // public IPv4
}

func embedded(addr netip.Addr, e embed) netip.Addr {
	b := addr.As16()
	if e == embed6to4 {
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
}

// unwrap returns the IPv4 address addr carries, if any, else addr.
func unwrap(addr netip.Addr) netip.Addr {
	addr = addr.WithZone("")
	if addr.Is4In6() {
		return addr.Unmap()
	}
	for _, r := range ranges {
		if r.embed != embedNone && r.prefix.Contains(addr) {
			if addr.Is6() && (addr == netip.IPv6Unspecified() || addr == netip.IPv6Loopback()) {
				return addr
			}
			return embedded(addr, r.embed)
		}
	}
	return addr
}

// metadata are cloud metadata and credential endpoints. They hand out
// instance credentials to anything that asks, so they are refused even when
// a server is allowed to reach local addresses.
var metadata = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "AWS, Azure, GCP, OCI and others",
	netip.MustParseAddr("fd00:ec2::254"):   "AWS IMDS over IPv6",
	netip.MustParseAddr("169.254.170.2"):   "AWS ECS task credentials",
	netip.MustParseAddr("169.254.170.23"):  "AWS EKS Pod Identity",
	netip.MustParseAddr("fd00:ec2::23"):    "AWS EKS Pod Identity over IPv6",
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud",
}

// IsMetadata reports whether addr is a cloud metadata endpoint, also when it
// is carried in an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address.
func IsMetadata(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	if _, ok := metadata[addr.WithZone("")]; ok {
		return true
	}
	_, ok := metadata[unwrap(addr)]
	return ok
}

// IsLocal reports whether addr is an address allow_local_endpoint exists
// for: unspecified, loopback, private, unique local, link-local or CGNAT,
// in any IPv4-carrying form.
func IsLocal(addr netip.Addr) bool {
	a := unwrap(addr)
	if !a.IsValid() {
		return false
	}
	return a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || cgnat.Contains(a)
}

var cgnat = p("100.64.0.0/10")

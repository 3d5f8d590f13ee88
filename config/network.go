package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
)

// Network is the [network] table: the operator's policy for every outbound
// HTTP, SSE and WebSocket connection (MCP servers and LLM providers).
//
//	[network]
//	allow_cidrs = ["10.20.0.0/16"]          # admitted although private; any port
//	deny_cidrs  = ["203.0.113.0/24"]        # refused although public or allowed
//	proxy       = "http://proxy.corp:3128"  # http or https; credentials only as placeholders
//
// Cloud-metadata addresses stay refused whatever allow_cidrs says.
// HTTP_PROXY and HTTPS_PROXY from the environment are ignored with or
// without proxy. A proxy that needs a login takes it from placeholders
// only: "http://{{secrets.proxy_user}}:{{secrets.proxy_password}}@proxy.corp:3128"
// (the password, or the user when there is no password, must be one whole
// placeholder). The zero value means no extra ranges and no proxy. A later
// file's keys override an earlier file's one by one.
type Network struct {
	AllowCIDRs []netip.Prefix
	DenyCIDRs  []netip.Prefix
	// Proxy is the proxy URL as written, placeholders unresolved; see
	// [Network.Resolve].
	Proxy string

	// Source is where the last [network] table was declared; zero when
	// none was.
	Source Position
}

// networkTable declares [network]. Every check depends on one value only,
// so each is done as a file is read, each problem on its own line.
var networkTable = mergedTable[Network]{
	key: "network",
	fields: decode.Table[Network]{
		decode.List("allow_cidrs", decode.TOML, func(n *Network) *[]netip.Prefix { return &n.AllowCIDRs }, readPrefixes, checkPrefixAt),
		decode.List("deny_cidrs", decode.TOML, func(n *Network) *[]netip.Prefix { return &n.DenyCIDRs }, readPrefixes, checkPrefixAt),
		decode.String("proxy", decode.TOML, func(n *Network) *string { return &n.Proxy }, func(p string) string {
			if p == "" {
				return ""
			}
			return checkProxy(p)
		}),
	},
	config:        func(c *Config) *Network { return &c.Network },
	source:        func(n *Network) *Position { return &n.Source },
	checkOnDecode: true,
}

// readPrefixes reads an array of CIDR prefixes ("10.20.0.0/16",
// "fd00:1::/48"). A prefix with host bits set is refused: 10.20.1.5/16
// most likely means something else than 10.20.0.0/16. Any element that is
// wrong drops the list.
func readPrefixes(d *decode.Decoder, field string, v any) ([]netip.Prefix, bool) {
	list, ok := d.StringList(field, v)
	if !ok {
		return nil, false
	}
	out := make([]netip.Prefix, 0, len(list))
	good := true
	for i, s := range list {
		f := decode.IndexPath(field, i)
		p, err := netip.ParsePrefix(s)
		switch {
		case hasPlaceholder(s):
			d.Errorf(f, "placeholders are not allowed here")
		case err != nil:
			d.Errorf(f, `invalid CIDR prefix %q (want an address/bits such as "10.20.0.0/16" or "fd00:1::/48")`, s)
		default:
			if msg := checkPrefix(p); msg != "" {
				d.Errorf(f, "%s", msg)
				break
			}
			out = append(out, p)
			continue
		}
		good = false
	}
	if !good {
		return nil, false
	}
	return out, true
}

func checkPrefixAt(ps []netip.Prefix, i int) string { return checkPrefix(ps[i]) }

// checkPrefix returns what is wrong with a parsed prefix, or "".
func checkPrefix(p netip.Prefix) string {
	switch {
	case !p.IsValid():
		return "invalid CIDR prefix " + p.String()
	case p != p.Masked():
		return fmt.Sprintf("%q has bits set past /%d; write %q", p.String(), p.Bits(), p.Masked().String())
	}
	return ""
}

// checkProxy returns what is wrong with a proxy URL, or "".
func checkProxy(raw string) string {
	const want = "must be an http:// or https:// proxy URL such as http://proxy.corp:3128"
	user, rest := splitProxyUserinfo(raw)
	if hasPlaceholder(rest) {
		return "placeholders are only allowed in the proxy's user and password"
	}
	u, perr := url.Parse(rest)
	switch {
	case perr != nil:
		return want
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%s; scheme %q is not supported", want, u.Scheme)
	case u.Host == "" || u.Hostname() == "" || u.Opaque != "":
		return want + "; a host is required"
	case u.User != nil:
		// url.Parse found userinfo that splitProxyUserinfo did not: an '@'
		// after the authority. Never quote it.
		return credentialsInProxy
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return want + ", without path, query or fragment"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("invalid port %q", p)
		}
	}
	if _, _, err := netguard.ParseHost(u.Hostname()); err != nil {
		return err.Error()
	}
	if user == "" {
		return ""
	}
	name, pass, hasPass := strings.Cut(user, ":")
	whole := name
	if hasPass {
		whole = pass
	}
	ps, err := secret.Parse(user)
	if err != nil {
		return err.Error()
	}
	if len(ps) == 0 {
		return credentialsInProxy
	}
	wp, _ := secret.Parse(whole)
	if len(wp) != 1 || wp[0].Start != 0 || wp[0].End != len(whole) {
		return credentialsInProxy
	}
	for _, p := range ps {
		if p.Kind == "env" && isSecretEnvVar(p.Name) {
			return fmt.Sprintf("%s reads a secret's environment variable; write {{secrets.NAME}} instead", p)
		}
	}
	return ""
}

const credentialsInProxy = `credentials in the proxy URL must be placeholders: config files are shared and committed; write "http://{{secrets.proxy_user}}:{{secrets.proxy_password}}@host:port" (the password, or the user when there is none, one whole placeholder)`

// splitProxyUserinfo splits "scheme://user:pass@host:port" into the
// userinfo ("" when none) and the URL without it. Placeholders contain no
// '/', '?', '#' or '@', so the authority ends where url.Parse would end it.
func splitProxyUserinfo(raw string) (userinfo, rest string) {
	scheme, after, ok := strings.Cut(raw, "://")
	if !ok {
		return "", raw
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	at := strings.LastIndexByte(after[:end], '@')
	if at < 0 {
		return "", raw
	}
	return after[:at], scheme + "://" + after[at+1:]
}

// Resolve returns the policy n describes, for the host and the LLM
// providers: the proxy's placeholders expanded (each value registered with
// red, when non-nil, so that a proxy password never reaches output), and
// the proxy's user and password escaped into the URL. An unresolved
// placeholder is an error naming it, never a value.
func (n Network) Resolve(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (*netguard.Network, error) {
	out := &netguard.Network{AllowCIDRs: n.AllowCIDRs, DenyCIDRs: n.DenyCIDRs}
	if n.Proxy == "" {
		return out, nil
	}
	if msg := checkProxy(n.Proxy); msg != "" {
		return nil, fmt.Errorf("network.proxy: %s", msg)
	}
	user, rest := splitProxyUserinfo(n.Proxy)
	u, err := url.Parse(rest)
	if err != nil {
		return nil, fmt.Errorf("network.proxy: %w", err)
	}
	if user != "" {
		expand := func(s string) (string, error) {
			return expandCredential("network.proxy", s, getenv, secrets, red)
		}
		name, pass, hasPass := strings.Cut(user, ":")
		if name, err = expand(name); err != nil {
			return nil, err
		}
		if hasPass {
			if pass, err = expand(pass); err != nil {
				return nil, err
			}
			u.User = url.UserPassword(name, pass)
		} else {
			u.User = url.User(name)
		}
	}
	out.Proxy = u
	return out, nil
}

// guard is n without the proxy, for URL checks.
func (n *Network) guard() *netguard.Network {
	return &netguard.Network{AllowCIDRs: n.AllowCIDRs, DenyCIDRs: n.DenyCIDRs}
}

package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	const (
		ok       = ""
		private  = "private address (RFC 1918)"
		loopback = "loopback"
		meta     = "cloud metadata endpoint"
		creds    = "credentials in the URL are not allowed"
		plain    = "to a remote host is not allowed"
		scheme   = "is not allowed; want https"
		badIPv4  = "looks like an IPv4 address but is not a valid one"
		noHost   = "a host is required"
	)
	tests := []struct {
		url        string
		allowLocal bool
		want       string // "" for allowed, else a substring of the error
	}{
		// Public hosts.
		{"https://mcp.example.com/mcp", false, ok},
		{"wss://mcp.example.com/ws", false, ok},
		{"HTTPS://MCP.Example.COM./mcp", false, ok},
		{"https://8.8.8.8:443/mcp", false, ok},
		{"https://[2606:4700:4700::1111]/mcp", false, ok},
		{"http://mcp.example.com/mcp", false, "plain http to a remote host"},
		{"ws://mcp.example.com/", false, "plain ws to a remote host"},
		{"http://8.8.8.8/", false, plain},
		{"http://8.8.8.8/", true, plain},         // allowLocal is no licence for public plaintext
		{"http://mcp-server:8080/mcp", true, ok}, // a compose service name, opted in
		// Schemes and shape.
		{"ftp://example.com/", false, scheme},
		{"file:///etc/passwd", false, scheme},
		{"javascript:alert(1)", false, scheme},
		{"gopher://127.0.0.1:6379/_", true, scheme},
		{"//example.com/mcp", false, "missing scheme"},
		{"https://", false, noHost},
		{"https:///mcp", false, noHost},
		{"https://:443/mcp", false, noHost},
		{"http:example.com", false, noHost},
		{"https://example.com:0/", false, "invalid port"},
		{"https://example.com:65536/", false, "invalid port"},
		{"https://exa mple.com/", false, "not a valid URL"},
		{"https://exa%00mple.com/", false, "not a valid"},
		// Credentials and userinfo tricks.
		{"https://user:hunter2pass@example.com/", false, creds},
		{"https://good.com@10.0.0.1/", false, creds},
		{"https://good.com@10.0.0.1/", true, creds},
		{"https://@example.com/", false, creds},
		{"https://10.0.0.1#@good.com", false, creds},
		{"https://10.0.0.1?@good.com", false, private},
		{"https://u:123#45@example.com/", false, creds},
		// Loopback in every spelling.
		{"http://127.0.0.1:8080/mcp", false, loopback},
		{"http://127.0.0.1:8080/mcp", true, ok},
		{"ws://localhost:3000/", true, ok},
		{"https://localhost/", false, "localhost is a loopback name"},
		{"https://LOCALHOST./", false, loopback},
		{"https://api.localhost/", false, loopback},
		{"https://localhost.localdomain/", false, loopback},
		{"https://ip6-localhost/", false, loopback},
		{"https://ip6-loopback/", false, loopback},
		{"https://localhost.example.com/", false, ok},
		{"http://2130706433/", false, "2130706433 (127.0.0.1) is a loopback address"},
		{"http://0177.0.0.1/", false, loopback},
		{"http://0x7f.0.0.1/", false, loopback},
		{"http://0X7F000001/", false, loopback},
		{"http://0x7f000001/", true, ok},
		{"http://127.1/", false, loopback},
		{"http://0x7f.1/", false, loopback},
		{"http://127.0.0.1./", false, loopback},
		{"http://[::1]:8080/", false, loopback},
		{"http://[::1]:8080/", true, ok},
		{"http://[0:0:0:0:0:0:0:1]/", false, loopback},
		{"http://[::ffff:127.0.0.1]/", false, "loopback address (RFC 1122) carried in an IPv4-mapped address"},
		{"http://[::FFFF:7F00:1]/", false, loopback},
		{"http://[::127.0.0.1]/", false, "IPv4-compatible"},
		// Unspecified.
		{"http://0.0.0.0:8080/", false, "unspecified"},
		{"http://0/", false, "unspecified"},
		{"http://[::]/", false, "unspecified"},
		{"http://0.0.0.0:8080/", true, ok},
		// Private, CGNAT, link-local.
		{"http://10.0.0.5:8080/mcp", false, private},
		{"http://10.1/", false, private},
		{"http://012.0.0.1/", false, private}, // octal 012 = 10
		{"https://0xa.0x0.1/", false, private},
		{"https://172.16.5.4/", false, private},
		{"https://172.32.0.1/", false, ok},
		{"https://192.168.1.1/", false, private},
		{"http://192.168.1.1/", true, ok},
		{"https://100.64.0.1/", false, "CGNAT"},
		{"https://169.254.1.1/", false, "link-local"},
		{"https://[fe80::1%25eth0]/", false, "link-local"},
		{"https://[FE80::1%25en0]:8443/", true, ok},
		{"https://[fd12:3456::1]/", false, "unique local"},
		{"https://[fc00::1]/", true, ok},
		{"https://[::ffff:10.0.0.1]/", false, private},
		{"https://[64:ff9b::10.0.0.1]/", false, "NAT64"},
		{"https://[64:ff9b::8.8.8.8]/", false, ok},
		{"https://[2002:c0a8:0101::1]/", false, "6to4"},
		{"https://[2002:0808:0808::1]/", false, ok},
		{"https://[2001:0:4136:e378::1]/", false, "Teredo"},
		{"https://[2001:db8::1]/", false, "documentation"},
		{"https://192.0.2.1/", false, "documentation"},
		{"https://224.0.0.1/", false, "multicast"},
		{"https://255.255.255.255/", false, "broadcast"},
		// Cloud metadata: refused even with allowLocal.
		{"http://169.254.169.254/latest/meta-data/", false, meta},
		{"http://169.254.169.254/latest/meta-data/", true, meta},
		{"http://2852039166/", true, meta},
		{"http://0xa9fea9fe/", true, meta},
		{"http://0251.0376.0251.0376/", true, meta},
		{"http://169.254.43518/", true, meta},
		{"http://[::ffff:169.254.169.254]/", true, meta},
		{"http://[::ffff:a9fe:a9fe]/", true, meta},
		{"http://[64:ff9b::a9fe:a9fe]/", true, meta},
		{"http://[fd00:ec2::254]/", true, meta},
		{"http://[FD00:EC2::254%25eth0]/", true, meta},
		{"http://metadata.google.internal/computeMetadata/v1/", true, meta},
		{"http://METADATA.GOOGLE.INTERNAL./", true, meta},
		{"https://metadata.goog/", true, meta},
		{"http://100.100.100.200/latest/meta-data/", true, meta},
		{"http://169.254.170.2/v2/credentials", true, meta},
		// Malformed numerics are errors, not names.
		{"http://256.0.0.1/", false, badIPv4},
		{"http://1.2.3.4.5/", false, badIPv4},
		{"http://08.0.0.1/", false, badIPv4},
		{"http://0x7g.1/", false, badIPv4},
		{"http://4294967296/", false, badIPv4},
		{"http://1.256.0/", true, badIPv4}, // in a.b.c only c may exceed 255
		{"http://example.123/", false, badIPv4},
		{"http://1..1/", false, badIPv4},
		{"https://1.2.3.4a/", false, ok}, // a name; the guarded dialer resolves it
		{"http://[127.0.0.1]/", false, "not a valid URL"},
		{"http://[v1.fe]/", false, "not a valid"},
		// Names that are not names.
		{"http://１２７.０.０.１/", true, "punycode"},
		{"https://exa_mple.com/", false, ok},
		{"https://a..b/", false, "empty label"},
	}
	for _, tt := range tests {
		err := CheckURL(tt.url, tt.allowLocal)
		switch {
		case tt.want == ok && err != nil:
			t.Errorf("CheckURL(%q, %v) = %v, want nil", tt.url, tt.allowLocal, err)
		case tt.want != ok && err == nil:
			t.Errorf("CheckURL(%q, %v) = nil, want error containing %q", tt.url, tt.allowLocal, tt.want)
		case tt.want != ok && !strings.Contains(err.Error(), tt.want):
			t.Errorf("CheckURL(%q, %v) = %v, want error containing %q", tt.url, tt.allowLocal, err, tt.want)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("CheckURL(%q, %v) = %T, want *Error", tt.url, tt.allowLocal, err)
			}
		}
	}
}

func TestCheckURLMessage(t *testing.T) {
	err := CheckURL("http://10.0.0.5:8080/mcp?token=abcd#frag", false)
	const want = "url http://10.0.0.5:8080/mcp: 10.0.0.5 is a private address (RFC 1918); set allow_local_endpoint = true to allow this server to reach it"
	if err == nil || err.Error() != want {
		t.Fatalf("CheckURL error = %v,\nwant %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, want *Error", err)
	}
	if e.Host != "10.0.0.5" || e.Addr != netip.MustParseAddr("10.0.0.5") || e.URL != "http://10.0.0.5:8080/mcp" {
		t.Errorf("Error = %+v", *e)
	}
}

// No error, whatever went wrong, quotes any part of the userinfo.
func TestCheckURLNeverLeaksPassword(t *testing.T) {
	const pw = "S3cr3tPa55"
	urls := []string{
		"https://user:" + pw + "@example.com/",
		"http://user:" + pw + "@10.0.0.1/",
		"https://" + pw + "@example.com/",
		"https://user:" + pw + "@169.254.169.254/",
		"ftp://user:" + pw + "@example.com/",
		"https://user:" + pw + "/x@example.com/",     // '/' ends the authority early
		"https://user:" + pw + "?x@example.com/",     // so does '?'
		"https://user:" + pw + "#x@example.com/",     // and '#'
		"https://user:1234#" + pw + "@example.com/",  // digits before '#' parse as a port
		"https://user:" + pw + "@exa mple.com/",      // a parse error after the userinfo
		"https://user:" + pw + "@[::1/",              // a broken IPv6 literal
		"https://user:" + pw + "%zz@example.com/",    // a bad escape in the userinfo
		"user:" + pw + "@example.com",                // no scheme: "user" becomes one
		"javascript://user:" + pw + "@example.com/",  // unknown scheme
		"https://user:" + pw + "@0x7f.1/",            // numeric host
		"https://user:" + pw + "@256.1.1.1/",         // malformed numeric host
		"https://user:" + pw + "@:443/",              // no host
		"https://user:" + pw + "@example.com:99999/", // bad port
	}
	for _, u := range urls {
		for _, allowLocal := range []bool{false, true} {
			err := CheckURL(u, allowLocal)
			if err == nil {
				t.Errorf("CheckURL(%q, %v) = nil, want an error", u, allowLocal)
				continue
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("CheckURL(%q, %v) = %q, leaks the password", u, allowLocal, err)
			}
			var e *Error
			if errors.As(err, &e) && (strings.Contains(e.URL, pw) || strings.Contains(e.Host, pw)) {
				t.Errorf("CheckURL(%q, %v) = %+v, leaks the password in a field", u, allowLocal, *e)
			}
		}
	}
}

func TestBlocked(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" for not blocked
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"0.1.2.3", "this network"},
		{"0.0.0.0", "unspecified"},
		{"10.255.255.255", "RFC 1918"},
		{"100.127.255.255", "CGNAT"},
		{"127.255.0.1", "loopback"},
		{"169.254.169.254", "link-local"},
		{"192.0.0.9", "IETF"},
		{"198.19.255.255", "benchmarking"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.7", "documentation"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},
		{"192.88.99.1", "6to4 relay"},
		{"2606:4700::1111", ""},
		{"2a00:1450:4001::200e", ""},
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"::ffff:8.8.8.8", ""},
		{"::ffff:192.168.0.1", "RFC 1918) carried in an IPv4-mapped"},
		{"::8.8.8.8", ""},
		{"::10.0.0.1", "IPv4-compatible"},
		{"64:ff9b::7f00:1", "loopback address (RFC 1122) carried in a NAT64"},
		{"64:ff9b::8.8.4.4", ""},
		{"64:ff9b:1::8.8.4.4", "outside 2000::/3"},
		{"2002:7f00:1::", "carried in a 6to4"},
		{"2002:808:808::", ""},
		{"2001::1", "Teredo"},
		{"2001:2::1", "benchmarking"},
		{"2001:10::1", "IETF"},
		{"2001:db8:1::1", "documentation"},
		{"3fff::1", "documentation"},
		{"fd00:ec2::254", "unique local"},
		{"fe80::1%eth0", "link-local"},
		{"febf::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"100::1", "outside 2000::/3"},
		{"::ffff:0:a00:1", "outside 2000::/3"},
		{"4000::1", "outside 2000::/3"},
	}
	for _, tt := range tests {
		reason, blocked := Blocked(netip.MustParseAddr(tt.addr))
		if blocked != (tt.want != "") || !strings.Contains(reason, tt.want) {
			t.Errorf("Blocked(%s) = %q, %v, want %q", tt.addr, reason, blocked, tt.want)
		}
	}
	if _, blocked := Blocked(netip.Addr{}); !blocked {
		t.Errorf("Blocked(zero Addr) = false, want true")
	}
}

func TestIsMetadata(t *testing.T) {
	for _, s := range []string{"169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "fd00:ec2::254%eth0",
		"100.100.100.200", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::169.254.169.254", "169.254.170.2"} {
		if !IsMetadata(netip.MustParseAddr(s)) {
			t.Errorf("IsMetadata(%s) = false, want true", s)
		}
	}
	for _, s := range []string{"169.254.169.253", "8.8.8.8", "::1", "::", "fd00:ec2::255"} {
		if IsMetadata(netip.MustParseAddr(s)) {
			t.Errorf("IsMetadata(%s) = true, want false", s)
		}
	}
}

func TestIsLocal(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "100.64.1.1": true, "169.254.1.1": true, "0.0.0.0": true,
		"::1": true, "::": true, "fd00::1": true, "fe80::1": true, "::ffff:192.168.1.1": true,
		"8.8.8.8": false, "2606:4700::1111": false, "224.0.0.1": false,
	} {
		if got := IsLocal(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsLocal(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		host string
		want string // address, "name", or "error"
	}{
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"},
		{"0x7F.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"0x0a.0.0x1", "10.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4.", "1.2.3.4"},
		{"255.255.255.255", "255.255.255.255"},
		{"1.16777215", "1.255.255.255"},
		{"1.16777216", "error"},
		{"1.1.65536", "error"},
		{"-1", "name"},
		{"+1.2.3.4", "error"},
		{"1_0.0.0.1", "error"},
		{"09", "error"},
		{"1.2.3.09", "error"},
		{"99999999999999999999", "error"},
		{"::1", "::1"},
		{"fe80::1%eth0", "fe80::1%eth0"},
		{"fe80::1%", "error"},
		{"1.2.3.4:80", "error"},
		{"example.com", "name"},
		{"xn--nxasmq6b.example", "name"},
		{".", "error"},
		{"a/b", "error"},
	}
	for _, tt := range tests {
		addr, isIP, err := ParseHost(tt.host)
		var got string
		switch {
		case err != nil:
			got = "error"
		case !isIP:
			got = "name"
		default:
			got = addr.String()
		}
		if got != tt.want {
			t.Errorf("ParseHost(%q) = %s (%v), want %s", tt.host, got, err, tt.want)
		}
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/mcp", "http://127.0.0.1:8080/", "http://0x7f.1/", "http://[::ffff:10.0.0.1]/",
		"https://good.com@10.0.0.1/", "https://10.0.0.1#@good.com", "http://[fe80::1%25eth0]/",
		"http://2852039166/", "ws://localhost/", "wss://[2002:a9fe:a9fe::]/", "http://metadata.goog/",
		"https://u:p4ssw0rd@h/", "http://0251.0376.0251.0376/", "https://1.2.3.4a/",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowLocal bool) {
		err := CheckURL(raw, allowLocal)
		u, perr := url.Parse(raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("CheckURL(%q) = %T, want *Error", raw, err)
			}
			if perr == nil && u.User != nil {
				// The rest of the URL, escaped as the error prints it, may
				// hold the same characters by coincidence ("%C0000"), also
				// together with the punctuation that follows it in the
				// message ("%C0000: scheme" for the password "000:"): look
				// for the password in the message without the URL.
				rest := *u
				rest.User = nil
				msg := strings.ReplaceAll(err.Error(), rest.String(), "")
				if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Count(raw, pw) == 1 &&
					!strings.Contains(rest.String(), pw) && strings.Contains(msg, pw) {
					t.Fatalf("CheckURL(%q) = %q, leaks the password", raw, err)
				}
			}
			return
		}
		if perr != nil {
			t.Fatalf("CheckURL(%q) = nil, but url.Parse fails: %v", raw, perr)
		}
		if u.User != nil {
			t.Fatalf("CheckURL(%q) = nil with userinfo", raw)
		}
		host := u.Hostname()
		// The standard library's strict parser is an oracle independent of ours.
		if a, err := netip.ParseAddr(host); err == nil {
			if IsMetadata(a) {
				t.Fatalf("CheckURL(%q, %v) = nil for metadata address %s", raw, allowLocal, a)
			}
			if _, blocked := Blocked(a); blocked && !allowLocal {
				t.Fatalf("CheckURL(%q, false) = nil for blocked address %s", raw, a)
			}
		}
		a, isIP, err := ParseHost(host)
		if err != nil {
			t.Fatalf("CheckURL(%q) = nil, but ParseHost(%q): %v", raw, host, err)
		}
		if isIP {
			if IsMetadata(a) {
				t.Fatalf("CheckURL(%q, %v) = nil for metadata address %s", raw, allowLocal, a)
			}
			if _, blocked := Blocked(a); blocked && !allowLocal {
				t.Fatalf("CheckURL(%q, false) = nil for blocked address %s", raw, a)
			}
		} else if !allowLocal && IsLoopbackName(host) {
			t.Fatalf("CheckURL(%q, false) = nil for loopback name", raw)
		}
	})
}

// TestHostLength: a host name is at most 253 characters (without the
// final dot) of labels of at most 63, as DNS allows; longer ones are
// refused by ParseHost and so by CheckURL, saying which bound (issue 24
// §2: a 294-character host and a 64-character label were accepted).
func TestHostLength(t *testing.T) {
	label := func(n int) string { return strings.Repeat("a", n) }
	// 4 labels of 63 and the dots: 255; cut to 253 and 254.
	long := strings.Join([]string{label(63), label(63), label(63), label(63)}, ".")
	for _, tt := range []struct {
		host, want string
	}{
		{long[:253], ""},
		{long[:253] + ".", ""},
		{label(63) + ".example.com", ""},
		{long[:254], "a host name is at most 253 characters, and this one has 254"},
		{strings.Repeat(label(48)+".", 6) + "example", "a host name is at most 253 characters, and this one has 301"},
		{label(64) + ".example.com", "a label of a host name (between dots) is at most 63 characters, and " + label(64)[:16] + "… has 64"},
	} {
		_, _, err := ParseHost(tt.host)
		if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
			t.Errorf("ParseHost(%d characters) = %v; want %q", len(tt.host), err, tt.want)
		}
		err = CheckURL("https://"+tt.host+"/mcp", false)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.HasSuffix(err.Error(), ": "+tt.want)) {
			t.Errorf("CheckURL(https://<%d characters>/mcp) = %v; want %q", len(tt.host), err, tt.want)
		}
	}
}

package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeResolver answers from a table; a name it does not know does not exist.
type fakeResolver map[string][]string

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	answers, ok := r[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(answers))
	for i, a := range answers {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

var ssrfDNS = fakeResolver{
	"mcp.example.com":       {"93.184.215.14"},
	"v6.example.com":        {"2606:4700:4700::1111"},
	"internal.example.com":  {"10.0.0.7"},
	"mixed.example.com":     {"93.184.215.14", "10.0.0.7"},
	"mixed6.example.com":    {"2606:4700::1", "fd00::1"},
	"mapped.example.com":    {"::ffff:127.0.0.1"},
	"nat64meta.example.com": {"64:ff9b::a9fe:a9fe"},
	"meta.example.com":      {"169.254.169.254"},
	"awsv6.example.com":     {"fd00:ec2::254"},
	"alibaba.example.com":   {"100.100.100.200"},
	"ecs.example.com":       {"169.254.170.2"},
	"sixtofour.example.com": {"2002:7f00:1::1"},
	"teredo.example.com":    {"2001:0:4136:e378:8000:63bf:3fff:fdd2"},
	"zero.example.com":      {"0.0.0.0"},
	"cgnat.example.com":     {"100.64.1.1"},
	"linklocal.example.com": {"fe80::1"},
	"localhost":             {"127.0.0.1", "::1"},
	"dev.lan":               {"192.168.1.20"},
	"empty.example.com":     {},
}

// hostPort is what an http.Transport passes to DialContext for u.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = strconv.Itoa(int(defaultPort(u.Scheme)))
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// TestSSRF runs each URL through what the host does before and while
// connecting: CheckURL on the configured URL, LocalEndpoint when the server
// has allow_local_endpoint, then the guarded dialer's check of the address
// the HTTP transport would dial.
func TestSSRF(t *testing.T) {
	const (
		ok       = ""
		private  = "a private address (RFC 1918)"
		loopback = "a loopback address"
		meta     = "cloud metadata endpoint"
		creds    = "credentials in the URL are not allowed"
		notAdmit = "not the endpoint allow_local_endpoint admits"
	)
	tests := []struct {
		url        string
		allowLocal bool
		allow      string // AllowCIDRs, comma-separated
		deny       string // DenyCIDRs, comma-separated
		want       string // "" for admitted, else a substring of the error
	}{
		// Public, admitted.
		{url: "https://mcp.example.com/mcp", want: ok},
		{url: "https://v6.example.com/mcp", want: ok},
		{url: "https://8.8.8.8/", want: ok},
		{url: "https://[2606:4700:4700::1111]/", want: ok},
		{url: "https://[64:ff9b::8.8.8.8]/", want: ok}, // NAT64 of a public address

		// Names that resolve to internal addresses (the dialer's job).
		{url: "https://internal.example.com/", want: "dial internal.example.com:443: resolved to 10.0.0.7, " + private},
		{url: "https://mixed.example.com/", want: "resolved to 10.0.0.7, " + private},
		{url: "https://mixed6.example.com/", want: "resolved to fd00::1, a unique local address"},
		{url: "https://mapped.example.com/", want: "resolved to ::ffff:127.0.0.1, a loopback address (RFC 1122) carried in an IPv4-mapped address"},
		{url: "https://sixtofour.example.com/", want: "carried in a 6to4 address"},
		{url: "https://teredo.example.com/", want: "a Teredo address"},
		{url: "https://zero.example.com/", want: "the unspecified address"},
		{url: "https://cgnat.example.com/", want: "CGNAT"},
		{url: "https://linklocal.example.com/", want: "a link-local address"},
		{url: "https://nx.example.com/", want: "no such host"},
		{url: "https://empty.example.com/", want: "no addresses"},

		// Cloud metadata: refused whatever the allow lists say.
		{url: "http://169.254.169.254/latest/meta-data/", allowLocal: true, want: meta},
		{url: "http://[::ffff:169.254.169.254]/", allowLocal: true, want: meta},
		{url: "http://[::ffff:a9fe:a9fe]/", allowLocal: true, want: meta},
		{url: "http://[2002:a9fe:a9fe::]/", allowLocal: true, want: meta},
		{url: "http://0xa9fea9fe/", allowLocal: true, want: meta},
		{url: "http://2852039166/", allowLocal: true, want: meta},
		{url: "http://[fd00:ec2::254]/", allowLocal: true, want: meta},
		{url: "http://100.100.100.200/", allowLocal: true, want: meta},
		{url: "http://metadata.google.internal/computeMetadata/v1/", allowLocal: true, want: meta},
		{url: "http://METADATA.GOOGLE.INTERNAL./", allowLocal: true, want: meta},
		{url: "http://metadata.goog/", allowLocal: true, want: meta},
		{url: "https://meta.example.com/", want: "resolved to 169.254.169.254, a " + meta},
		{url: "https://meta.example.com/", allow: "169.254.0.0/16", want: meta},
		{url: "https://nat64meta.example.com/", allow: "::/0", want: meta},
		{url: "https://awsv6.example.com/", allow: "fd00::/8", want: meta},
		{url: "https://alibaba.example.com/", allow: "100.64.0.0/10", want: meta},
		{url: "https://ecs.example.com/", want: meta},

		// IPv4 spellings and IPv6 forms of internal addresses.
		{url: "http://2130706433/", want: loopback},
		{url: "http://0177.0.0.1/", want: loopback},
		{url: "http://0x7f.1/", want: loopback},
		{url: "http://127.1/", want: loopback},
		{url: "http://0/", want: "unspecified"},
		{url: "http://[::]/", want: "unspecified"},
		{url: "http://[::1]:8080/", want: loopback},
		{url: "http://[0:0:0:0:0:0:0:1]/", want: loopback},
		{url: "http://[::127.0.0.1]/", want: "IPv4-compatible"},
		{url: "http://[fe80::1%25eth0]/", want: "link-local"},
		{url: "https://[64:ff9b::10.0.0.1]/", want: "carried in a NAT64 address"},
		{url: "http://198.18.0.1/", want: "benchmarking"},
		{url: "http://[2001:db8::1]/", want: "documentation"},
		{url: "http://224.0.0.1/", want: "multicast"},
		{url: "http://255.255.255.255/", want: "broadcast"},
		{url: "https://１２７.０.０.１/", want: "punycode"},
		{url: "https://evil.localhost/", want: "loopback name"},

		// Userinfo and parser-confusion tricks.
		{url: "https://user:pass@mcp.example.com/", want: creds},
		{url: "https://mcp.example.com@10.0.0.1/", want: creds},
		{url: "https://mcp.example.com@10.0.0.1/", allowLocal: true, want: creds},
		{url: "https://10.0.0.1#@mcp.example.com/", want: creds},
		{url: "https://10.0.0.1?@mcp.example.com/", want: private},
		{url: `https://10.0.0.1\@mcp.example.com/`, want: "not a valid"},
		{url: "gopher://127.0.0.1:6379/_", allowLocal: true, want: "scheme"},

		// allow_local_endpoint admits exactly the authored host:port.
		{url: "http://127.0.0.1:8080/mcp", allowLocal: true, want: ok},
		{url: "http://localhost:8080/mcp", allowLocal: true, want: ok},
		{url: "http://[::ffff:127.0.0.1]:8080/", allowLocal: true, want: ok},
		{url: "http://dev.lan:8080/", allowLocal: true, want: ok},
		{url: "http://[::1]:8080/", allowLocal: true, want: ok},

		// Operator CIDRs.
		{url: "https://internal.example.com/", allow: "10.0.0.0/8", want: ok},
		{url: "https://internal.example.com/", allow: "10.1.0.0/16", want: private},
		{url: "https://mcp.example.com/", deny: "93.184.0.0/16", want: "in the denied range 93.184.0.0/16"},
		{url: "https://[::ffff:93.184.215.14]/", deny: "93.184.0.0/16", want: "denied range"},
		{url: "http://127.0.0.1:8080/", allowLocal: true, deny: "127.0.0.0/8", want: "denied range"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d SSRF cases; the issue asks for at least 40", len(tests))
	}
	for _, tt := range tests {
		name := tt.url
		if tt.allowLocal {
			name += " allow_local"
		}
		t.Run(name, func(t *testing.T) {
			got := ssrfVerdict(t, tt.url, tt.allowLocal, tt.allow, tt.deny)
			if got != nil && errors.Is(got, ErrRefused) == false {
				var ne *Error
				var dnsErr *net.DNSError
				if !errors.As(got, &ne) && !errors.As(got, &dnsErr) {
					t.Errorf("%q: error %T is neither a refusal nor a lookup failure: %v", tt.url, got, got)
				}
			}
			switch {
			case tt.want == ok && got != nil:
				t.Errorf("%q: %v, want admitted", tt.url, got)
			case tt.want != ok && got == nil:
				t.Errorf("%q admitted, want refused (%s)", tt.url, tt.want)
			case tt.want != ok && !strings.Contains(got.Error(), tt.want):
				t.Errorf("%q: %v, want an error containing %q", tt.url, got, tt.want)
			}
		})
	}
	// The other port of an allowed loopback endpoint stays shut.
	d := &Dialer{Resolver: ssrfDNS, AllowLocal: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080")}}
	if _, err := d.Check(context.Background(), "tcp", "127.0.0.1:8081"); err == nil || !strings.Contains(err.Error(), notAdmit) {
		t.Errorf("Check(127.0.0.1:8081) with 127.0.0.1:8080 admitted = %v, want %q", err, notAdmit)
	}
}

func ssrfVerdict(t *testing.T, raw string, allowLocal bool, allow, deny string) error {
	t.Helper()
	if err := CheckURL(raw, allowLocal); err != nil {
		// Defence in depth: had the URL got past CheckURL, the dialer
		// would not have connected either.
		// (Credentials in a URL are refused for what they leak, not where they go.)
		if u, perr := url.Parse(raw); perr == nil && u.User == nil && u.Hostname() != "" && defaultPort(u.Scheme) != 0 {
			if derr := dialVerdict(raw, u, allowLocal, allow, deny); derr == nil {
				t.Errorf("%q: CheckURL refuses (%v) but the dialer admits %s", raw, err, hostPort(u))
			}
		}
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("CheckURL admitted %q, which url.Parse refuses: %v", raw, err)
	}
	return dialVerdict(raw, u, allowLocal, allow, deny)
}

func dialVerdict(raw string, u *url.URL, allowLocal bool, allow, deny string) error {
	var err error
	d := &Dialer{Resolver: ssrfDNS, DenyCIDRs: prefixes(deny), AllowCIDRs: prefixes(allow)}
	if allowLocal {
		d.AllowLocal, err = LocalEndpoint(context.Background(), ssrfDNS, raw)
		if err != nil {
			return err
		}
	}
	_, err = d.Check(context.Background(), "tcp", hostPort(u))
	return err
}

func prefixes(s string) []netip.Prefix {
	if s == "" {
		return nil
	}
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		out = append(out, netip.MustParsePrefix(f))
	}
	return out
}

func TestDialErrorMessages(t *testing.T) {
	tests := []struct {
		addr string
		want string
	}{
		{"internal.example.com:443", "dial internal.example.com:443: resolved to 10.0.0.7, a private address (RFC 1918)"},
		{"10.0.0.7:443", "dial 10.0.0.7:443: 10.0.0.7 is a private address (RFC 1918)"},
		{"0x7f.1:80", "dial 0x7f.1:80: 0x7f.1 is 127.0.0.1, a loopback address (RFC 1122)"},
		{"[::1]:80", "dial [::1]:80: ::1 is a loopback address (RFC 4291)"},
		{"metadata.google.internal:80", "dial metadata.google.internal:80: metadata.google.internal is a cloud metadata endpoint"},
		{"mcp.example.com:http", `dial mcp.example.com:http: invalid port "http"`},
		{"mcp.example.com", "dial mcp.example.com: not a host:port address"},
	}
	d := &Dialer{Resolver: ssrfDNS}
	for _, tt := range tests {
		_, err := d.Check(context.Background(), "tcp", tt.addr)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Check(%q) = %v, want %q", tt.addr, err, tt.want)
		}
		var de *DialError
		if !errors.As(err, &de) || !errors.Is(err, ErrRefused) {
			t.Errorf("Check(%q) = %T, want a *DialError matching ErrRefused", tt.addr, err)
		}
	}
	if _, err := d.Check(context.Background(), "udp", "mcp.example.com:53"); err == nil || !strings.Contains(err.Error(), `network "udp" is not allowed`) {
		t.Errorf("Check(udp) = %v, want refused", err)
	}
}

// rebinder answers the first lookup with first and every later one with
// later, counting lookups: a DNS rebinding attacker.
type rebinder struct {
	first, later []netip.Addr
	n            atomic.Int32
}

func (r *rebinder) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.n.Add(1) == 1 {
		return r.first, nil
	}
	return r.later, nil
}

// TestDialRebinding: the dialer resolves once and dials the address it
// checked, so a resolver that changes its answer between check and connect
// cannot move the connection; the next dial sees the new answer and refuses.
func TestDialRebinding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	r := &rebinder{first: []netip.Addr{ap.Addr()}, later: []netip.Addr{netip.MustParseAddr("10.0.0.7")}}
	d := &Dialer{Resolver: r, AllowLocal: []netip.AddrPort{ap}}
	tr := NewHTTPTransport(d)
	tr.DisableKeepAlives = true
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	target := fmt.Sprintf("http://rebind.test:%d/", ap.Port())

	resp, err := c.Get(target)
	if err != nil {
		t.Fatalf("first GET: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello" || r.n.Load() != 1 {
		t.Fatalf("first GET: body %q after %d lookups, want hello after 1", body, r.n.Load())
	}
	_, err = c.Get(target)
	if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "resolved to 10.0.0.7, a private address") {
		t.Fatalf("second GET after rebinding = %v, want refused naming 10.0.0.7", err)
	}

	// Both answers at once: the admitted one is not tried, the whole name is refused.
	both := &rebinder{first: []netip.Addr{ap.Addr(), netip.MustParseAddr("10.0.0.7")}}
	d2 := &Dialer{Resolver: both, AllowLocal: []netip.AddrPort{ap}}
	if conn, err := d2.DialContext(context.Background(), "tcp", fmt.Sprintf("rebind.test:%d", ap.Port())); err == nil {
		conn.Close()
		t.Fatal("DialContext with a public and a private answer connected, want refused")
	}
	// A public answer first and a private one second: refused as a whole.
	pubPriv := &rebinder{first: []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("192.168.0.1")}}
	if _, err := (&Dialer{Resolver: pubPriv}).Check(context.Background(), "tcp", "rebind.test:443"); err == nil || !strings.Contains(err.Error(), "192.168.0.1") {
		t.Errorf("Check(public then private) = %v, want refused naming 192.168.0.1", err)
	}
}

// hits counts requests per server.
type hits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hits) add(k string) { h.mu.Lock(); h.n[k]++; h.mu.Unlock() }
func (h *hits) get(k string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[k]
}

// TestRedirectToInternal: a server the dialer admits exactly redirects to
// another loopback port, to a metadata address and to itself by another
// name; only the same-origin redirect is followed, and the other loopback
// server never sees a request, whichever layer refuses.
func TestRedirectToInternal(t *testing.T) {
	h := &hits{n: map[string]int{}}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.add("other") }))
	defer other.Close()
	var self string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/other":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/alias":
			http.Redirect(w, r, strings.Replace(self, "127.0.0.1", "localhost", 1)+"/done", http.StatusTemporaryRedirect)
		case "/same":
			http.Redirect(w, r, "/done", http.StatusFound)
		case "/done":
			io.WriteString(w, "done:"+r.Header.Get("X-Api-Key"))
		}
	}))
	defer srv.Close()
	self = srv.URL
	ep, err := LocalEndpoint(context.Background(), nil, srv.URL)
	if err != nil || len(ep) != 1 {
		t.Fatalf("LocalEndpoint(%s) = %v, %v", srv.URL, ep, err)
	}
	d := &Dialer{AllowLocal: ep, Resolver: ssrfDNS}

	get := func(c *http.Client, path string) (string, error) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("X-Api-Key", "k-123456")
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	tr := NewHTTPTransport(d)
	defer tr.CloseIdleConnections()
	for _, pol := range []*RedirectPolicy{
		{AllowLocal: true},
		{AllowLocal: true, AllowCrossOrigin: true, CredentialHeaders: []string{"X-Api-Key"}},
	} {
		c := &http.Client{Transport: tr, CheckRedirect: pol.CheckRedirect}
		if body, err := get(c, "/same"); err != nil || body != "done:k-123456" {
			t.Errorf("same-origin redirect (cross-origin allowed: %v) = %q, %v; want followed with its headers", pol.AllowCrossOrigin, body, err)
		}
		for _, path := range []string{"/other", "/meta", "/alias"} {
			_, err := get(c, path)
			if err == nil || !errors.Is(err, ErrRefused) {
				t.Errorf("redirect %s (cross-origin allowed: %v) = %v, want refused", path, pol.AllowCrossOrigin, err)
			} else if strings.Contains(err.Error(), "set allow_local_endpoint") {
				t.Errorf("redirect %s: %v; the hint misleads, allow_local_endpoint never admits a redirect target", path, err)
			}
		}
	}
	// Without any redirect policy, the dialer alone still refuses the other port.
	c := &http.Client{Transport: tr}
	if _, err := get(c, "/other"); err == nil || !strings.Contains(err.Error(), "not the endpoint allow_local_endpoint admits") {
		t.Errorf("redirect /other with the default policy = %v, want refused by the dialer", err)
	}
	if n := h.get("other"); n != 0 {
		t.Errorf("the other loopback server got %d requests, want 0", n)
	}
}

// TestRedirectDropsCredentials: a redirect to another origin, when allowed,
// carries neither Authorization nor any configured credential header.
func TestRedirectDropsCredentials(t *testing.T) {
	var got http.Header
	var mu sync.Mutex
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
	}))
	defer target.Close()
	port := netip.MustParseAddrPort(target.Listener.Addr().String()).Port()
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// httptest's certificate is valid for example.com.
		http.Redirect(w, r, fmt.Sprintf("https://example.com:%d/landing", port), http.StatusFound)
	}))
	defer start.Close()

	d := &Dialer{
		Resolver:   fakeResolver{"example.com": {"127.0.0.1"}},
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
	tr := NewHTTPTransport(d)
	tr.TLSClientConfig = target.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	defer tr.CloseIdleConnections()
	do := func(p *RedirectPolicy) error {
		c := &http.Client{Transport: tr, CheckRedirect: p.CheckRedirect}
		req, _ := http.NewRequest("GET", start.URL+"/", nil)
		req.Header.Set("Authorization", "Bearer s3cret-token")
		req.Header.Set("X-Api-Key", "k-123456")
		req.Header.Set("X-Request-Id", "r-1")
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := do(&RedirectPolicy{AllowLocal: true}); err == nil || !strings.Contains(err.Error(), "it leaves the origin") {
		t.Fatalf("cross-origin redirect with the MCP policy = %v, want refused", err)
	}
	if err := do(&RedirectPolicy{AllowLocal: true, AllowCrossOrigin: true, CredentialHeaders: []string{"x-api-key"}}); err != nil {
		t.Fatalf("cross-origin redirect, allowed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got == nil {
		t.Fatal("the redirect target got no request")
	}
	for _, h := range []string{"Authorization", "X-Api-Key"} {
		if v := got.Get(h); v != "" {
			t.Errorf("cross-origin redirect target got %s: %q, want it dropped", h, v)
		}
	}
	if got.Get("X-Request-Id") != "r-1" {
		t.Errorf("X-Request-Id = %q, want the non-credential header kept", got.Get("X-Request-Id"))
	}
}

// A redirect target receives no Referer (issue 11 §5): net/http sets one
// on every hop that is not https to http, and the URL it carries, query
// included, is the previous server's, which may hold a token
// (?api_key=...). Same-origin and cross-origin hops alike.
func TestRedirectNoReferer(t *testing.T) {
	var mu sync.Mutex
	referers := map[string][]string{} // path → the Referer headers it got
	record := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		referers[r.URL.Path] = append(referers[r.URL.Path], r.Header.Get("Referer"))
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		io.WriteString(w, "landed")
	}))
	defer target.Close()
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cross":
			http.Redirect(w, r, target.URL+"/landing", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
		case "/here":
			record(r)
			io.WriteString(w, "landed")
		}
	}))
	defer start.Close()

	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	tr := NewHTTPTransport(&Dialer{AllowCIDRs: loopback})
	defer tr.CloseIdleConnections()
	p := &RedirectPolicy{AllowCrossOrigin: true, Network: &Network{AllowCIDRs: loopback}}
	c := &http.Client{Transport: tr, CheckRedirect: p.CheckRedirect}
	for _, path := range []string{"/cross?api_key=k-123456", "/same?api_key=k-123456"} {
		resp, err := c.Get(start.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "landed" {
			t.Fatalf("GET %s = %q, want the redirect followed", path, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, path := range []string{"/landing", "/here"} {
		got := referers[path]
		if len(got) != 1 {
			t.Errorf("%s got %d requests, want 1", path, len(got))
		}
		for _, ref := range got {
			if ref != "" {
				t.Errorf("redirect target %s got Referer %q, want none", path, ref)
			}
		}
	}
}

func TestLocalEndpoint(t *testing.T) {
	tests := []struct {
		url  string
		want string // comma-separated AddrPorts
	}{
		{"http://127.0.0.1:8080/mcp", "127.0.0.1:8080"},
		{"http://localhost:3000/", "127.0.0.1:3000,[::1]:3000"},
		{"ws://dev.lan/", "192.168.1.20:80"},
		{"https://[::1]/", "[::1]:443"},
		{"https://mcp.example.com/", ""},    // public: nothing to admit
		{"http://meta.example.com:80/", ""}, // never a metadata address
		{"http://169.254.169.254:80/", ""},  // nor as a literal
		{"http://[fe80::1%25eth0]:9/", "[fe80::1]:9"},
	}
	for _, tt := range tests {
		got, err := LocalEndpoint(context.Background(), ssrfDNS, tt.url)
		if err != nil {
			t.Errorf("LocalEndpoint(%q): %v", tt.url, err)
			continue
		}
		var s []string
		for _, a := range got {
			s = append(s, a.String())
		}
		if strings.Join(s, ",") != tt.want {
			t.Errorf("LocalEndpoint(%q) = %v, want %s", tt.url, s, tt.want)
		}
	}
	if _, err := LocalEndpoint(context.Background(), ssrfDNS, "http://metadata.google.internal/"); err == nil {
		t.Error("LocalEndpoint(metadata.google.internal) succeeded, want an error")
	}
}

func TestNewHTTPTransportIgnoresProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	tr := NewHTTPTransport(&Dialer{})
	if tr.Proxy != nil {
		t.Fatal("NewHTTPTransport: Proxy is set, want nil (environment proxies ignored)")
	}
}

// FuzzDialerCheck: whatever the address and the resolver's answer, an
// admitted address is never a metadata endpoint, and a blocked one only
// when it is exactly the admitted endpoint.
func FuzzDialerCheck(f *testing.F) {
	for _, s := range []struct {
		addr string
		ans  []byte
	}{
		{"mcp.example.com:443", []byte{93, 184, 215, 14}},
		{"rebind.test:8080", []byte{127, 0, 0, 1}},
		{"rebind.test:8080", []byte{169, 254, 169, 254}},
		{"0x7f.1:8080", nil},
		{"[::ffff:127.0.0.1]:8080", nil},
		{"[64:ff9b::a9fe:a9fe]:80", nil},
		{"x:8080", netip.MustParseAddr("2002:a9fe:a9fe::").AsSlice()},
		{"metadata.google.internal:80", nil},
		{"2852039166:80", nil},
	} {
		f.Add(s.addr, s.ans)
	}
	allowed := netip.MustParseAddrPort("127.0.0.1:8080")
	f.Fuzz(func(t *testing.T, addr string, ans []byte) {
		a, ok := netip.AddrFromSlice(ans)
		var answers []netip.Addr
		if ok {
			answers = []netip.Addr{a}
		}
		d := &Dialer{
			AllowLocal: []netip.AddrPort{allowed},
			Resolver:   &rebinder{first: answers, later: []netip.Addr{netip.MustParseAddr("10.0.0.1")}},
		}
		got, err := d.Check(context.Background(), "tcp", addr)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				var dnsErr *net.DNSError
				if !errors.As(err, &dnsErr) {
					t.Fatalf("Check(%q): unexpected error type %T: %v", addr, err, err)
				}
			}
			return
		}
		for _, ap := range got {
			if IsMetadata(ap.Addr()) {
				t.Fatalf("Check(%q) admitted metadata address %v", addr, ap)
			}
			if _, blocked := Blocked(ap.Addr()); blocked && !(ap.Port() == allowed.Port() && sameAddr(ap.Addr(), allowed.Addr())) {
				t.Fatalf("Check(%q) admitted blocked address %v", addr, ap)
			}
		}
	})
}

package netguard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestNetworkProxy: with a proxy, each target is judged before the proxy
// is asked for it; public targets go through the proxy (with its login),
// admitted local ones directly, refused ones nowhere.
func TestNetworkProxy(t *testing.T) {
	var mu sync.Mutex
	var proxied []string
	var auth string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		proxied = append(proxied, r.URL.String())
		auth = r.Header.Get("Proxy-Authorization")
		mu.Unlock()
		io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	direct := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "direct")
	}))
	defer direct.Close()

	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("u", "p")
	d := &Dialer{
		Resolver: fakeResolver{
			"mcp.example.com":      {"93.184.215.14"},
			"denied.example.com":   {"93.184.216.34"},
			"internal.example.com": {"10.0.0.7"},
			"meta.example.com":     {"169.254.169.254"},
		},
		AllowLocal: []netip.AddrPort{netip.MustParseAddrPort(direct.Listener.Addr().String())},
	}
	n := &Network{DenyCIDRs: prefixes("93.184.216.0/24"), Proxy: pu}
	c := &http.Client{Transport: n.Transport(context.Background(), d)}
	get := func(u string) (string, error) {
		resp, err := c.Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	if body, err := get("http://mcp.example.com/x"); err != nil || body != "via proxy" {
		t.Errorf("GET a public target = %q, %v; want it through the proxy", body, err)
	}
	if body, err := get(direct.URL); err != nil || body != "direct" {
		t.Errorf("GET the admitted local endpoint = %q, %v; want it dialed directly", body, err)
	}
	for _, tc := range []struct{ url, want string }{
		{"http://internal.example.com/", "resolved to 10.0.0.7, a private address"},
		{"http://meta.example.com/", "a cloud metadata endpoint"},
		{"http://169.254.169.254/latest/meta-data/", "a cloud metadata endpoint"},
		{"http://denied.example.com/", "in the denied range 93.184.216.0/24"},
		// The proxy's own address is admitted for dialing the proxy, not
		// as a target.
		{proxy.URL + "/", "loopback"},
	} {
		_, err := get(tc.url)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GET %s: %v; want a refusal saying %q", tc.url, err, tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(proxied) != 1 || proxied[0] != "http://mcp.example.com/x" {
		t.Errorf("the proxy saw %q, want only http://mcp.example.com/x", proxied)
	}
	if auth != "Basic dTpw" {
		t.Errorf("Proxy-Authorization = %q, want the proxy URL's login", auth)
	}
}

// TestNetworkProxyRefused: a proxy at a metadata address is never dialed.
func TestNetworkProxyRefused(t *testing.T) {
	n := &Network{Proxy: &url.URL{Scheme: "http", Host: "169.254.169.254:3128"}}
	d := &Dialer{Resolver: fakeResolver{"mcp.example.com": {"93.184.215.14"}}}
	c := &http.Client{Transport: n.Transport(context.Background(), d)}
	_, err := c.Get("http://mcp.example.com/")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "169.254.169.254 is a cloud metadata endpoint") {
		t.Errorf("GET through a metadata proxy: %v; want the dialer's refusal", err)
	}
}

func TestNetworkCheckURL(t *testing.T) {
	n := &Network{AllowCIDRs: prefixes("10.20.0.0/16,169.254.0.0/16"), DenyCIDRs: prefixes("93.184.216.0/24")}
	for _, tc := range []struct {
		url  string
		want string // "" for allowed
	}{
		{"http://10.20.1.5:8080/mcp", ""},
		{"http://[::ffff:10.20.1.5]:8080/mcp", ""},
		{"http://10.30.1.5/mcp", "private address"},
		{"http://169.254.169.254/", "cloud metadata endpoint"},
		{"https://93.184.216.34/", "93.184.216.34 is in the denied range 93.184.216.0/24"},
		{"http://93.184.215.14/", "plain http to a remote host"},
		{"https://mcp.example.com/", ""},
	} {
		err := n.CheckURL(tc.url, false)
		var e *Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
		case tc.want != "" && (!errors.As(err, &e) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckURL(%q) = %v, want an *Error saying %q", tc.url, err, tc.want)
		}
	}
	var none *Network
	if err := none.CheckURL("http://10.20.1.5/", false); err == nil {
		t.Error("nil Network admits a private address")
	}
}

package guard

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestHostAllowed: the Host header of a request to a loopback gateway must
// name loopback (or an allowed host), with a numeric port if any, so that a
// page whose name an attacker rebinds to 127.0.0.1 cannot reach it.
func TestHostAllowed(t *testing.T) {
	gd := &Guard{opts: Options{Loopback: true, AllowedHosts: []string{"gw.internal", "Proxy.Example:8443"}}}
	for host, want := range map[string]bool{
		"localhost":          true,
		"localhost:7391":     true,
		"LOCALHOST:7391":     true,
		"127.0.0.1":          true,
		"127.0.0.1:7391":     true,
		"[::1]":              true,
		"[::1]:7391":         true,
		"gw.internal":        true,
		"gw.internal:7391":   true,
		"proxy.example:8443": true,
		"proxy.example:8444": false, // allowed with its port only
		"proxy.example":      false,

		"127.0.0.1:7391.evil.example": false, // the case
		"localhost:7391.evil.example": false,
		"[::1]:7391.evil.example":     false,
		"127.0.0.1:":                  false, // an empty port
		"127.0.0.1:+80":               false,
		"127.0.0.1:0x50":              false,
		"127.0.0.1:65536":             false,
		"127.0.0.1:99999999999999999": false,
		"127.0.0.1:80:80":             false,
		"::1":                         false, // IPv6 needs brackets in Host
		"[::1":                        false,
		"::1]":                        false,
		"[127.0.0.1]":                 false,
		"[localhost]:80":              false,
		"evil.example":                false,
		"evil.example:7391":           false,
		"localhost.evil.example":      false,
		"127.0.0.1.evil.example":      false,
		"localhost@evil.example":      false,
		"localhost:0":                 false,
		"localhost:07391":             false,
		"[::1%25lo]:80":               false,
		"":                            false,
	} {
		if got := gd.hostAllowed(host); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// FuzzHostAllowed: whatever the Host header says, it is allowed only if a
// URL parser reads the same authority from it, its host is one of the
// allowed names and its port, if any, is a number from 1 to 65535.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"localhost:7391", "127.0.0.1:7391.evil.example", "[::1]:80", "gw.internal", "127.0.0.1:", "[::1]:7391.evil", "localhost:0"} {
		f.Add(s)
	}
	gd := &Guard{opts: Options{Loopback: true, AllowedHosts: []string{"gw.internal"}}}
	allowed := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "gw.internal": true}
	f.Fuzz(func(t *testing.T, host string) {
		if !gd.hostAllowed(host) {
			return
		}
		u, err := url.Parse("http://" + host + "/")
		if err != nil || !strings.EqualFold(u.Host, host) {
			t.Fatalf("hostAllowed(%q) = true, but a URL parser reads it as %+v (%v)", host, u, err)
		}
		if !allowed[strings.ToLower(u.Hostname())] {
			t.Fatalf("hostAllowed(%q) = true for host %q", host, u.Hostname())
		}
		if strings.HasSuffix(host, ":") {
			t.Fatalf("hostAllowed(%q) = true with an empty port", host)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
				t.Fatalf("hostAllowed(%q) = true with port %q", host, p)
			}
		}
	})
}

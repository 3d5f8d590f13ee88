package ui

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/clientaddr"
)

// TestLoginLimiter: failures are counted per address (an IPv6 one by its
// /64), drain one per loginRefill, a login forgets them, and no more than
// maxLoginClients addresses are remembered.
func TestLoginLimiter(t *testing.T) {
	var l loginLimiter
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := keyOf("192.0.2.1:5000"), keyOf("192.0.2.2:5000")
	for i := range loginBurst {
		if w := l.wait(a, now); w != 0 {
			t.Fatalf("before failure %d: wait %s, want 0", i+1, w)
		}
		l.fail(a, now)
	}
	if w := l.wait(a, now); w != loginRefill {
		t.Errorf("after %d failures: wait %s, want %s", loginBurst, w, loginRefill)
	}
	if w := l.wait(b, now); w != 0 {
		t.Errorf("another address: wait %s, want 0", w)
	}
	if w := l.wait(a, now.Add(loginRefill/2)); w != loginRefill/2 {
		t.Errorf("half a refill later: wait %s, want %s", w, loginRefill/2)
	}
	now = now.Add(loginRefill)
	if w := l.wait(a, now); w != 0 {
		t.Errorf("a refill later: wait %s, want 0", w)
	}
	l.fail(a, now)
	if w := l.wait(a, now); w != loginRefill {
		t.Errorf("failing again at once: wait %s, want %s", w, loginRefill)
	}
	l.forget(a)
	if w := l.wait(a, now); w != 0 {
		t.Errorf("after a login: wait %s, want 0", w)
	}

	v6a, v6b := keyOf("[2001:db8:1:2:aaaa::1]:443"), keyOf("[2001:db8:1:2:bbbb::9]:443")
	if v6a != v6b || v6a != "2001:db8:1:2::/64" {
		t.Errorf("clientKey of two addresses of one /64: %q, %q; want both 2001:db8:1:2::/64", v6a, v6b)
	}

	for i := range maxLoginClients + 100 {
		l.fail(fmt.Sprintf("198.51.%d.%d", i/256, i%256), now)
	}
	if n := len(l.clients); n > maxLoginClients {
		t.Errorf("%d addresses remembered, want at most %d", n, maxLoginClients)
	}
}

// keyOf is the key a login from remote is counted under.
func keyOf(remote string) string {
	r := httptest.NewRequest("POST", "/login", nil)
	r.RemoteAddr = remote
	return clientaddr.Key(r)
}

package clientaddr_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/clientaddr"
)

func mustTrust(t *testing.T, list ...string) *clientaddr.Trusted {
	t.Helper()
	tr, err := clientaddr.ParseTrusted(list)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: "127.0.0.1", want: "127.0.0.1/32"},
		{in: "::1", want: "::1/128"},
		{in: "fd00::/8", want: "fd00::/8"},
		{in: "::ffff:10.0.0.0/104", want: "10.0.0.0/8"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1/32"},
		{in: "10.0.0.1/8", err: `"10.0.0.1/8" has bits set beyond its /8; write "10.0.0.0/8"`},
		{in: "10.0.0.0/33", err: "not an address or a CIDR prefix"},
		{in: "proxy.internal", err: "not an address or a CIDR prefix"},
		{in: "", err: "not an address or a CIDR prefix"},
		{in: "fe80::1%eth0", err: "not an address or a CIDR prefix"},
	} {
		p, err := clientaddr.ParsePrefix(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParsePrefix(%q) = %v, %v; want error containing %q", tc.in, p, err, tc.err)
		case tc.err == "" && (err != nil || p.String() != tc.want):
			t.Errorf("ParsePrefix(%q) = %v, %v; want %s", tc.in, p, err, tc.want)
		}
	}
	if _, err := clientaddr.ParseTrusted([]string{"10.0.0.0/8", "nope"}); err == nil || !strings.Contains(err.Error(), "trusted proxy [1]") {
		t.Errorf("ParseTrusted with a bad second entry: %v; want an error naming [1]", err)
	}
	if tr, err := clientaddr.ParseTrusted(nil); tr != nil || err != nil {
		t.Errorf("ParseTrusted(nil) = %v, %v; want nil, nil", tr, err)
	}
}

// TestClient: the X-Forwarded-For walk. Believed only from a trusted
// peer; from the right, trusted proxies skipped; malformed means the peer.
func TestClient(t *testing.T) {
	tr := mustTrust(t, "10.0.0.0/8", "127.0.0.1", "fd00::/8")
	for _, tc := range []struct {
		name string
		tr   *clientaddr.Trusted
		peer string
		xff  []string
		want string
	}{
		{"no header", tr, "10.0.0.1", nil, "10.0.0.1"},
		{"one hop", tr, "10.0.0.1", []string{"203.0.113.7"}, "203.0.113.7"},
		{"untrusted peer's header ignored", tr, "198.51.100.1", []string{"203.0.113.7"}, "198.51.100.1"},
		{"nothing trusted", nil, "10.0.0.1", []string{"203.0.113.7"}, "10.0.0.1"},
		{"client's own claim on the left ignored", tr, "10.0.0.1", []string{"1.2.3.4, 203.0.113.7"}, "203.0.113.7"},
		{"trusted hops skipped", tr, "127.0.0.1", []string{"1.2.3.4, 203.0.113.7, 10.1.2.3, 10.0.0.9"}, "203.0.113.7"},
		{"several header lines are one list", tr, "10.0.0.1", []string{"1.2.3.4", "203.0.113.7, 10.0.0.2"}, "203.0.113.7"},
		{"all trusted: the leftmost", tr, "10.0.0.1", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"malformed entry reached", tr, "10.0.0.1", []string{"203.0.113.7, bogus"}, "10.0.0.1"},
		{"malformed entry beyond the client not reached", tr, "10.0.0.1", []string{"bogus, 203.0.113.7"}, "203.0.113.7"},
		{"empty entry", tr, "10.0.0.1", []string{"203.0.113.7,"}, "10.0.0.1"},
		{"empty header", tr, "10.0.0.1", []string{""}, "10.0.0.1"},
		{"with a port", tr, "10.0.0.1", []string{"203.0.113.7:5555"}, "203.0.113.7"},
		{"IPv6", tr, "fd00::1", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv6 bracketed", tr, "10.0.0.1", []string{"[2001:db8::5]"}, "2001:db8::5"},
		{"IPv6 bracketed with port", tr, "10.0.0.1", []string{"[2001:db8::5]:443"}, "2001:db8::5"},
		{"mapped peer", tr, "::ffff:10.0.0.1", []string{"203.0.113.7"}, "203.0.113.7"},
		{"mapped entry", tr, "10.0.0.1", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"zone refused", tr, "10.0.0.1", []string{"fe80::1%eth0"}, "10.0.0.1"},
	} {
		h := http.Header{}
		for _, v := range tc.xff {
			h.Add("X-Forwarded-For", v)
		}
		got := tc.tr.Client(netip.MustParseAddr(tc.peer), h)
		if got.String() != tc.want {
			t.Errorf("%s: Client(%s, %q) = %v, want %s", tc.name, tc.peer, tc.xff, got, tc.want)
		}
	}
}

// TestHandler: Of returns what Handler found; without Handler, or from an
// untrusted peer, the connection's address.
func TestHandler(t *testing.T) {
	var got string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = clientaddr.String(r) })
	for _, tc := range []struct {
		name   string
		tr     *clientaddr.Trusted
		remote string
		want   string
	}{
		{"trusted", mustTrust(t, "127.0.0.1"), "127.0.0.1:4000", "203.0.113.7"},
		{"untrusted", mustTrust(t, "10.0.0.0/8"), "127.0.0.1:4000", "127.0.0.1"},
		{"none trusted", nil, "127.0.0.1:4000", "127.0.0.1"},
		{"not an IP", mustTrust(t, "127.0.0.1"), "@", "@"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		r.Header.Set("X-Forwarded-For", "203.0.113.7")
		clientaddr.Handler(h, tc.tr).ServeHTTP(httptest.NewRecorder(), r)
		if got != tc.want {
			t.Errorf("%s: String(r) from %s = %q, want %q", tc.name, tc.remote, got, tc.want)
		}
	}
}

func ExampleTrusted_Client() {
	trusted, err := clientaddr.ParseTrusted([]string{"10.0.0.0/8"})
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	// The client claimed 192.0.2.1; the balancer (10.0.0.5) appended the
	// address it saw, and a second one (10.0.0.9) connected to us.
	h.Set("X-Forwarded-For", "192.0.2.1, 203.0.113.7, 10.0.0.5")
	fmt.Println(trusted.Client(netip.MustParseAddr("10.0.0.9"), h))
	fmt.Println(trusted.Client(netip.MustParseAddr("198.51.100.4"), h))
	// Output:
	// 203.0.113.7
	// 198.51.100.4
}

// BenchmarkHandler: what finding the client costs a request from a
// trusted balancer (one X-Forwarded-For hop), over calling the handler.
func BenchmarkHandler(b *testing.B) {
	tr, err := clientaddr.ParseTrusted([]string{"10.0.0.0/8", "127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	var sink netip.Addr
	h := clientaddr.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sink = clientaddr.Of(r) }), tr)
	r := httptest.NewRequest("GET", "/mcp", nil)
	r.RemoteAddr = "10.0.0.5:41000"
	r.Header.Set("X-Forwarded-For", "198.51.100.9, 203.0.113.7")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
	if sink.String() != "203.0.113.7" {
		b.Fatalf("client %v, want 203.0.113.7", sink)
	}
}

package clientaddr_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/clientaddr"
)

var sig = "\r\n\r\n\x00\r\nQUIT\n"

// v2 builds a v2 header: version-command, family-protocol, then body.
func v2(verCmd, famProto byte, body []byte) string {
	var b bytes.Buffer
	b.WriteString(sig)
	b.WriteByte(verCmd)
	b.WriteByte(famProto)
	binary.Write(&b, binary.BigEndian, uint16(len(body)))
	b.Write(body)
	return b.String()
}

func inet(src, dst string, sport, dport uint16, tlvs int) []byte {
	var b bytes.Buffer
	s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
	b.Write(s.AsSlice())
	b.Write(d.AsSlice())
	binary.Write(&b, binary.BigEndian, sport)
	binary.Write(&b, binary.BigEndian, dport)
	b.Write(make([]byte, tlvs))
	return b.Bytes()
}

// TestReadHeader: v1 and v2 headers, and what is refused; the bytes after
// a header are left for the connection.
func TestReadHeader(t *testing.T) {
	const rest = "GET / HTTP/1.1\r\n"
	for _, tc := range []struct {
		name, in string
		want     string // the source, "" for none
		err      string // a fault matching ErrProxyHeader
		ioErr    error  // an error of the reader
	}{
		{name: "v1 TCP4", in: "PROXY TCP4 203.0.113.7 10.0.0.1 56324 7300\r\n", want: "203.0.113.7:56324"},
		{name: "v1 TCP6", in: "PROXY TCP6 2001:db8::7 2001:db8::1 56324 7300\r\n", want: "[2001:db8::7]:56324"},
		{name: "v1 UNKNOWN", in: "PROXY UNKNOWN\r\n"},
		{name: "v1 UNKNOWN with addresses", in: "PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n"},
		{name: "v1 longest", in: "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n", want: "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"},
		{name: "v1 too long", in: "PROXY TCP4 " + strings.Repeat("1", 200) + "\r\n", err: "longer than 107 bytes"},
		{name: "v1 LF only", in: "PROXY TCP4 203.0.113.7 10.0.0.1 56324 7300\n", err: "not ended by CRLF"},
		{name: "v1 family mismatch", in: "PROXY TCP4 2001:db8::7 10.0.0.1 56324 7300\r\n", err: "not of family TCP4"},
		{name: "v1 bad address", in: "PROXY TCP4 203.0.113 10.0.0.1 56324 7300\r\n", err: "ParseAddr"},
		{name: "v1 bad port", in: "PROXY TCP4 203.0.113.7 10.0.0.1 65536 7300\r\n", err: `bad port "65536"`},
		{name: "v1 leading zero port", in: "PROXY TCP4 203.0.113.7 10.0.0.1 080 7300\r\n", err: `bad port "080"`},
		{name: "v1 missing field", in: "PROXY TCP4 203.0.113.7 10.0.0.1 56324\r\n", err: "is not PROXY TCP4|TCP6"},
		{name: "v1 double space", in: "PROXY TCP4  203.0.113.7 10.0.0.1 56324 7300\r\n", err: "is not PROXY TCP4|TCP6"},
		{name: "v1 other protocol", in: "PROXY UDP4 203.0.113.7 10.0.0.1 56324 7300\r\n", err: "is not PROXY TCP4|TCP6"},
		{name: "v1 cut short", in: "PROXY TCP4 203.0.113.7", ioErr: io.ErrUnexpectedEOF},
		{name: "v2 TCP4", in: v2(0x21, 0x11, inet("203.0.113.7", "10.0.0.1", 56324, 7300, 0)), want: "203.0.113.7:56324"},
		{name: "v2 TCP6", in: v2(0x21, 0x21, inet("2001:db8::7", "2001:db8::1", 56324, 7300, 0)), want: "[2001:db8::7]:56324"},
		{name: "v2 TLVs skipped", in: v2(0x21, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 300)), want: "203.0.113.7:1"},
		{name: "v2 LOCAL", in: v2(0x20, 0x00, nil)},
		{name: "v2 LOCAL with addresses", in: v2(0x20, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 0))},
		{name: "v2 UNSPEC", in: v2(0x21, 0x00, nil)},
		{name: "v2 UNIX", in: v2(0x21, 0x31, make([]byte, 216))},
		{name: "v2 oversized", in: v2(0x21, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 5000)), err: "more than 4096"},
		{name: "v2 version 3", in: v2(0x31, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 0)), err: "version 3"},
		{name: "v2 command 2", in: v2(0x22, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 0)), err: "unknown command"},
		{name: "v2 UDP", in: v2(0x21, 0x12, inet("203.0.113.7", "10.0.0.1", 1, 2, 0)), err: "other than TCP"},
		{name: "v2 family 4", in: v2(0x21, 0x41, inet("203.0.113.7", "10.0.0.1", 1, 2, 0)), err: "unknown family"},
		{name: "v2 too short for its addresses", in: v2(0x21, 0x21, inet("203.0.113.7", "10.0.0.1", 1, 2, 0)), err: "too short"},
		{name: "v2 cut short", in: v2(0x21, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 0))[:20], ioErr: io.ErrUnexpectedEOF},
		{name: "v2 signature cut short", in: sig[:5], ioErr: io.ErrUnexpectedEOF},
		{name: "nothing", in: "", ioErr: io.EOF},
		{name: "plain HTTP", in: "", err: "does not start with one"},
		{name: "short plain", in: "GET", err: "does not start with one"},
	} {
		in := tc.in
		if tc.name == "plain HTTP" || tc.err == "" && tc.ioErr == nil {
			in += rest
		}
		r := bufio.NewReader(strings.NewReader(in))
		got, err := clientaddr.ReadHeader(r)
		switch {
		case tc.ioErr != nil:
			if !errors.Is(err, tc.ioErr) || errors.Is(err, clientaddr.ErrProxyHeader) {
				t.Errorf("%s: ReadHeader(%q) = %v, %v; want the reader's %v", tc.name, tc.in, got, err, tc.ioErr)
			}
		case tc.err != "":
			if !errors.Is(err, clientaddr.ErrProxyHeader) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: ReadHeader(%q) = %v, %v; want ErrProxyHeader containing %q", tc.name, tc.in, got, err, tc.err)
			}
		default:
			want := ""
			if got.IsValid() {
				want = got.String()
			}
			if err != nil || want != tc.want {
				t.Errorf("%s: ReadHeader(%q) = %v, %v; want %q", tc.name, tc.in, got, err, tc.want)
			}
			if after, _ := io.ReadAll(r); string(after) != rest {
				t.Errorf("%s: after the header %q is left, want %q", tc.name, after, rest)
			}
		}
	}
}

// TestListener: a real http.Server behind a Listener trusting 127.0.0.1.
// A trusted peer's header names the client; a trusted peer without one is
// refused; an untrusted peer is served as it is, its own PROXY line an
// HTTP error; a trusted peer that sends nothing is cut off at the
// deadline.
func TestListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pl := &clientaddr.Listener{Listener: ln, Trusted: mustTrust(t, "127.0.0.1"), HeaderTimeout: 200 * time.Millisecond}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, clientaddr.String(r))
	})}
	go srv.Serve(pl)
	defer srv.Close()
	addr := ln.Addr().String()

	// exchange dials from local (127.0.0.1 is trusted, 127.0.0.2 not),
	// writes pre and a GET, and returns the answer, or the error reading it.
	exchange := func(local string, pre string) (string, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(c, pre+"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
			return "", err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
	}
	for _, tc := range []struct {
		name, local, pre, want string
	}{
		{"trusted v1", "127.0.0.1", "PROXY TCP4 203.0.113.7 127.0.0.1 5000 7300\r\n", "200 203.0.113.7"},
		{"trusted v2", "127.0.0.1", v2(0x21, 0x21, inet("2001:db8::7", "::1", 5000, 7300, 20)), "200 2001:db8::7"},
		{"trusted v2 LOCAL", "127.0.0.1", v2(0x20, 0x00, nil), "200 127.0.0.1"},
		{"untrusted, no header", "127.0.0.2", "", "200 127.0.0.2"},
		{"untrusted with a header", "127.0.0.2", "PROXY TCP4 203.0.113.7 127.0.0.1 5000 7300\r\n", "400 "},
	} {
		got, err := exchange(tc.local, tc.pre)
		if err != nil || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for _, pre := range []string{"", "PROXY TCP4 bogus\r\n", v2(0x21, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 5000))} {
		if got, err := exchange("127.0.0.1", pre); err == nil {
			t.Errorf("trusted peer, header %q: answered %q; want the connection closed", pre, got)
		}
	}
	// Nothing sent: closed once HeaderTimeout passes (a read that ends
	// with EOF, not the test's own 30 s deadline).
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a trusted peer that sends nothing: read %d, %v; want EOF (closed at the header deadline)", n, err)
	}
}

// FuzzReadHeader: no input panics ReadHeader, none makes it read more
// than a header's bound, and a header it accepts reads back the same from
// the same bytes followed by anything.
func FuzzReadHeader(f *testing.F) {
	f.Add([]byte("PROXY TCP4 203.0.113.7 10.0.0.1 56324 7300\r\nGET"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add([]byte(v2(0x21, 0x11, inet("203.0.113.7", "10.0.0.1", 1, 2, 3))))
	f.Add([]byte(v2(0x21, 0x21, inet("2001:db8::7", "::1", 1, 2, 0))))
	f.Add([]byte(v2(0x20, 0x00, nil)))
	f.Fuzz(func(t *testing.T, in []byte) {
		src := bytes.NewReader(in)
		got, err := clientaddr.ReadHeader(bufio.NewReaderSize(src, 4096))
		if read := len(in) - src.Len(); read > 4096 {
			t.Fatalf("read %d bytes of %q, more than 4096", read, in)
		}
		if err != nil {
			return
		}
		again, err := clientaddr.ReadHeader(bufio.NewReader(io.MultiReader(bytes.NewReader(in), strings.NewReader("\r\n\r\nmore"))))
		if err != nil || again != got {
			t.Fatalf("%q then more: %v, %v; alone: %v", in, again, err, got)
		}
	})
}

package clientaddr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrProxyHeader is what every refused PROXY protocol header matches with
// errors.Is: missing from a trusted proxy, malformed, or too long.
var ErrProxyHeader = errors.New("clientaddr: bad PROXY protocol header")

// DefaultHeaderTimeout is the default [Listener] HeaderTimeout. A proxy
// writes its header with the connection's first bytes; the bound keeps a
// connection that sends nothing from holding a goroutine and a socket.
const DefaultHeaderTimeout = 10 * time.Second

// The bounds of a header. v1's is the protocol's own (107 bytes, CRLF
// included). v2's length field allows 64 KiB of TLVs; HAProxy's (the
// unique id, ALPN, TLS details) come to a few hundred bytes, and 4 KiB
// bounds what a proxy gone wrong can make each connection buffer.
const (
	maxV1Header = 107
	maxV2Header = 4096
)

// v2Signature opens every v2 header.
var v2Signature = []byte("\r\n\r\n\x00\r\nQUIT\n")

// A Listener reads the PROXY protocol header (v1 or v2) that trusted
// proxies send at the start of each connection, and makes the
// connection's RemoteAddr the source address it gives.
//
// A connection from a peer in Trusted must start with a header: one that
// does not, or whose header is malformed, longer than its bound or not
// complete within HeaderTimeout, is closed. A connection from any other
// peer is served as it is, without looking for a header: a client that
// sends one itself gets it read as the start of an HTTP request, and
// refused (400). A v2 LOCAL header (a proxy's own health check) and an
// UNKNOWN or unspecified source keep the peer's address.
//
// The header is read on the connection's first Read or RemoteAddr call,
// by the goroutine serving it (http.Server's), never in Accept: a slow
// proxy connection holds up only itself.
type Listener struct {
	net.Listener
	// Trusted are the proxies whose headers are read; nil trusts none,
	// and the Listener changes nothing.
	Trusted *Trusted
	// HeaderTimeout bounds the wait for a trusted proxy's header; 0 means
	// [DefaultHeaderTimeout].
	HeaderTimeout time.Duration
	// Logger, when set, is told of each connection closed for its header
	// (at Info: it means a proxy or a trusted_proxies entry is wrong).
	Logger *slog.Logger
}

// Accept waits for the next connection; one from a trusted proxy reads
// its header on first use.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !l.Trusted.Contains(addrOf(c.RemoteAddr())) {
		return c, nil
	}
	return &proxiedConn{Conn: c, l: l}, nil
}

// proxiedConn is a trusted proxy's connection, whose first bytes are a
// PROXY header.
type proxiedConn struct {
	net.Conn
	l    *Listener
	once sync.Once
	r    *bufio.Reader // the bytes after the header
	src  net.Addr      // the header's source; nil: the peer's
	err  error         // the header's fault; the connection is closed
}

func (c *proxiedConn) readHeader() {
	c.once.Do(func() {
		timeout := c.l.HeaderTimeout
		if timeout <= 0 {
			timeout = DefaultHeaderTimeout
		}
		c.Conn.SetReadDeadline(time.Now().Add(timeout))
		// The reader's buffer may hold the first bytes after the header:
		// every later Read goes through it.
		c.r = bufio.NewReaderSize(c.Conn, maxV2Header)
		src, err := ReadHeader(c.r)
		c.Conn.SetReadDeadline(time.Time{})
		if err != nil {
			c.err = err
			if c.l.Logger != nil && err != io.EOF { // EOF: it hung up before sending a byte
				c.l.Logger.Info("refused a connection from a trusted proxy", "peer", c.Conn.RemoteAddr().String(), "error", err)
			}
			c.Conn.Close()
			return
		}
		if src.IsValid() {
			c.src = net.TCPAddrFromAddrPort(src)
		}
	})
}

func (c *proxiedConn) Read(b []byte) (int, error) {
	c.readHeader()
	if c.err != nil {
		return 0, c.err
	}
	return c.r.Read(b)
}

// RemoteAddr is the header's source address (the client's), or the
// peer's when the header gives none or was refused.
func (c *proxiedConn) RemoteAddr() net.Addr {
	c.readHeader()
	if c.src != nil {
		return c.src
	}
	return c.Conn.RemoteAddr()
}

// ReadHeader reads one PROXY protocol header, v1 or v2, from r and
// returns its source address and port: the zero AddrPort for one that
// gives none (v1 UNKNOWN, v2 LOCAL or an unspecified or Unix family). It
// reads no byte past the header. Every error matches [ErrProxyHeader],
// but those of r itself (a timeout, EOF before a header began).
func ReadHeader(r *bufio.Reader) (netip.AddrPort, error) {
	// 12 bytes tell v1 from v2 and are shorter than either header.
	sig, err := r.Peek(len(v2Signature))
	switch {
	case bytes.Equal(sig, v2Signature):
		return readV2(r)
	case bytes.HasPrefix(sig, []byte("PROXY ")):
		return readV1(r)
	case err != nil && (bytes.HasPrefix(v2Signature, sig) || bytes.HasPrefix([]byte("PROXY "), sig)):
		// Cut short (or timed out) where a header may still have begun.
		if err == io.EOF && len(sig) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return netip.AddrPort{}, err
	}
	return netip.AddrPort{}, fmt.Errorf("%w: the connection does not start with one (is the proxy set to send it, with send-proxy-v2 or send-proxy?)", ErrProxyHeader)
}

// readV1 reads the text form: "PROXY TCP4 src dst sport dport\r\n",
// "PROXY TCP6 …" or "PROXY UNKNOWN …".
func readV1(r *bufio.Reader) (netip.AddrPort, error) {
	var line []byte
	for {
		b, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return netip.AddrPort{}, err
		}
		line = append(line, b)
		if b == '\n' {
			break
		}
		if len(line) >= maxV1Header {
			return netip.AddrPort{}, fmt.Errorf("%w: v1 header longer than %d bytes", ErrProxyHeader, maxV1Header)
		}
	}
	s, ok := strings.CutSuffix(string(line), "\r\n")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 header not ended by CRLF", ErrProxyHeader)
	}
	f := strings.Split(s, " ")
	if len(f) >= 2 && f[1] == "UNKNOWN" {
		return netip.AddrPort{}, nil // the receiver uses the connection's addresses
	}
	if len(f) != 6 || (f[1] != "TCP4" && f[1] != "TCP6") {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 header %q is not PROXY TCP4|TCP6 src dst sport dport", ErrProxyHeader, s)
	}
	src, err1 := netip.ParseAddr(f[2])
	dst, err2 := netip.ParseAddr(f[3])
	sport, err3 := parsePort(f[4])
	_, err4 := parsePort(f[5])
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 header %q: %v", ErrProxyHeader, s, err)
	}
	if want4 := f[1] == "TCP4"; src.Is4() != want4 || dst.Is4() != want4 || src.Zone() != "" || dst.Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 header %q: addresses not of family %s", ErrProxyHeader, s, f[1])
	}
	return netip.AddrPortFrom(src, sport), nil
}

// parsePort parses a v1 port: decimal, 0 to 65535, no sign, no leading
// zero.
func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || s[0] == '+' || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return uint16(n), nil
}

// readV2 reads the binary form: the signature, version and command,
// family and protocol, the length of the rest, then the addresses and
// TLVs (which are skipped).
func readV2(r *bufio.Reader) (netip.AddrPort, error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return netip.AddrPort{}, err
	}
	verCmd, famProto, n := hdr[12], hdr[13], int(binary.BigEndian.Uint16(hdr[14:]))
	if verCmd>>4 != 2 {
		return netip.AddrPort{}, fmt.Errorf("%w: v2 header of version %d", ErrProxyHeader, verCmd>>4)
	}
	if 16+n > maxV2Header {
		return netip.AddrPort{}, fmt.Errorf("%w: v2 header of %d bytes, more than %d", ErrProxyHeader, 16+n, maxV2Header)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return netip.AddrPort{}, err
	}
	switch verCmd & 0xf {
	case 0: // LOCAL: the proxy's own connection (a health check)
		return netip.AddrPort{}, nil
	case 1: // PROXY
	default:
		return netip.AddrPort{}, fmt.Errorf("%w: v2 header with unknown command %#x", ErrProxyHeader, verCmd&0xf)
	}
	family, proto := famProto>>4, famProto&0xf
	if family > 3 || proto > 2 {
		return netip.AddrPort{}, fmt.Errorf("%w: v2 header with unknown family and protocol %#02x", ErrProxyHeader, famProto)
	}
	switch family {
	case 1, 2: // INET, INET6
	default: // UNSPEC, UNIX: no IP source; the connection's is used
		return netip.AddrPort{}, nil
	}
	if proto != 1 {
		return netip.AddrPort{}, fmt.Errorf("%w: v2 header for a protocol other than TCP (%#02x) on a TCP connection", ErrProxyHeader, famProto)
	}
	size := 4
	if family == 2 {
		size = 16
	}
	if n < 2*size+4 {
		return netip.AddrPort{}, fmt.Errorf("%w: v2 header of %d bytes after the fixed part, too short for its addresses (%d)", ErrProxyHeader, n, 2*size+4)
	}
	src, _ := netip.AddrFromSlice(body[:size])
	port := binary.BigEndian.Uint16(body[2*size:])
	return netip.AddrPortFrom(src.Unmap(), port), nil
}

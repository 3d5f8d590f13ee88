// Package netguard decides which network endpoints Switchboard may dial.
//
// CheckURL is the floor applied to every configured URL before connecting:
// only http, https, ws and wss; no credentials in the URL; a remote host needs
// https or wss; loopback, private, link-local, CGNAT and cloud-metadata
// addresses are refused unless the server opts in with allow_local_endpoint,
// which admits exactly that URL's own host:port, plaintext included.
package netguard

import "net/netip"

// CheckURL reports whether raw may be dialed. allowLocal is the server's
// allow_local_endpoint. The error never contains the URL's userinfo.
func CheckURL(raw string, allowLocal bool) error { panic("TODO") }

// Blocked reports whether addr is in a range Switchboard refuses by default,
// and which one.
func Blocked(addr netip.Addr) (reason string, blocked bool) { panic("TODO") }

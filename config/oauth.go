package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/secret"
)

// Grants a remote server's oauth table may name.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// OAuth is how Switchboard signs in to a remote server that requires
// OAuth 2.1 (the MCP authorization spec): the oauth package does the
// discovery and the flows. The zero value (every field empty) signs in
// with the authorization code grant and registers itself dynamically or
// with a client ID metadata document, as the authorization server allows.
type OAuth struct {
	// ClientID is a client registered with the authorization server
	// beforehand; "" means dynamic registration or ClientMetadataURL.
	ClientID string
	// ClientSecret is that client's secret: a {{secrets.NAME}} or
	// {{env.NAME}} placeholder, never the value itself.
	ClientSecret string
	// Scopes, when set, are requested instead of those the server's
	// metadata or its WWW-Authenticate challenge names.
	Scopes []string
	// Grant is GrantAuthorizationCode ("" too) or GrantClientCredentials
	// (machine to machine: needs ClientID and ClientSecret, no login).
	Grant string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// that describes Switchboard to authorization servers that accept one.
	ClientMetadataURL string
	// PrivateKey is a PEM private key (EC P-256/P-384, RSA or Ed25519) a
	// client_credentials client authenticates with instead of a secret
	// (private_key_jwt, RFC 7523): a {{secrets.NAME}} placeholder, never
	// the key itself.
	PrivateKey string
}

var oauthFields = decode.Table[OAuth]{
	decode.String("client_id", every, func(o *OAuth) *string { return &o.ClientID }, noPlaceholder),
	decode.String("client_secret", every, func(o *OAuth) *string { return &o.ClientSecret }, checkClientSecret),
	decode.StringList("scopes", every, func(o *OAuth) *[]string { return &o.Scopes }, checkScope),
	decode.String("grant", every, func(o *OAuth) *string { return &o.Grant }, checkGrant),
	decode.String("client_metadata_url", every, func(o *OAuth) *string { return &o.ClientMetadataURL }, checkClientMetadataURL),
	decode.String("private_key", every, func(o *OAuth) *string { return &o.PrivateKey }, checkClientSecret),
}

// readOAuth reads a server's oauth table, each key checked at its line.
func readOAuth(d *decode.Decoder, field string, v any) (*OAuth, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a table (oauth = { client_id = \"…\" }), not %s", d.TypeName(v))
		return nil, false
	}
	o := new(OAuth)
	oauthFields.DecodeAndCheck(d, field, m, o)
	return o, true
}

// checkClientSecret admits only a placeholder: a client secret written in
// the file would be copied with it.
func checkClientSecret(s string) string {
	if s == "" {
		return ""
	}
	ps, err := secret.Parse(s)
	if err != nil {
		return err.Error()
	}
	if len(ps) != 1 || ps[0].String() != strings.TrimSpace(s) {
		return "must be a {{secrets.NAME}} placeholder (switchboard secrets set NAME), not the secret itself"
	}
	if msgs := placeholderProblems(s); len(msgs) > 0 {
		return msgs[0]
	}
	return ""
}

func checkScope(scopes []string, i int) string {
	s := scopes[i]
	switch {
	case hasPlaceholder(s):
		return placeholderMsg
	case s == "" || strings.ContainsAny(s, " \t\r\n\"\\"):
		return fmt.Sprintf("invalid scope %q: one scope per entry, without spaces or quotes", s)
	case slices.Index(scopes, s) < i:
		return fmt.Sprintf("duplicate scope %q", s)
	}
	return ""
}

func checkGrant(g string) string {
	switch g {
	case "", GrantAuthorizationCode, GrantClientCredentials:
		return ""
	}
	return fmt.Sprintf("unknown grant %q (want %s or %s)", g, GrantAuthorizationCode, GrantClientCredentials)
}

func checkClientMetadataURL(s string) string {
	if s == "" {
		return ""
	}
	if hasPlaceholder(s) {
		return placeholderMsg
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
		return "must be an https URL with a path (a client ID metadata document)"
	}
	return ""
}

// checkOAuth checks what needs several of the table's keys.
func (sc *serverCheck) checkOAuth(o *OAuth) {
	oauthFields.Check(o, func(field, msg string) { sc.errorf(decode.KeyPath("oauth", field), "%s", msg) })
	if o.Grant == GrantClientCredentials {
		if o.ClientID == "" {
			sc.errorf("oauth.client_id", "required for grant %s", GrantClientCredentials)
		}
		if o.ClientSecret == "" && o.PrivateKey == "" {
			sc.errorf("oauth.client_secret", "required for grant %s: a {{secrets.NAME}} placeholder (or private_key)", GrantClientCredentials)
		}
		if o.ClientSecret != "" && o.PrivateKey != "" {
			sc.errorf("oauth.private_key", "set with client_secret: use one or the other")
		}
		if o.ClientMetadataURL != "" {
			sc.errorf("oauth.client_metadata_url", "not for grant %s, which needs a pre-registered client", GrantClientCredentials)
		}
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		sc.errorf("oauth.client_secret", "set with client_id (a pre-registered client)")
	}
	if o.PrivateKey != "" && o.Grant != GrantClientCredentials {
		sc.errorf("oauth.private_key", "only for grant %s", GrantClientCredentials)
	}
	for k := range sc.s.Headers {
		if strings.EqualFold(k, "Authorization") {
			sc.errorf("oauth", "set with an Authorization header: use one or the other")
		}
	}
}

// oauthTOML writes o as an inline table.
func oauthTOML(o *OAuth) string {
	var parts []string
	for _, f := range oauthFields {
		if f.IsSet(o) {
			parts = append(parts, tomlKey(f.Key)+" = "+tomlValue(f.Get(o)))
		}
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

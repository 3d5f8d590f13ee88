package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
)

// pemKey is key as the PEM block type names (PKCS #8 unless typ says
// SEC 1 or PKCS #1).
func pemKey(t *testing.T, typ string, key crypto.Signer) string {
	t.Helper()
	var der []byte
	var err error
	switch typ {
	case "EC PRIVATE KEY":
		der, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	case "RSA PRIVATE KEY":
		der = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	default:
		der, err = x509.MarshalPKCS8PrivateKey(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func ecKey(t *testing.T, c elliptic.Curve) crypto.Signer {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwtClient is the handler of a client_credentials server configured with
// the PEM key privateKey, and the 401 the MCP server answers without a
// token.
func jwtClient(t *testing.T, as *testauth.Server, privateKey string) (auth.OAuthHandler, *http.Request, *http.Response) {
	t.Helper()
	h, err := oauth.NewHandler(as.URL, &config.OAuth{Grant: config.GrantClientCredentials, ClientID: "jwt-client", PrivateKey: privateKey},
		oauth.Options{Server: "remote", HTTPClient: oauth.GuardedClient(&netguard.Dialer{}, loopback)})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(as.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the MCP server without a token: %s, want 401", resp.Status)
	}
	req, _ := http.NewRequest(http.MethodPost, as.URL, nil)
	return h, req, resp
}

// TestPrivateKeyJWT: client credentials authenticated by a private key
// (RFC 7523 §2.2), for every kind of key the configuration takes, against
// an authorization server that checks the assertion's signature with the
// registered public key, its iss, sub, aud (the issuer), exp, lifetime
// and jti. The assertion names the client and the issuer, lives two
// minutes and is signed with the key's algorithm; the token asked for is
// bound to the server (resource) and the server accepts it. Each token
// request carries a new assertion: the server refuses a replayed jti.
func TestPrivateKeyJWT(t *testing.T) {
	for _, tc := range []struct {
		name, pemType, alg string
		key                crypto.Signer
	}{
		{"P-256_SEC1", "EC PRIVATE KEY", "ES256", ecKey(t, elliptic.P256())},
		{"P-384_PKCS8", "PRIVATE KEY", "ES384", ecKey(t, elliptic.P384())},
		{"P-521_PKCS8", "PRIVATE KEY", "ES512", ecKey(t, elliptic.P521())},
		{"RSA_PKCS1", "RSA PRIVATE KEY", "RS256", testauth.NewKey()},
		{"Ed25519_PKCS8", "PRIVATE KEY", "EdDSA", func() crypto.Signer { _, k, _ := ed25519.GenerateKey(rand.Reader); return k }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Tokens of 5 s: golang.org/x/oauth2 takes them for expired
			// at once (its 10 s margin), so each Token asks again.
			as := testauth.Start(t, &testauth.Options{AccessTokenExp: 5 * time.Second,
				KeyClients: map[string]crypto.PublicKey{"jwt-client": tc.key.Public()}})
			h, req, resp := jwtClient(t, as, pemKey(t, tc.pemType, tc.key))
			if err := h.Authorize(context.Background(), req, resp); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			ts, err := h.TokenSource(context.Background())
			if err != nil || ts == nil {
				t.Fatalf("TokenSource = %v, %v", ts, err)
			}
			first, err := ts.Token()
			if err != nil {
				t.Fatalf("Token: %v", err)
			}
			if err := accepted(as.URL, first.AccessToken); err != nil {
				t.Error(err)
			}
			got := as.Assertions()
			if len(got) != 2 {
				t.Fatalf("%d token requests with an assertion, want 2 (Authorize's, then Token's)", len(got))
			}
			jtis := map[string]bool{}
			for i, a := range got {
				tok, _, err := jwt.NewParser().ParseUnverified(a, jwt.MapClaims{})
				if err != nil {
					t.Fatalf("assertion %d: %v", i, err)
				}
				c := tok.Claims.(jwt.MapClaims)
				iat, _ := c.GetIssuedAt()
				exp, _ := c.GetExpirationTime()
				aud, _ := c.GetAudience()
				if tok.Method.Alg() != tc.alg || c["iss"] != "jwt-client" || c["sub"] != "jwt-client" ||
					len(aud) != 1 || aud[0] != as.Issuer || iat == nil || exp == nil || exp.Sub(iat.Time) != 2*time.Minute {
					t.Errorf("assertion %d: alg %s, claims %v; want %s, iss and sub jwt-client, aud %s, exp 2 min after iat", i, tok.Method.Alg(), c, tc.alg, as.Issuer)
				}
				jti, _ := c["jti"].(string)
				if jti == "" || jtis[jti] {
					t.Errorf("assertion %d: jti %q, want a new one", i, jti)
				}
				jtis[jti] = true
			}
			for i, r := range as.Resources() {
				if r != as.URL {
					t.Errorf("token request %d: resource %q, want %q", i, r, as.URL)
				}
			}
		})
	}
}

// TestPrivateKeyJWTRefused: an assertion signed with a key the client did
// not register is refused (invalid_client), and Authorize says it was the
// private_key_jwt token request; no token reaches the MCP server. A key
// the configuration cannot use is refused by NewHandler, naming the
// server and private_key, without quoting the key.
func TestPrivateKeyJWTRefused(t *testing.T) {
	registered := ecKey(t, elliptic.P256())
	as := testauth.Start(t, &testauth.Options{KeyClients: map[string]crypto.PublicKey{"jwt-client": registered.Public()}})
	h, req, resp := jwtClient(t, as, pemKey(t, "PRIVATE KEY", ecKey(t, elliptic.P256())))
	err := h.Authorize(context.Background(), req, resp)
	if err == nil || !strings.Contains(err.Error(), "private_key_jwt") || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("Authorize with another key: %v, want the private_key_jwt request refused (invalid_client)", err)
	}
	if ts, _ := h.TokenSource(context.Background()); ts != nil {
		t.Error("a token source after a refused assertion")
	}
	if n := len(as.Assertions()); n != 1 {
		t.Errorf("%d assertions presented, want 1", n)
	}
	if seen := as.TokensSeen(); len(seen) != 0 {
		t.Errorf("the MCP server was sent %d tokens", len(seen))
	}

	p224 := pemKey(t, "EC PRIVATE KEY", ecKey(t, elliptic.P224()))
	for _, tc := range []struct{ name, key, want string }{
		{"not_PEM", "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", "not a PEM block"},
		{"unreadable", "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----\n", "(PRIVATE KEY): unreadable"},
		{"P-224", p224, "unsupported curve P-224"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oauth.NewHandler(as.URL, &config.OAuth{Grant: config.GrantClientCredentials, ClientID: "jwt-client", PrivateKey: tc.key}, oauth.Options{Server: "remote"})
			if err == nil || !strings.Contains(err.Error(), `server "remote": oauth.private_key`) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewHandler = %v, want an error naming the server, oauth.private_key and %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "MIGHAgEA") || strings.Contains(err.Error(), "c2VjcmV0")) {
				t.Errorf("NewHandler = %v: it quotes the key", err)
			}
		})
	}
}

package oauth

// Client credentials with private_key_jwt (RFC 7523 §2.2, the MCP
// client-credentials extension SEP-1046): the go-sdk's
// extauth.ClientCredentialsHandler authenticates with a secret only, so
// this handler does the same discovery through the go-sdk's oauthex and
// auth functions and signs its assertion with github.com/golang-jwt/jwt/v5.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// assertionType is the client_assertion_type of a JWT client assertion.
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime bounds how long a stolen assertion could be replayed;
// the token request follows its signing at once.
const assertionLifetime = 2 * time.Minute

// signingKey is a parsed private key and the JWS algorithm it signs with.
type signingKey struct {
	key    crypto.Signer
	method jwt.SigningMethod
}

// parsePrivateKey reads a PEM private key (PKCS #8, SEC 1 or PKCS #1) and
// picks its algorithm: ES256/384/512 by curve, RS256, EdDSA. The error
// never quotes the key.
func parsePrivateKey(pemText string) (*signingKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(pemText)))
	if block == nil {
		return nil, errors.New("private_key is not a PEM block (-----BEGIN PRIVATE KEY----- …)")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("private_key (%s): unreadable", block.Type)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return &signingKey{k, jwt.SigningMethodES256}, nil
		case elliptic.P384():
			return &signingKey{k, jwt.SigningMethodES384}, nil
		case elliptic.P521():
			return &signingKey{k, jwt.SigningMethodES512}, nil
		}
		return nil, fmt.Errorf("private_key: unsupported curve %s", k.Curve.Params().Name)
	case *rsa.PrivateKey:
		return &signingKey{k, jwt.SigningMethodRS256}, nil
	case ed25519.PrivateKey:
		return &signingKey{k, jwt.SigningMethodEdDSA}, nil
	}
	return nil, fmt.Errorf("private_key: unsupported key type %T", key)
}

// assertion is a fresh client assertion for clientID at the authorization
// server audience: iss and sub the client, a random jti, short-lived.
func (k *signingKey) assertion(clientID, audience string, now time.Time) (string, error) {
	var jti [16]byte
	if _, err := io.ReadFull(rand.Reader, jti[:]); err != nil {
		return "", err
	}
	claims := jwt.RegisteredClaims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.ClaimStrings{audience},
		ID:        hex.EncodeToString(jti[:]),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)),
	}
	return jwt.NewWithClaims(k.method, claims).SignedString(k.key)
}

// jwtHandler is the client credentials grant authenticated by a private
// key: discovery on the first 401 (protected resource metadata from
// WWW-Authenticate, then the well-known paths; authorization server
// metadata), then a token request with a new assertion whenever the
// token expires.
type jwtHandler struct {
	clientID string
	key      *signingKey
	client   *http.Client

	mu  sync.Mutex
	src oauth2.TokenSource
}

var _ auth.OAuthHandler = (*jwtHandler)(nil)

func newJWTHandler(clientID, privateKey string, client *http.Client) (*jwtHandler, error) {
	k, err := parsePrivateKey(privateKey)
	if err != nil {
		return nil, err
	}
	return &jwtHandler{clientID: clientID, key: k, client: client}, nil
}

func (h *jwtHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.src, nil
}

func (h *jwtHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp)
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate: %v", err)
	}
	resource := req.URL.String()
	prm, err := discoverResource(ctx, challenges, resource, h.client)
	if err != nil {
		return err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, h.client)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		// The 2025-03-26 fallback: the endpoints at fixed paths.
		asm = &oauthex.AuthServerMeta{Issuer: issuer, TokenEndpoint: strings.TrimSuffix(issuer, "/") + "/token"}
	}
	scopes := scopesOf(challenges)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	src := &jwtSource{h: h, ctx: context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, h.client),
		audience: asm.Issuer, tokenURL: asm.TokenEndpoint, scopes: scopes, resource: prm.Resource}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("client credentials token request (private_key_jwt): %w", err)
	}
	h.mu.Lock()
	h.src = ts
	h.mu.Unlock()
	return nil
}

// jwtSource asks for a new token with a new assertion each time.
type jwtSource struct {
	h                            *jwtHandler
	ctx                          context.Context
	audience, tokenURL, resource string
	scopes                       []string
}

func (s *jwtSource) Token() (*oauth2.Token, error) {
	a, err := s.h.key.assertion(s.h.clientID, s.audience, time.Now())
	if err != nil {
		return nil, fmt.Errorf("signing the client assertion: %w", err)
	}
	params := url.Values{"client_assertion_type": {assertionType}, "client_assertion": {a}}
	if s.resource != "" {
		params.Set("resource", s.resource)
	}
	cfg := &clientcredentials.Config{
		ClientID:       s.h.clientID,
		TokenURL:       s.tokenURL,
		Scopes:         s.scopes,
		EndpointParams: params,
		// In the body: there is no secret for a Basic header.
		AuthStyle: oauth2.AuthStyleInParams,
	}
	return cfg.Token(s.ctx)
}

// discoverResource finds the protected resource metadata as the go-sdk's
// handlers do: the URL WWW-Authenticate names, the well-known path of
// the endpoint, the root; with none, the 2025-03-26 fallback (the
// server's origin is the authorization server).
func discoverResource(ctx context.Context, challenges []oauthex.Challenge, resource string, c *http.Client) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	type candidate struct{ url, resource string }
	var cands []candidate
	for _, ch := range challenges {
		if u := ch.Params["resource_metadata"]; u != "" {
			cands = append(cands, candidate{u, resource})
			break
		}
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	cands = append(cands, candidate{mu.String(), resource})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	cands = append(cands, candidate{mu.String(), root.String()})
	for _, cd := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, cd.url, cd.resource, c)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("protected resource metadata %s names no authorization server", cd.url)
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: resource}, nil
}

// scopesOf is the scope a Bearer challenge asks for.
func scopesOf(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

package testauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/MicahParks/jwkset"
	"github.com/go-oauth2/oauth2/v4"
	"github.com/golang-jwt/jwt/v5"
)

// A signingKey is one of the authorization server's keys: an RSA key
// signing RS256, published in its JWKS under KID.
type signingKey struct {
	KID string
	key *rsa.PrivateKey
}

func newSigningKey(kid string) signingKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return signingKey{KID: kid, key: k}
}

// jwtAccess issues the server's access tokens as JWTs (RFC 9068) with
// golang-jwt, as go-oauth2's own generates.JWTAccessGenerate does, but
// with what a resource server checks: iss the issuer, aud the resource
// indicator of the token request (the client id without one), the scopes
// granted, iat, and a kid naming the key in the JWKS.
type jwtAccess struct{ s *Server }

func (a jwtAccess) Token(ctx context.Context, data *oauth2.GenerateBasic, isGenRefresh bool) (string, string, error) {
	aud := data.Client.GetID()
	if data.Request != nil {
		if r := data.Request.FormValue("resource"); r != "" {
			aud = r
		}
	}
	sub := data.UserID
	if sub == "" {
		sub = data.Client.GetID() // client credentials: the client is the subject
	}
	claims := jwt.MapClaims{
		"iss":       a.s.Issuer,
		"sub":       sub,
		"aud":       aud,
		"client_id": data.Client.GetID(),
		"scope":     data.TokenInfo.GetScope(),
		"iat":       data.CreateAt.Unix(),
		"exp":       data.TokenInfo.GetAccessCreateAt().Add(data.TokenInfo.GetAccessExpiresIn()).Unix(),
	}
	if extra := a.s.opts.Claims; extra != nil {
		for k, v := range extra(data.Client.GetID()) {
			claims[k] = v
		}
	}
	access, err := a.s.Mint(claims)
	if err != nil {
		return "", "", err
	}
	refresh := ""
	if isGenRefresh {
		refresh = rand.Text()
	}
	return access, refresh, nil
}

// Mint signs claims with the server's current key, as its token endpoint
// does: for tests of what a resource server accepts (wrong issuer or
// audience, expired). Only with Options.JWT.
func (s *Server) Mint(claims jwt.MapClaims) (string, error) {
	s.mu.Lock()
	k := s.keys[len(s.keys)-1]
	s.mu.Unlock()
	return MintWith(k.key, k.KID, claims)
}

// MintWith signs claims with key under kid (RS256): a key the server does
// not publish makes a token with a bad signature or an unknown kid.
func MintWith(key *rsa.PrivateKey, kid string, claims jwt.MapClaims) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = kid
	return t.SignedString(key)
}

// NewKey returns a fresh RSA key for MintWith.
func NewKey() *rsa.PrivateKey { return newSigningKey("").key }

// RotateKey adds a key to the server's JWKS and signs with it from now on.
func (s *Server) RotateKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := newSigningKey(fmt.Sprintf("k%d", len(s.keys)+1))
	s.keys = append(s.keys, k)
	return k.KID
}

// JWKSFetches is how many times the server's JWKS was fetched.
func (s *Server) JWKSFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jwksN
}

// Claims returns a token's claims, unverified, for tests that look at what
// was issued.
func Claims(token string) jwt.MapClaims {
	c := jwt.MapClaims{}
	jwt.NewParser().ParseUnverified(token, c)
	return c
}

func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.jwksN++
	keys := append([]signingKey(nil), s.keys...)
	s.mu.Unlock()
	var set jwkset.JWKSMarshal
	for _, k := range keys {
		jwk, err := jwkset.NewJWKFromKey(&k.key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: k.KID, ALG: jwkset.AlgRS256, USE: jwkset.UseSig}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		set.Keys = append(set.Keys, jwk.Marshal())
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(set)
}

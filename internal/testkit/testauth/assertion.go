package testauth

import (
	"net/http"
	"time"

	oerrors "github.com/go-oauth2/oauth2/v4/errors"
	"github.com/go-oauth2/oauth2/v4/server"
	"github.com/golang-jwt/jwt/v5"
)

// assertionType is the client_assertion_type of a JWT client assertion
// (RFC 7523 §2.2).
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// maxAssertionLife is the longest an assertion may live (exp − iat): a
// server may refuse one that could be replayed for long, as this one does.
const maxAssertionLife = 5 * time.Minute

// clientInfo authenticates a token request: a client of Options.KeyClients
// by its JWT assertion (private_key_jwt) alone, any other by HTTP Basic.
func (s *Server) clientInfo(r *http.Request) (string, string, error) {
	if r.FormValue("client_assertion_type") != "" || r.FormValue("client_assertion") != "" {
		id, err := s.checkAssertion(r)
		return id, "", err
	}
	id, secret, err := server.ClientBasicHandler(r)
	if _, keyed := s.opts.KeyClients[id]; keyed {
		return "", "", oerrors.ErrInvalidClient // registered without a secret: its key only
	}
	return id, secret, err
}

// checkAssertion checks a client assertion as RFC 7523 §3 asks: signed by
// the client's registered key (ES*, RS256 or EdDSA, never none or HMAC),
// iss and sub the client (and client_id, if sent), aud the issuer, not
// expired, living at most maxAssertionLife, its jti not seen before.
func (s *Server) checkAssertion(r *http.Request) (string, error) {
	s.mu.Lock()
	s.assertions = append(s.assertions, r.FormValue("client_assertion"))
	s.mu.Unlock()
	if r.FormValue("client_assertion_type") != assertionType {
		return "", oerrors.ErrInvalidClient
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(r.FormValue("client_assertion"), &claims, func(t *jwt.Token) (any, error) {
		key, ok := s.opts.KeyClients[t.Claims.(*jwt.RegisteredClaims).Issuer]
		if !ok {
			return nil, oerrors.ErrInvalidClient
		}
		return key, nil
	}, jwt.WithValidMethods([]string{"ES256", "ES384", "ES512", "RS256", "EdDSA"}),
		jwt.WithAudience(s.Issuer), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil || claims.Subject != claims.Issuer || claims.IssuedAt == nil || claims.ID == "" ||
		claims.ExpiresAt.Sub(claims.IssuedAt.Time) > maxAssertionLife {
		return "", oerrors.ErrInvalidClient
	}
	if id := r.FormValue("client_id"); id != "" && id != claims.Issuer {
		return "", oerrors.ErrInvalidClient
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jtis == nil {
		s.jtis = map[string]bool{}
	}
	if s.jtis[claims.ID] {
		return "", oerrors.ErrInvalidClient // replayed
	}
	s.jtis[claims.ID] = true
	return claims.Issuer, nil
}

// Assertions are the client assertions of the token requests, in order,
// accepted or not.
func (s *Server) Assertions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.assertions...)
}

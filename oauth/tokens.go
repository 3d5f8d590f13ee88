package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboardmcp/switchboard/secret"
)

// A Record is what is stored for one (resource, issuer, client id): the
// tokens, and what refreshing them needs without discovery.
type Record struct {
	// Resource is the server's URL, as the resource indicator sent.
	Resource string `json:"resource"`
	Issuer   string `json:"issuer"`
	ClientID string `json:"client_id"`
	// ClientSecret is a dynamically registered client's secret (a
	// pre-registered client's stays in the configuration's placeholder).
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`

	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Updated is when the record was last written.
	Updated time.Time `json:"updated"`
}

// Token returns the record's token.
func (r *Record) Token() *oauth2.Token {
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, RefreshToken: r.RefreshToken, Expiry: r.Expiry}
}

func (r *Record) setToken(t *oauth2.Token) {
	r.AccessToken, r.TokenType, r.Expiry = t.AccessToken, t.TokenType, t.Expiry
	if t.RefreshToken != "" {
		r.RefreshToken = t.RefreshToken
	}
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		r.Scopes = strings.Fields(s)
	}
}

func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
		Scopes:       r.Scopes,
	}
}

func (r *Record) key() string { return r.Issuer + " " + r.ClientID }

// Tokens keeps OAuth tokens in the secret store: one secret per resource
// URL (named oauth.<hash of the URL>, so not by server name: two servers
// of one URL share their login, and renaming a server keeps it), holding
// a record per (issuer, client id). Every write, and every refresh, holds
// a file lock, so that two processes refreshing at once do not each spend
// the refresh token (an authorization server that rotates refresh tokens
// would then revoke the login).
//
// Every token loaded or stored is given to Redactor, so that it never
// reaches a log, an event or an error.
type Tokens struct {
	// Vault is the secret store.
	Vault secret.Vault
	// LockPath is the lock file beside the store; "" locks within this
	// process only.
	LockPath string
	// Redactor, when set, is told every token and client secret.
	Redactor *secret.Redactor
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu sync.Mutex // in-process, around the file lock
}

// secretPrefix begins the name of each secret Tokens keeps.
const secretPrefix = "oauth."

// SecretName is the secret the records of resource are kept in.
func SecretName(resource string) string {
	sum := sha256.Sum256([]byte(canonicalResource(resource)))
	return secretPrefix + hex.EncodeToString(sum[:20])
}

// canonicalResource is resource without a trailing slash or fragment, the
// scheme and host lower case (RFC 8707's canonical form).
func canonicalResource(resource string) string {
	resource, _, _ = strings.Cut(resource, "#")
	if i := strings.Index(resource, "://"); i > 0 {
		rest := resource[i+3:]
		host, path, _ := strings.Cut(rest, "/")
		resource = strings.ToLower(resource[:i]) + "://" + strings.ToLower(host)
		if path != "" {
			resource += "/" + path
		}
	}
	return strings.TrimSuffix(resource, "/")
}

type stored struct {
	Records []Record `json:"records"`
}

func (t *Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// read returns the records kept for resource, read afresh (another
// process may have written them).
func (t *Tokens) read(resource string) ([]Record, error) {
	if r, ok := t.Vault.(interface{ Reload() }); ok {
		r.Reload()
	}
	raw, ok := t.Vault.Lookup(SecretName(resource))
	if !ok {
		return nil, nil
	}
	var s stored
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return nil, fmt.Errorf("the OAuth tokens stored for %s are unreadable (switchboard auth logout, then log in again): %v", resource, err)
	}
	for _, r := range s.Records {
		t.redact(&r)
	}
	return s.Records, nil
}

func (t *Tokens) redact(r *Record) {
	if t.Redactor == nil {
		return
	}
	for _, v := range []string{r.AccessToken, r.RefreshToken, r.ClientSecret} {
		if v != "" {
			t.Redactor.Add(v)
		}
	}
}

func (t *Tokens) write(resource string, recs []Record) error {
	name := SecretName(resource)
	if len(recs) == 0 {
		err := t.Vault.Delete(name)
		if errors.Is(err, secret.ErrNotFound) {
			err = nil
		}
		return err
	}
	b, err := json.Marshal(stored{Records: recs})
	if err != nil {
		return err
	}
	if err := t.Vault.Set(name, string(b)); err != nil {
		return fmt.Errorf("storing the OAuth tokens for %s: %w", resource, err)
	}
	return nil
}

// Load returns the most recently written record for resource, of client
// clientID if that is not "".
func (t *Tokens) Load(resource, clientID string) (*Record, error) {
	recs, err := t.read(resource)
	if err != nil {
		return nil, err
	}
	var best *Record
	for i := range recs {
		r := &recs[i]
		if clientID != "" && r.ClientID != clientID {
			continue
		}
		if best == nil || r.Updated.After(best.Updated) {
			best = r
		}
	}
	return best, nil
}

// Save stores r, replacing the record of the same (resource, issuer,
// client id).
func (t *Tokens) Save(r Record) error {
	unlock, err := t.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return t.saveLocked(r)
}

func (t *Tokens) saveLocked(r Record) error {
	t.redact(&r)
	recs, err := t.read(r.Resource)
	if err != nil {
		recs = nil // unreadable: replaced by what is known now
	}
	r.Updated = t.now()
	recs = slices.DeleteFunc(recs, func(o Record) bool { return o.key() == r.key() })
	return t.write(r.Resource, append(recs, r))
}

// Delete removes every record kept for resource and returns how many
// there were.
func (t *Tokens) Delete(resource string) (int, error) {
	unlock, err := t.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	recs, _ := t.read(resource)
	if _, ok := t.Vault.Lookup(SecretName(resource)); !ok {
		return 0, nil
	}
	return len(recs), t.write(resource, nil)
}

// lock takes the in-process lock and the lock file.
func (t *Tokens) lock() (func(), error) {
	t.mu.Lock()
	if t.LockPath == "" {
		return t.mu.Unlock, nil
	}
	unlock, err := lockFile(t.LockPath)
	if err != nil {
		t.mu.Unlock()
		return nil, fmt.Errorf("locking the OAuth token store (%s): %w", t.LockPath, err)
	}
	return func() { unlock(); t.mu.Unlock() }, nil
}

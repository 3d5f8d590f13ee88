package oauth

import (
	"context"
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

	"github.com/switchboardmcp/switchboard/internal/flock"
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

// expiryMargin is how long before its expiry an access token is renewed,
// as golang.org/x/oauth2 does (its expiryDelta): a token is not sent to
// expire on the way.
const expiryMargin = 10 * time.Second

// fresh reports whether the access token can still be used at now: it
// does not expire, or not within expiryMargin — within a quarter of its
// lifetime (from Updated, when it was written, to Expiry) for a token that
// lives less than four margins, so that a token of a few seconds is used
// for most of them, not renewed at every use.
func (r *Record) fresh(now time.Time) bool {
	if r.AccessToken == "" {
		return false
	}
	if r.Expiry.IsZero() {
		return true
	}
	margin := expiryMargin
	if life := r.Expiry.Sub(r.Updated); !r.Updated.IsZero() && life > 0 && life < 4*expiryMargin {
		margin = life / 4
	}
	return now.Add(margin).Before(r.Expiry)
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

// Tokens keeps OAuth tokens: one secret per resource URL (named
// oauth.<hash of the URL>, so not by server name: two servers of one URL
// share their login, and renaming a server keeps it), holding a record per
// (issuer, client id). Every write, and every refresh, holds a lock that
// other processes respect, so that two processes refreshing at once do not
// each spend the refresh token (an authorization server that rotates
// refresh tokens would then revoke the login).
//
// The records are kept in Vault, the secret store, under a file lock: the
// processes of one machine share them. Or, when Shared is set, in the
// state database the replicas of a gateway share (several machines),
// sealed by Sealer under a key each replica has in its own secret store,
// with the database's lock around each refresh: one login, made once,
// serves every replica. A login made in Vault before is still found there
// until the first write copies it to Shared.
//
// Every token loaded or stored is given to Redactor, so that it never
// reaches a log, an event or an error.
type Tokens struct {
	// Vault is the secret store.
	Vault secret.Vault
	// LockPath is the lock file beside the store; "" locks within this
	// process only.
	LockPath string
	// Shared, when set, keeps the records instead of Vault (*store.Store
	// is one), and Sealer, which is then required, seals them.
	Shared Shared
	Sealer *secret.Sealer
	// Redactor, when set, is told every token and client secret.
	Redactor *secret.Redactor
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Unavailable, when set, says why the tokens cannot be kept (the
	// state database cannot be opened, the key does not resolve): every
	// use fails with it, so that only the servers that sign in fail.
	Unavailable error

	mu sync.Mutex // in-process, around the file lock
}

// A Shared store keeps values where processes on several machines read and
// write them, and locks across them: the state database (store.Store).
// Values are opaque to it: Tokens seals them before.
type Shared interface {
	Secret(ctx context.Context, name string) (value string, ok bool, err error)
	SetSecret(ctx context.Context, name, value string) error
	DeleteSecret(ctx context.Context, name string) (bool, error)
	// Lock takes the lock called name, waiting for another holder until
	// ctx is done.
	Lock(ctx context.Context, name string) (unlock func(), err error)
	// Where says where it is, for people (never a password).
	Where() string
}

// storeTimeout bounds a read or a write of the records, and a wait for
// their lock, whose holder is refreshing (at most oauthTimeout): a store
// that never answers must not hold a call.
const storeTimeout = 2 * oauthTimeout

// ErrNoSealer: Shared is set without a Sealer.
var ErrNoSealer = errors.New("OAuth tokens are kept in the shared state database, sealed, and no key seals them: set [state] encryption_key (the same on every process that shares the database)")

// Location says where the records are kept, for people.
func (t *Tokens) Location() string {
	if t.Unavailable != nil {
		return "nowhere (" + t.Unavailable.Error() + ")"
	}
	if t.Shared != nil {
		where := "the state database " + t.Shared.Where()
		if t.Sealer != nil {
			where += " (sealed, key id " + t.Sealer.KeyID()
			if fb := t.Sealer.FallbackIDs(); len(fb) > 0 {
				where += "; also opened with " + strings.Join(fb, ", ")
			}
			where += ")"
		}
		return where
	}
	if t.Vault == nil {
		return "nowhere (no secret store)"
	}
	return t.Vault.Location()
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
	recs, _, err := t.readStale(resource)
	return recs, err
}

// readStale is read, and also reports whether the records were sealed
// under a fallback key (Tokens.reseal).
func (t *Tokens) readStale(resource string) ([]Record, bool, error) {
	raw, ok, stale, err := t.load(resource)
	if err != nil || !ok {
		return nil, false, err
	}
	var s stored
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return nil, false, fmt.Errorf("the OAuth tokens stored for %s are unreadable (switchboard auth logout, then log in again): %v", resource, err)
	}
	for _, r := range s.Records {
		t.redact(&r)
	}
	return s.Records, stale, nil
}

// load returns the secret resource's records are kept in: from Shared,
// opened (stale: under a fallback key), or else from Vault.
func (t *Tokens) load(resource string) (raw string, ok, stale bool, err error) {
	if err := t.usable(); err != nil {
		return "", false, false, err
	}
	name := SecretName(resource)
	if t.Shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		sealed, ok, err := t.Shared.Secret(ctx, name)
		if err != nil {
			return "", false, false, fmt.Errorf("reading the OAuth tokens for %s: %w", resource, err)
		}
		if ok {
			plain, err := t.Sealer.Open(name, sealed)
			if err != nil {
				return "", false, false, fmt.Errorf("the OAuth tokens stored for %s in %s cannot be opened: %w; every process sharing the database needs the same [state] encryption_key, or the key that sealed them among its encryption_key_fallbacks (or switchboard auth logout, then log in again)", resource, t.Shared.Where(), err)
			}
			return string(plain), true, t.Sealer.Stale(sealed), nil
		}
		// Not in the database: a login made in the secret store before
		// the database was shared counts, until a write copies it.
	}
	if t.Vault == nil {
		return "", false, false, nil
	}
	if r, ok := t.Vault.(interface{ Reload() }); ok {
		r.Reload()
	}
	raw, ok = t.Vault.Lookup(name)
	return raw, ok, false, nil
}

// reseal seals resource's records again under the sealing key, now that
// a fallback key opened them: the key being rotated out can then be taken
// away. It reads them again under the lock, so that a refresh another
// process made meanwhile is kept, not undone.
func (t *Tokens) reseal(resource string) error {
	unlock, err := t.lock(resource)
	if err != nil {
		return err
	}
	defer unlock()
	recs, stale, err := t.readStale(resource)
	if err != nil || !stale {
		return err
	}
	return t.write(resource, recs)
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

// usable says why the records cannot be reached: Unavailable, or Shared
// without a Sealer.
func (t *Tokens) usable() error {
	switch {
	case t.Unavailable != nil:
		return t.Unavailable
	case t.Shared != nil && t.Sealer == nil:
		return ErrNoSealer
	}
	return nil
}

// write stores recs as resource's records, or deletes them when there are
// none.
func (t *Tokens) write(resource string, recs []Record) error {
	if err := t.usable(); err != nil {
		return err
	}
	if len(recs) == 0 {
		return t.erase(resource)
	}
	b, err := json.Marshal(stored{Records: recs})
	if err != nil {
		return err
	}
	name := SecretName(resource)
	switch {
	case t.Shared != nil:
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		err = t.Shared.SetSecret(ctx, name, t.Sealer.Seal(name, b))
	case t.Vault == nil:
		return errors.New("no secret store to keep OAuth tokens in")
	default:
		err = t.Vault.Set(name, string(b))
	}
	if err != nil {
		return fmt.Errorf("storing the OAuth tokens for %s: %w", resource, err)
	}
	return nil
}

// erase deletes resource's records: from Shared, and from Vault, where a
// login made before the database was shared would be found next.
func (t *Tokens) erase(resource string) error {
	name := SecretName(resource)
	if t.Shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if _, err := t.Shared.DeleteSecret(ctx, name); err != nil {
			return fmt.Errorf("deleting the OAuth tokens for %s: %w", resource, err)
		}
	}
	if t.Vault == nil {
		return nil
	}
	err := t.Vault.Delete(name)
	if errors.Is(err, secret.ErrNotFound) || t.Shared != nil && errors.Is(err, secret.ErrReadOnly) {
		return nil
	}
	if err != nil && t.Shared != nil {
		return fmt.Errorf("deleting the OAuth tokens for %s from the secret store: %w", resource, err)
	}
	return err
}

// Load returns the most recently written record for resource, of client
// clientID if that is not "". Records sealed under a fallback key are
// sealed again under the sealing key (a failure to is left for the next
// Load: they were read).
func (t *Tokens) Load(resource, clientID string) (*Record, error) {
	recs, stale, err := t.readStale(resource)
	if err != nil {
		return nil, err
	}
	if stale {
		t.reseal(resource)
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
	unlock, err := t.lock(r.Resource)
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
	unlock, err := t.lock(resource)
	if err != nil {
		return 0, err
	}
	defer unlock()
	raw, ok, _, err := t.load(resource)
	if err != nil && !errors.Is(err, secret.ErrSealed) && !errors.Is(err, secret.ErrSealerKey) {
		return 0, err // unreadable records are deleted; unreachable ones are not
	}
	if !ok && err == nil {
		return 0, nil
	}
	var s stored
	json.Unmarshal([]byte(raw), &s)
	return max(len(s.Records), 1), t.write(resource, nil)
}

// lock takes the lock around the records of resource: the database's,
// or the in-process lock and the lock file.
func (t *Tokens) lock(resource string) (func(), error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if t.Shared != nil {
		unlock, err := t.Shared.Lock(ctx, SecretName(resource))
		if err != nil {
			return nil, fmt.Errorf("locking the OAuth tokens of %s: %w", resource, err)
		}
		return unlock, nil
	}
	t.mu.Lock()
	if t.LockPath == "" {
		return t.mu.Unlock, nil
	}
	unlock, err := flock.Lock(ctx, t.LockPath, nil)
	if errors.Is(err, errors.ErrUnsupported) {
		return t.mu.Unlock, nil // no flock here: this process's refreshes are ordered
	}
	if err != nil {
		t.mu.Unlock()
		return nil, fmt.Errorf("locking the OAuth token store (%s): %w", t.LockPath, err)
	}
	return func() { unlock(); t.mu.Unlock() }, nil
}

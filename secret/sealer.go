package secret

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A Sealer encrypts secrets Switchboard keeps outside a secret store: the
// OAuth tokens the replicas of a gateway share in their state database.
// Whoever reads the database (a backup, a replica of it, an operator with
// SQL access) reads only sealed values; each Switchboard process that
// shares them is given the key from its own secret store.
//
// A value is sealed with AES-256-GCM under a key derived (HKDF-SHA256)
// from the passphrase, with its name as additional data: a sealed value
// moved to another name does not open. It is text: "sb1.", the key's id
// (not secret: 8 hex digits derived from the key), ".", and the nonce and
// ciphertext in unpadded base64url.
//
// A Sealer may also hold fallback keys, which open what they sealed but
// never seal: the keys being rotated in or out. [Sealer.Stale] says which
// values to seal again under the sealing key.
type Sealer struct {
	aead cipher.AEAD
	id   string
	// fallbacks open values sealed under their ids.
	fallbacks map[string]cipher.AEAD
}

// MinSealerKey is the shortest passphrase [NewSealer] takes, in bytes:
// 32 random bytes, base64-encoded (openssl rand -base64 32), are 44.
const MinSealerKey = 32

// Errors [Sealer.Open] returns.
var (
	// ErrSealerKey: the value was sealed under another key.
	ErrSealerKey = errors.New("sealed under another key")
	// ErrSealed: the value is not one a Sealer made, or was altered.
	ErrSealed = errors.New("not a sealed value, or altered")
)

const (
	sealedPrefix = "sb1."
	sealedAD     = "switchboard-sealed-v1\n"
)

// NewSealer returns the Sealer that seals under passphrase and opens what
// it or any of fallbacks sealed. Each must be at least [MinSealerKey]
// bytes long. Its errors never quote a passphrase.
func NewSealer(passphrase string, fallbacks ...string) (*Sealer, error) {
	aead, id, err := sealerKey(passphrase)
	if err != nil {
		return nil, err
	}
	s := &Sealer{aead: aead, id: id, fallbacks: map[string]cipher.AEAD{}}
	for i, f := range fallbacks {
		aead, id, err := sealerKey(f)
		if err != nil {
			return nil, fmt.Errorf("fallback key %d: %w", i+1, err)
		}
		if id != s.id {
			s.fallbacks[id] = aead
		}
	}
	return s, nil
}

// sealerKey returns the cipher and the id of passphrase's key.
func sealerKey(passphrase string) (cipher.AEAD, string, error) {
	key, err := DeriveKey(passphrase, "sealer v1 key", 32)
	if err != nil {
		return nil, "", err
	}
	id, err := DeriveKey(passphrase, "sealer v1 id", 4)
	if err != nil {
		return nil, "", err
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, "", err
	}
	return aead, hex.EncodeToString(id), nil
}

// DeriveKey returns n bytes of key for purpose, derived (HKDF-SHA256)
// from passphrase, which must be at least [MinSealerKey] bytes long: one
// passphrase given to every replica keys several things, each with a key
// of its own that reveals nothing of the others. Its errors never quote
// the passphrase.
func DeriveKey(passphrase, purpose string, n int) ([]byte, error) {
	if len(passphrase) < MinSealerKey {
		return nil, fmt.Errorf("the key is %d bytes long, and must be %d or more: make one with openssl rand -base64 32", len(passphrase), MinSealerKey)
	}
	return hkdf.Key(sha256.New, []byte(passphrase), nil, "switchboard "+purpose, n)
}

// KeyID names the sealing key, for messages: two processes with the same
// key show the same id. It reveals nothing of the key.
func (s *Sealer) KeyID() string { return s.id }

// FallbackIDs names the fallback keys, sorted.
func (s *Sealer) FallbackIDs() []string { return slices.Sorted(maps.Keys(s.fallbacks)) }

// Stale reports whether sealed was sealed under a fallback key: it opens,
// and should be sealed again under the sealing key before that fallback
// is taken away.
func (s *Sealer) Stale(sealed string) bool {
	id, _, ok := splitSealed(sealed)
	return ok && s.fallbacks[id] != nil
}

// splitSealed splits a sealed value into its key id and its data.
func splitSealed(sealed string) (id, data string, ok bool) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ".")
}

// Seal returns plain sealed, bound to name.
func (s *Sealer) Seal(name string, plain []byte) string {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	out := s.aead.Seal(nonce, nonce, plain, []byte(sealedAD+name))
	return sealedPrefix + s.id + "." + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the value Seal sealed under name, with the sealing key or a
// fallback: [ErrSealerKey] when it was sealed under another key (the
// error names the keys' ids), and [ErrSealed] when it is not a sealed
// value, was altered, or was sealed under another name.
func (s *Sealer) Open(name, sealed string) ([]byte, error) {
	id, data, ok := splitSealed(sealed)
	if !ok {
		return nil, ErrSealed
	}
	aead := s.aead
	if id != s.id {
		if aead = s.fallbacks[id]; aead == nil {
			keys := "key is " + s.id
			if len(s.fallbacks) > 0 {
				keys = "keys are " + s.id + " (sealing) and " + strings.Join(s.FallbackIDs(), ", ")
			}
			return nil, fmt.Errorf("%w (key id %s; this process's %s)", ErrSealerKey, id, keys)
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, ErrSealed
	}
	nonce, ct := raw[:aead.NonceSize()], raw[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, []byte(sealedAD+name))
	if err != nil {
		return nil, ErrSealed
	}
	return plain, nil
}

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
type Sealer struct {
	aead cipher.AEAD
	id   string
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

// NewSealer returns the Sealer of passphrase, which must be at least
// [MinSealerKey] bytes long. Its errors never quote the passphrase.
func NewSealer(passphrase string) (*Sealer, error) {
	key, err := DeriveKey(passphrase, "sealer v1 key", 32)
	if err != nil {
		return nil, err
	}
	id, err := DeriveKey(passphrase, "sealer v1 id", 4)
	if err != nil {
		return nil, err
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead, id: hex.EncodeToString(id)}, nil
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

// KeyID names the key, for messages: two processes with the same key
// show the same id. It reveals nothing of the key.
func (s *Sealer) KeyID() string { return s.id }

// Seal returns plain sealed, bound to name.
func (s *Sealer) Seal(name string, plain []byte) string {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	out := s.aead.Seal(nonce, nonce, plain, []byte(sealedAD+name))
	return sealedPrefix + s.id + "." + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the value Seal sealed under name: [ErrSealerKey] when it
// was sealed under another key (the error names both keys' ids), and
// [ErrSealed] when it is not a sealed value, was altered, or was sealed
// under another name.
func (s *Sealer) Open(name, sealed string) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	id, data, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return nil, ErrSealed
	}
	if id != s.id {
		return nil, fmt.Errorf("%w (key id %s; this process's key is %s)", ErrSealerKey, id, s.id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, ErrSealed
	}
	nonce, ct := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, ct, []byte(sealedAD+name))
	if err != nil {
		return nil, ErrSealed
	}
	return plain, nil
}

package secret

import (
	"crypto/hmac"
	"crypto/sha256"
)

// A Signer signs short texts that Switchboard hands out and must know
// again when they come back (the gateway's and workflow gates'
// requestStates): HMAC-SHA256 under its key. Like a [Sealer], it may also
// hold fallback keys, which verify what they signed but never sign: the
// keys being rotated in or out.
type Signer struct {
	key       []byte
	fallbacks [][]byte
}

// NewSigner returns the Signer that signs with key and verifies what key
// or any of fallbacks signed.
func NewSigner(key []byte, fallbacks ...[]byte) *Signer {
	return &Signer{key: key, fallbacks: fallbacks}
}

// Sign returns text's signature.
func (s *Signer) Sign(text string) []byte { return mac(s.key, text) }

// Verify reports whether sig is text's signature under the key or a
// fallback.
func (s *Signer) Verify(text string, sig []byte) bool {
	if hmac.Equal(sig, mac(s.key, text)) {
		return true
	}
	for _, k := range s.fallbacks {
		if hmac.Equal(sig, mac(k, text)) {
			return true
		}
	}
	return false
}

func mac(key []byte, text string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(text))
	return m.Sum(nil)
}

package secret_test

import (
	"bytes"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

// TestSigner: a signature verifies under its key, not altered nor under
// another key; fallbacks verify what they signed and never sign.
func TestSigner(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte("o"), 32), bytes.Repeat([]byte("n"), 32)
	old := secret.NewSigner(oldKey)
	sig := old.Sign("state")
	if !old.Verify("state", sig) || old.Verify("statE", sig) || old.Verify("state", append(sig[:len(sig)-1:len(sig)-1], sig[len(sig)-1]^1)) {
		t.Error("a signature verified altered, or did not verify as it was")
	}
	rotated := secret.NewSigner(newKey, oldKey)
	if !rotated.Verify("state", sig) {
		t.Error("the fallback did not verify what it signed")
	}
	if bytes.Equal(rotated.Sign("state"), sig) || old.Verify("state", rotated.Sign("state")) {
		t.Error("the rotated signer signed with its fallback")
	}
	if secret.NewSigner(newKey).Verify("state", sig) {
		t.Error("another key verified the signature")
	}
}

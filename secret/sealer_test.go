package secret_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

func TestSealer(t *testing.T) {
	const key = "JmD3kq0m4cP8yB9cXbV3lA2nW7rT5sE1uY6oI4pZ0aQ="
	s, err := secret.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	plain := `{"access_token":"at-0123456789"}`
	sealed := s.Seal("oauth.abc", []byte(plain))
	if strings.Contains(sealed, "at-0123456789") || !strings.HasPrefix(sealed, "sb1."+s.KeyID()+".") {
		t.Fatalf("Seal = %q: want sb1.<key id>. and no plaintext", sealed)
	}
	if again := s.Seal("oauth.abc", []byte(plain)); again == sealed {
		t.Errorf("two Seals of one value are equal: the nonce is not fresh")
	}

	// The same passphrase, in another process: opens.
	s2, _ := secret.NewSealer(key)
	if got, err := s2.Open("oauth.abc", sealed); err != nil || string(got) != plain {
		t.Errorf("Open = %q, %v; want %q", got, err, plain)
	}
	if s2.KeyID() != s.KeyID() || len(s.KeyID()) != 8 || strings.Contains(key, s.KeyID()) {
		t.Errorf("KeyID = %q and %q: want one 8-digit id, not part of the key", s.KeyID(), s2.KeyID())
	}

	other, _ := secret.NewSealer(strings.Repeat("k", 40))
	if _, err := other.Open("oauth.abc", sealed); !errors.Is(err, secret.ErrSealerKey) ||
		!strings.Contains(err.Error(), s.KeyID()) || !strings.Contains(err.Error(), other.KeyID()) {
		t.Errorf("Open under another key: %v; want ErrSealerKey naming both key ids", err)
	}
	tampered := sealed[:len(sealed)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(sealed, "AA")]
	for name, c := range map[string]struct{ name, sealed string }{
		"another name": {"oauth.other", sealed},
		"altered":      {"oauth.abc", tampered},
		"not sealed":   {"oauth.abc", plain},
		"no data":      {"oauth.abc", "sb1." + s.KeyID() + "."},
	} {
		if _, err := s.Open(c.name, c.sealed); !errors.Is(err, secret.ErrSealed) {
			t.Errorf("%s: Open = %v, want ErrSealed", name, err)
		}
	}

	if _, err := secret.NewSealer("short-key-0123456789"); err == nil || strings.Contains(err.Error(), "short-key") {
		t.Errorf("NewSealer(20 bytes) = %v: want a refusal that does not quote the key", err)
	}
}

// TestSealerFallbacks: a key is rotated with fallbacks, which open what
// they sealed but never seal; Stale names the values to seal again.
func TestSealerFallbacks(t *testing.T) {
	oldKey, newKey := strings.Repeat("o", 40), strings.Repeat("n", 40)
	old, _ := secret.NewSealer(oldKey)
	sealedOld := old.Seal("oauth.abc", []byte("v1"))

	// Phase 1: the new key is a fallback everywhere; values still sealed
	// under the old one.
	phase1, err := secret.NewSealer(oldKey, newKey)
	if err != nil {
		t.Fatal(err)
	}
	// Phase 2: the new key seals; the old one opens what it sealed.
	rotated, err := secret.NewSealer(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open("oauth.abc", sealedOld); err != nil || string(got) != "v1" {
		t.Errorf("the rotated sealer opens an old value: %q, %v", got, err)
	}
	if !rotated.Stale(sealedOld) || old.Stale(sealedOld) {
		t.Errorf("Stale(old value) = %v under the rotated sealer, %v under the old: want true, false", rotated.Stale(sealedOld), old.Stale(sealedOld))
	}
	sealedNew := rotated.Seal("oauth.abc", []byte("v2"))
	if !strings.HasPrefix(sealedNew, "sb1."+rotated.KeyID()+".") || rotated.Stale(sealedNew) {
		t.Errorf("the rotated sealer sealed %q: want its own key id, not stale", sealedNew)
	}
	if got, err := phase1.Open("oauth.abc", sealedNew); err != nil || string(got) != "v2" {
		t.Errorf("a phase-1 process opens a value the rotated one sealed: %q, %v", got, err)
	}
	if fb := rotated.FallbackIDs(); len(fb) != 1 || fb[0] != old.KeyID() {
		t.Errorf("FallbackIDs = %v; want [%s]", fb, old.KeyID())
	}
	// Phase 3: the old key is gone; an old value no longer opens, and the
	// error names the keys there are.
	done, _ := secret.NewSealer(newKey)
	if _, err := done.Open("oauth.abc", sealedOld); !errors.Is(err, secret.ErrSealerKey) || !strings.Contains(err.Error(), old.KeyID()) {
		t.Errorf("opening an old value with the old key gone: %v; want ErrSealerKey naming %s", err, old.KeyID())
	}
	third, _ := secret.NewSealer(strings.Repeat("t", 40))
	if _, err := third.Open("oauth.abc", sealedOld); err == nil {
		t.Error("an unrelated key opened the value")
	}
	if _, err := rotated.Open("oauth.abc", third.Seal("oauth.abc", []byte("x"))); !errors.Is(err, secret.ErrSealerKey) ||
		!strings.Contains(err.Error(), rotated.KeyID()+" (sealing) and "+old.KeyID()) {
		t.Errorf("a value under an unknown key: %v; want ErrSealerKey naming the sealing key and the fallback", err)
	}
	if _, err := secret.NewSealer(newKey, "short"); err == nil || !strings.Contains(err.Error(), "fallback key 1") || strings.Contains(err.Error(), "short") {
		t.Errorf("a short fallback: %v; want a refusal naming fallback key 1, not quoting it", err)
	}
}

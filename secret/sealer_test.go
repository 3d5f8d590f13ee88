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

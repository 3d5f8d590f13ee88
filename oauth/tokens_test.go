package oauth_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
)

// TestSharedTokens: a login made in the secret store before the database
// was shared is found, and copied into the database at the next write;
// a process with another key is refused by name and key id, and one with
// no key is told which setting is missing; logout removes both copies.
func TestSharedTokens(t *testing.T) {
	db := testpg.CreateDatabase(t, testpg.Start(t), "oauth_shared")
	dir := t.TempDir()
	const resource = "https://mcp.example.com/mcp"
	rec := oauth.Record{Resource: resource, Issuer: "https://as.example.com", ClientID: "c1",
		AccessToken: "at-legacy-1234", RefreshToken: "rt-legacy-5678", Expiry: time.Now().Add(time.Hour)}

	local := openTokens(t, dir, "")
	if err := local.Save(rec); err != nil {
		t.Fatal(err)
	}
	shared := openTokens(t, dir, db)
	if !strings.Contains(shared.Location(), "the state database postgres://") || !strings.Contains(shared.Location(), shared.Sealer.KeyID()) {
		t.Errorf("Location() = %q: want the database and the key id", shared.Location())
	}
	got, err := shared.Load(resource, "c1")
	if err != nil || got == nil || got.AccessToken != rec.AccessToken {
		t.Fatalf("Load of a login in the secret store only = %+v, %v", got, err)
	}

	// A write copies it: a replica with an empty secret store sees it.
	got.AccessToken = "at-shared-9999"
	if err := shared.Save(*got); err != nil {
		t.Fatal(err)
	}
	replica := openTokens(t, t.TempDir(), db)
	if r, err := replica.Load(resource, "c1"); err != nil || r == nil || r.AccessToken != "at-shared-9999" || r.RefreshToken != rec.RefreshToken {
		t.Fatalf("another replica's Load = %+v, %v; want the copied login", r, err)
	}
	checkSealed(t, db, &oauth.Record{Resource: resource, AccessToken: "at-shared-9999", RefreshToken: rec.RefreshToken})

	// Another key: refused, naming the key ids; no key: ErrNoSealer.
	wrong := openTokens(t, t.TempDir(), db)
	wrong.Sealer, _ = secret.NewSealer(strings.Repeat("w", 40))
	if _, err := wrong.Load(resource, "c1"); !errors.Is(err, secret.ErrSealerKey) ||
		!strings.Contains(err.Error(), wrong.Sealer.KeyID()) || !strings.Contains(err.Error(), "encryption_key") || strings.Contains(err.Error(), "at-shared") {
		t.Errorf("Load under another key: %v; want ErrSealerKey naming the key ids and the setting, no token", err)
	}
	wrong.Sealer = nil
	if _, err := wrong.Load(resource, "c1"); !errors.Is(err, oauth.ErrNoSealer) {
		t.Errorf("Load with no key: %v, want ErrNoSealer", err)
	}
	if err := wrong.Save(rec); !errors.Is(err, oauth.ErrNoSealer) {
		t.Errorf("Save with no key: %v, want ErrNoSealer", err)
	}

	// Logout removes the database's copy and the secret store's, which
	// would otherwise be found again.
	if n, err := shared.Delete(resource); n != 1 || err != nil {
		t.Fatalf("Delete = %d, %v; want 1", n, err)
	}
	for name, tokens := range map[string]*oauth.Tokens{"shared": shared, "local": local, "replica": replica} {
		if r, err := tokens.Load(resource, ""); r != nil || err != nil {
			t.Errorf("%s Load after Delete = %+v, %v; want nothing", name, r, err)
		}
	}
	if n, err := shared.Delete(resource); n != 0 || err != nil {
		t.Errorf("second Delete = %d, %v; want 0", n, err)
	}
}

// TestSharedTokensRotation: [state] encryption_key is rotated with
// encryption_key_fallbacks. A process whose fallback is the old key reads
// a login sealed under it and seals it again under the new key, so that
// a process with the new key alone reads it next; one with the old key
// alone no longer can, and says which keys it has.
func TestSharedTokensRotation(t *testing.T) {
	db := testpg.CreateDatabase(t, testpg.Start(t), "oauth_rotation")
	const resource = "https://mcp.example.com/mcp"
	const newKey = "a-new-state-key-0123456789-0123456789-0123"
	rec := oauth.Record{Resource: resource, Issuer: "https://as.example.com", ClientID: "client-rotation-0123456789",
		AccessToken: "at-rotate-1234", RefreshToken: "rt-rotate-5678", Expiry: time.Now().Add(time.Hour)}
	old := openTokens(t, t.TempDir(), db)
	if err := old.Save(rec); err != nil {
		t.Fatal(err)
	}
	oldID := old.Sealer.KeyID()
	if row := loginRow(t, db, resource); !strings.HasPrefix(row, "sb1."+oldID+".") {
		t.Fatalf("the login's row %.14q…: want it sealed under the old key %s", row, oldID)
	}

	rotated := openTokens(t, t.TempDir(), db)
	var err error
	if rotated.Sealer, err = secret.NewSealer(newKey, sealerKey); err != nil {
		t.Fatal(err)
	}
	newID := rotated.Sealer.KeyID()
	if loc := rotated.Location(); !strings.Contains(loc, "key id "+newID+"; also opened with "+oldID) {
		t.Errorf("Location() = %q: want the sealing key and the fallback", loc)
	}
	if r, err := rotated.Load(resource, rec.ClientID); err != nil || r == nil || r.AccessToken != rec.AccessToken || r.RefreshToken != rec.RefreshToken {
		t.Fatalf("Load with the old key as a fallback = %+v, %v", r, err)
	}
	if row := loginRow(t, db, resource); !strings.HasPrefix(row, "sb1."+newID+".") {
		t.Errorf("after a Load with the old key as a fallback, the row is %.14q…: want it sealed again under %s", row, newID)
	}
	checkSealed(t, db, &rec) // a client id long enough not to appear in the sealed text by chance

	done := openTokens(t, t.TempDir(), db)
	done.Sealer, _ = secret.NewSealer(newKey)
	if r, err := done.Load(resource, rec.ClientID); err != nil || r == nil || r.AccessToken != rec.AccessToken {
		t.Errorf("Load with the new key alone = %+v, %v; want the login, sealed again", r, err)
	}
	if _, err := old.Load(resource, rec.ClientID); !errors.Is(err, secret.ErrSealerKey) || !strings.Contains(err.Error(), newID) ||
		!strings.Contains(err.Error(), "encryption_key_fallbacks") {
		t.Errorf("Load with the old key alone: %v; want ErrSealerKey naming %s and the fallbacks setting", err, newID)
	}
}

package secret

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "switchboard")
	env := map[string]string{"SWITCHBOARD_SECRET_FROM_ENV": "env-value-1", "SWITCHBOARD_SECRET_BOTH": "env-loses"}
	open := func() Vault {
		v, err := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(env)})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := open()
	if v.Backend() != BackendFile {
		t.Fatalf("Backend() = %q, want file", v.Backend())
	}
	// Nothing on disk before the first Set.
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenStore created %s before any Set (%v)", dir, err)
	}
	if names, err := v.List(); err != nil || len(names) != 0 {
		t.Fatalf("List() on an empty store = %v, %v", names, err)
	}
	for _, kv := range [][2]string{{"github_token", "ghp-value-123"}, {"both", "file-wins"}, {"a.b-c", "dotted-value"}} {
		if err := v.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%s): %v", kv[0], err)
		}
	}

	// Files: 0700 dir, 0600 data and key, no plaintext.
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {filepath.Join(dir, "secrets.enc"), 0o600}, {filepath.Join(dir, "secrets.key"), 0o600}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != f.mode {
			t.Errorf("%s: mode %04o, want %04o", f.path, fi.Mode().Perm(), f.mode)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "secrets.enc"))
	if strings.Contains(string(data), "ghp-value-123") || strings.Contains(string(data), "github_token") {
		t.Error("secrets.enc holds a name or value in plaintext")
	}

	// A new Vault reads what the first wrote; backend first, then env.
	v2 := open()
	for name, want := range map[string]string{"github_token": "ghp-value-123", "both": "file-wins", "a.b-c": "dotted-value", "from_env": "env-value-1"} {
		if got, ok := v2.Lookup(name); !ok || got != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := v2.Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
	names, err := v2.List()
	if err != nil || !slices.Equal(names, []string{"a.b-c", "both", "github_token"}) {
		t.Errorf("List() = %v, %v", names, err)
	}
	if err := v2.Delete("both"); err != nil {
		t.Fatal(err)
	}
	if err := v2.Delete("both"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	if got, _ := open().Lookup("both"); got != "env-loses" {
		t.Errorf("after Delete, Lookup(both) = %q, want the environment's value", got)
	}
	if h := v2.Hint("x"); !strings.Contains(h, "switchboard secrets set x") || !strings.Contains(h, "SWITCHBOARD_SECRET_X") {
		t.Errorf("Hint = %q", h)
	}

	// No temp files left behind by the atomic writes.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		t.Errorf("dir holds %v, want secrets.enc and secrets.key only", n)
	}
}

func TestFileStoreRefuses(t *testing.T) {
	dir := t.TempDir()
	v, _ := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
	for _, name := range []string{"", "1abc", "-x", "a b", "a:b", "a/b", "../x", strings.Repeat("x", 129)} {
		if err := v.Set(name, "value-1234"); err == nil {
			t.Errorf("Set(%q) succeeded, want an invalid name", name)
		}
	}
	for _, val := range []string{"", "a\nb", "a\rb", "a\x00b"} {
		if err := v.Set("ok", val); err == nil {
			t.Errorf("Set(ok, %q) succeeded, want refused", val)
		}
	}
	if err := v.Set("ok", "value-1234"); err != nil {
		t.Fatal(err)
	}

	// A key readable by others is refused, and the hint says so.
	os.Chmod(filepath.Join(dir, "secrets.key"), 0o644)
	v2, _ := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
	if _, ok := v2.Lookup("ok"); ok {
		t.Error("Lookup with a world-readable key succeeded")
	}
	if h := v2.Hint("ok"); !strings.Contains(h, "chmod 600") {
		t.Errorf("Hint = %q, want the chmod advice", h)
	}
	os.Chmod(filepath.Join(dir, "secrets.key"), 0o600)

	// A tampered file does not decrypt, and the error shows no value.
	p := filepath.Join(dir, "secrets.enc")
	data, _ := os.ReadFile(p)
	data[len(data)-1] ^= 1
	os.WriteFile(p, data, 0o600)
	v3, _ := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
	if _, err := v3.List(); err == nil || !strings.Contains(err.Error(), "tampered") {
		t.Errorf("List on a tampered file = %v", err)
	}
	if err := v3.Set("other", "value-5678"); err == nil {
		t.Error("Set over a file that does not decrypt succeeded; it would lose every secret")
	}

	// A data file without its key is an error, not a new empty store.
	os.Remove(filepath.Join(dir, "secrets.key"))
	v4, _ := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
	if err := v4.Set("x", "value-1234"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Set without the key file = %v, want refused", err)
	}
}

func TestFileStoreConcurrentSet(t *testing.T) {
	dir := t.TempDir()
	v, _ := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			if err := v.Set("n"+string(rune('a'+i)), "value-1234"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if names, _ := v.List(); len(names) != 10 {
		t.Errorf("List() = %v, want 10 names", names)
	}
}

func TestOpenStoreDefaults(t *testing.T) {
	xdg := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": xdg} // no D-Bus session bus
	v, err := OpenStore(&StoreOptions{LookupEnv: envOf(env)})
	if err != nil {
		t.Fatal(err)
	}
	if v.Backend() != BackendFile || !strings.HasPrefix(v.Location(), filepath.Join(xdg, "switchboard", "secrets.enc")) {
		t.Errorf("default store = %s at %s, want the file under XDG_CONFIG_HOME", v.Backend(), v.Location())
	}
	if _, err := OpenStore(&StoreOptions{Backend: BackendKeyring, LookupEnv: envOf(env)}); err == nil {
		t.Error("forcing the keyring without a session bus succeeded")
	}
	env[BackendEnvVar] = "env"
	v, _ = OpenStore(&StoreOptions{LookupEnv: envOf(env)})
	if v.Backend() != BackendEnv {
		t.Errorf("%s=env gave %s", BackendEnvVar, v.Backend())
	}
	if err := v.Set("x", "value-1234"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("env Set = %v, want ErrReadOnly", err)
	}
	env[BackendEnvVar] = "vault9"
	if _, err := OpenStore(&StoreOptions{LookupEnv: envOf(env)}); err == nil {
		t.Error("unknown backend accepted")
	}
}

// memKeyring is an in-memory keyring with go-keyring's error for a miss.
type memKeyring struct {
	mu    sync.Mutex
	items map[string]string
	fail  error
	block chan struct{}
}

func (k *memKeyring) Get(s, u string) (string, error) {
	if k.block != nil {
		<-k.block
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fail != nil {
		return "", k.fail
	}
	v, ok := k.items[s+"/"+u]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (k *memKeyring) Set(s, u, p string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.items[s+"/"+u] = p
	return nil
}

func (k *memKeyring) Delete(s, u string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.items[s+"/"+u]; !ok {
		return keyring.ErrNotFound
	}
	delete(k.items, s+"/"+u)
	return nil
}

func TestKeyringStore(t *testing.T) {
	kr := &memKeyring{items: map[string]string{}}
	env := map[string]string{"SWITCHBOARD_SECRET_ENV_ONLY": "env-value-1"}
	v, err := OpenStore(&StoreOptions{Keyring: kr, LookupEnv: envOf(env), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Backend() != BackendKeyring {
		t.Fatalf("Backend() = %q with a keyring that answers, want keyring", v.Backend())
	}
	v.Set("tok", "kr-value-123")
	v.Set("other", "kr-value-456")
	if got, ok := v.Lookup("tok"); !ok || got != "kr-value-123" {
		t.Errorf("Lookup(tok) = %q, %v", got, ok)
	}
	if got, _ := v.Lookup("env_only"); got != "env-value-1" {
		t.Errorf("Lookup(env_only) = %q, want the environment's", got)
	}
	if names, _ := v.List(); !slices.Equal(names, []string{"other", "tok"}) {
		t.Errorf("List() = %v", names)
	}
	if err := v.Delete("tok"); err != nil {
		t.Fatal(err)
	}
	if err := v.Delete("tok"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v", err)
	}
	if names, _ := v.List(); !slices.Equal(names, []string{"other"}) {
		t.Errorf("List() after Delete = %v", names)
	}
}

func TestKeyringUnavailableFallsBack(t *testing.T) {
	for name, kr := range map[string]*memKeyring{
		"error": {items: map[string]string{}, fail: errors.New("The name org.freedesktop.secrets was not provided by any .service files")},
		"hang":  {items: map[string]string{}, block: make(chan struct{})},
	} {
		t.Run(name, func(t *testing.T) {
			if kr.block != nil {
				defer close(kr.block)
			}
			start := time.Now()
			v, err := OpenStore(&StoreOptions{Keyring: kr, LookupEnv: envOf(nil), Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if v.Backend() != BackendFile {
				t.Errorf("Backend() = %q with a broken keyring, want file", v.Backend())
			}
			if d := time.Since(start); d > 2*keyringProbeTimeout {
				t.Errorf("fallback took %v", d)
			}
		})
	}
}

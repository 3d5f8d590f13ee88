package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// A Vault is a [Store] that can also set, delete and list secrets, backed by
// the OS keyring or an encrypted file, with the environment as a read-only
// fallback. [OpenStore] returns one.
type Vault interface {
	Store
	Hinter
	// Set stores value under name, replacing any value it had.
	Set(name, value string) error
	// Delete removes name; removing a name that is not there is
	// [ErrNotFound].
	Delete(name string) error
	// List returns the names the backend holds (not the environment's),
	// sorted.
	List() ([]string, error)
	// Backend names the backend: "keyring", "file" or "env".
	Backend() string
	// Location says where the backend keeps secrets, for people.
	Location() string
}

// Backend names.
const (
	BackendKeyring = "keyring"
	BackendFile    = "file"
	BackendEnv     = "env"
)

// Errors a Vault returns.
var (
	ErrNotFound = errors.New("no such secret")
	ErrReadOnly = errors.New("the environment backend is read-only")
)

// BackendEnvVar forces a backend: keyring, file or env.
const BackendEnvVar = "SWITCHBOARD_SECRETS_BACKEND"

// A Keyring is the part of an OS keyring a Vault uses; its methods are
// those of github.com/zalando/go-keyring. Get reports a missing item as
// [ErrNotFound] or keyring.ErrNotFound.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// StoreOptions configures [OpenStore]. The zero value is usable.
type StoreOptions struct {
	// Dir holds the encrypted file and its key; "" means
	// $XDG_CONFIG_HOME/switchboard (default ~/.config/switchboard).
	Dir string
	// Backend forces "keyring", "file" or "env"; "" means
	// $SWITCHBOARD_SECRETS_BACKEND, else the keyring when one answers,
	// else the file.
	Backend string
	// LookupEnv reads the environment (the fallback, XDG_CONFIG_HOME, HOME
	// and SWITCHBOARD_SECRETS_BACKEND); nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Keyring is the OS keyring; nil means the system's (Secret Service
	// over D-Bus on Linux, Keychain on macOS, Credential Manager on
	// Windows), used only when it answers.
	Keyring Keyring
}

// keyringService is the service name secrets are filed under in a keyring.
const keyringService = "switchboard"

// keyringIndex holds the JSON list of names in the keyring, which cannot
// list a service's items portably. ':' is not valid in a secret name.
const keyringIndex = ":index"

// keyringProbeTimeout bounds the check whether a keyring answers: a D-Bus
// call to a Secret Service that is not running must not stall a start.
const keyringProbeTimeout = 3 * time.Second

// OpenStore opens the secret store. Lookups try the backend, then the
// environment variable SWITCHBOARD_SECRET_<NAME>; Set, Delete and List use
// the backend only. Nothing is created on disk until the first Set.
func OpenStore(opts *StoreOptions) (Vault, error) {
	var o StoreOptions
	if opts != nil {
		o = *opts
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	env := EnvStore{LookupEnv: o.LookupEnv}
	backend := o.Backend
	if backend == "" {
		backend, _ = o.LookupEnv(BackendEnvVar)
	}
	switch backend {
	case BackendEnv:
		return &envVault{env: env}, nil
	case BackendFile:
		return newFileVault(o, env)
	case BackendKeyring, "":
		kr := o.Keyring
		if kr == nil {
			kr = systemKeyring{}
		}
		err := probeKeyring(kr, o.LookupEnv, o.Keyring != nil)
		if err == nil {
			return &keyringVault{kr: kr, env: env}, nil
		}
		if backend == BackendKeyring {
			return nil, fmt.Errorf("secret store: the OS keyring is not available: %w", err)
		}
		return newFileVault(o, env)
	}
	return nil, fmt.Errorf("secret store: unknown backend %q (want keyring, file or env)", backend)
}

type systemKeyring struct{}

func (systemKeyring) Get(s, u string) (string, error) { return keyring.Get(s, u) }
func (systemKeyring) Set(s, u, p string) error        { return keyring.Set(s, u, p) }
func (systemKeyring) Delete(s, u string) error        { return keyring.Delete(s, u) }

// probeKeyring reports whether kr answers. On Linux without a session bus
// the system keyring is not tried at all: godbus would try to autolaunch a
// bus, and a headless machine has no Secret Service anyway.
func probeKeyring(kr Keyring, lookupEnv func(string) (string, bool), injected bool) error {
	if !injected {
		switch runtime.GOOS {
		case "darwin", "windows":
		default:
			if v, _ := lookupEnv("DBUS_SESSION_BUS_ADDRESS"); v == "" {
				return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no Secret Service")
			}
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := kr.Get(keyringService, keyringIndex)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || isNotFound(err) {
			return nil
		}
		return err
	case <-time.After(keyringProbeTimeout):
		return fmt.Errorf("no answer within %s", keyringProbeTimeout)
	}
}

func isNotFound(err error) bool {
	return errors.Is(err, keyring.ErrNotFound) || errors.Is(err, ErrNotFound)
}

// ValidateName reports whether name can name a secret: what a
// {{secrets.NAME}} placeholder accepts.
func ValidateName(name string) error {
	switch {
	case name == "":
		return errors.New("empty secret name")
	case len(name) > maxName:
		return fmt.Errorf("secret name longer than %d bytes", maxName)
	case !validName(name):
		return fmt.Errorf("invalid secret name %q: want letters, digits, '_', '.' or '-', not starting with a digit, '.' or '-'", clip(name))
	}
	return nil
}

// checkValue refuses what no secret can be.
func checkValue(v string) error {
	switch {
	case v == "":
		return errors.New("empty secret value")
	case strings.ContainsAny(v, "\x00\r\n"):
		// It would end up in a header or an environment variable.
		return errors.New("secret value must not contain NUL, CR or LF")
	}
	return nil
}

// hint says how to set a missing secret, whatever the backend.
func hint(name string) string {
	return "run 'switchboard secrets set " + name + "' or set " + EnvVar(name)
}

// envVault is the environment alone.
type envVault struct{ env EnvStore }

func (v *envVault) Lookup(name string) (string, bool) { return v.env.Lookup(name) }
func (v *envVault) Hint(name string) string           { return v.env.Hint(name) }
func (v *envVault) Set(name, _ string) error {
	return fmt.Errorf("%w: export %s instead", ErrReadOnly, EnvVar(name))
}
func (v *envVault) Delete(name string) error {
	return fmt.Errorf("%w: unset %s instead", ErrReadOnly, EnvVar(name))
}
func (v *envVault) List() ([]string, error) { return nil, nil }
func (v *envVault) Backend() string         { return BackendEnv }
func (v *envVault) Location() string        { return "environment variables SWITCHBOARD_SECRET_<NAME>" }

// keyringVault keeps each secret as one keyring item of service
// "switchboard", and the list of names in one more.
type keyringVault struct {
	kr  Keyring
	env EnvStore
	mu  sync.Mutex // serializes index updates within this process
}

func (v *keyringVault) Lookup(name string) (string, bool) {
	if ValidateName(name) == nil {
		if s, err := v.kr.Get(keyringService, name); err == nil {
			return s, true
		}
	}
	return v.env.Lookup(name)
}

func (v *keyringVault) Hint(name string) string { return hint(name) }
func (v *keyringVault) Backend() string         { return BackendKeyring }
func (v *keyringVault) Location() string {
	return "the OS keyring, service " + keyringService
}

func (v *keyringVault) Set(name, value string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := checkValue(value); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.kr.Set(keyringService, name, value); err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	names, err := v.index()
	if err != nil {
		return err
	}
	if !slices.Contains(names, name) {
		return v.setIndex(append(names, name))
	}
	return nil
}

func (v *keyringVault) Delete(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	err := v.kr.Delete(keyringService, name)
	if isNotFound(err) {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	names, err := v.index()
	if err != nil {
		return err
	}
	return v.setIndex(slices.DeleteFunc(names, func(n string) bool { return n == name }))
}

func (v *keyringVault) List() ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.index()
}

func (v *keyringVault) index() ([]string, error) {
	s, err := v.kr.Get(keyringService, keyringIndex)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	var names []string
	if err := json.Unmarshal([]byte(s), &names); err != nil {
		return nil, fmt.Errorf("keyring: the index of names is corrupt: %w", err)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (v *keyringVault) setIndex(names []string) error {
	slices.Sort(names)
	b, _ := json.Marshal(slices.Compact(names))
	if err := v.kr.Set(keyringService, keyringIndex, string(b)); err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	return nil
}

// The encrypted file: fileMagic, a 12-byte nonce, then AES-256-GCM over
// the JSON object {name: value}, with fileMagic as additional data.
const (
	fileMagic = "switchboard-secrets-v1\n"
	fileName  = "secrets.enc"
	keyName   = "secrets.key"
	keyBytes  = 32
)

// Bounds of what the file store reads: the secrets of a machine (OAuth
// logins are a few kilobytes each) fit in a fraction of maxFileBytes, and
// a key file holds keyBytes; a stray large file, or a link to a device,
// is refused unread.
const (
	maxFileBytes    = 16 << 20
	maxKeyFileBytes = 4 << 10
)

// fileVault keeps secrets in one encrypted file, its key in another.
// The key file sits next to the data: the encryption keeps secrets out of
// backups, sync folders and casual reads of the data file, not away from
// someone who can read every file of this user.
type fileVault struct {
	dir string
	env EnvStore

	mu      sync.Mutex
	loaded  bool
	values  map[string]string
	loadErr error
}

func newFileVault(o StoreOptions, env EnvStore) (*fileVault, error) {
	dir := o.Dir
	if dir == "" {
		base, _ := o.LookupEnv("XDG_CONFIG_HOME")
		if base == "" || !filepath.IsAbs(base) {
			home, _ := o.LookupEnv("HOME")
			if home == "" {
				var err error
				if home, err = os.UserHomeDir(); err != nil {
					return nil, fmt.Errorf("secret store: no XDG_CONFIG_HOME or HOME to keep secrets under")
				}
			}
			base = filepath.Join(home, ".config")
		}
		dir = filepath.Join(base, "switchboard")
	}
	return &fileVault{dir: dir, env: env}, nil
}

func (v *fileVault) Backend() string { return BackendFile }
func (v *fileVault) Location() string {
	return filepath.Join(v.dir, fileName) + " (AES-256-GCM; key in " + filepath.Join(v.dir, keyName) + ")"
}

func (v *fileVault) Lookup(name string) (string, bool) {
	v.mu.Lock()
	err := v.load()
	val, ok := v.values[name]
	v.mu.Unlock()
	if err == nil && ok {
		return val, true
	}
	return v.env.Lookup(name)
}

// Reload makes the next lookup read the file again: another process
// (a refresh of OAuth tokens) may have written it since.
func (v *fileVault) Reload() {
	v.mu.Lock()
	v.loaded = false
	v.mu.Unlock()
}

func (v *fileVault) Hint(name string) string {
	v.mu.Lock()
	err := v.load()
	v.mu.Unlock()
	if err != nil {
		// The error names files, never values.
		return err.Error() + "; " + hint(name)
	}
	return hint(name)
}

func (v *fileVault) List() ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.load(); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(v.values))
	for n := range v.values {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func (v *fileVault) Set(name, value string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := checkValue(value); err != nil {
		return err
	}
	return v.update(func(m map[string]string) error {
		m[name] = value
		return nil
	})
}

func (v *fileVault) Delete(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	return v.update(func(m map[string]string) error {
		if _, ok := m[name]; !ok {
			return fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		delete(m, name)
		return nil
	})
}

// update re-reads the file (another process may have written it), applies
// f and writes the result atomically.
func (v *fileVault) update(f func(map[string]string) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = false
	if err := v.load(); err != nil {
		return err
	}
	m := make(map[string]string, len(v.values)+1)
	for k, val := range v.values {
		m[k] = val
	}
	if err := f(m); err != nil {
		return err
	}
	if err := os.MkdirAll(v.dir, 0o700); err != nil {
		return fmt.Errorf("secret store: %w", err)
	}
	key, err := v.key(true)
	if err != nil {
		return err
	}
	plain, err := json.Marshal(m)
	if err != nil {
		return err
	}
	sealed, err := seal(key, plain)
	clear(plain)
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(v.dir, fileName), sealed); err != nil {
		return fmt.Errorf("secret store: %w", err)
	}
	v.values = m
	return nil
}

// load reads the file once; v.mu is held. A missing file is an empty store.
func (v *fileVault) load() error {
	if v.loaded {
		return v.loadErr
	}
	v.loaded = true
	v.values, v.loadErr = map[string]string{}, nil
	path := filepath.Join(v.dir, fileName)
	data, err := userfile.Read(path, maxFileBytes, "a secret store")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		v.loadErr = fmt.Errorf("secret store: %w", err)
		return v.loadErr
	}
	if err := checkPrivate(path); err != nil {
		v.loadErr = err
		return err
	}
	key, err := v.key(false)
	if err != nil {
		v.loadErr = err
		return err
	}
	plain, err := unseal(key, data)
	if err != nil {
		v.loadErr = fmt.Errorf("secret store: %s: %w", path, err)
		return v.loadErr
	}
	defer clear(plain)
	if err := json.Unmarshal(plain, &v.values); err != nil {
		v.values = map[string]string{}
		v.loadErr = fmt.Errorf("secret store: %s: corrupt contents", path)
	}
	return v.loadErr
}

// key reads the key file, creating it (0600, exclusively) when create is
// set and it does not exist.
func (v *fileVault) key(create bool) ([]byte, error) {
	path := filepath.Join(v.dir, keyName)
	key, err := userfile.Read(path, maxKeyFileBytes, "a secret store's key")
	if errors.Is(err, fs.ErrNotExist) && create {
		key = make([]byte, keyBytes)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return v.key(false) // another process created it first
		}
		if err != nil {
			return nil, fmt.Errorf("secret store: %w", err)
		}
		_, err = f.Write(key)
		if err2 := f.Sync(); err == nil {
			err = err2
		}
		if err2 := f.Close(); err == nil {
			err = err2
		}
		if err != nil {
			os.Remove(path)
			return nil, fmt.Errorf("secret store: writing %s: %w", path, err)
		}
		return key, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("secret store: %s is missing, so %s cannot be decrypted", path, filepath.Join(v.dir, fileName))
	}
	if err != nil {
		return nil, fmt.Errorf("secret store: %w", err)
	}
	if err := checkPrivate(path); err != nil {
		return nil, err
	}
	if len(key) != keyBytes {
		return nil, fmt.Errorf("secret store: %s is not a %d-byte key", path, keyBytes)
	}
	return key, nil
}

// checkPrivate refuses a file others may read, as ssh does for its keys.
func checkPrivate(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("secret store: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("secret store: %s is accessible to other users (mode %04o); run chmod 600 %s", path, perm, path)
	}
	return nil
}

func seal(key, plain []byte) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	out := append([]byte(fileMagic), nonce...)
	return gcm.Seal(out, nonce, plain, []byte(fileMagic)), nil
}

func unseal(key, data []byte) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	rest, ok := strings.CutPrefix(string(data), fileMagic)
	if !ok || len(rest) < gcm.NonceSize() {
		return nil, errors.New("not a switchboard secrets file")
	}
	nonce, sealed := []byte(rest[:gcm.NonceSize()]), []byte(rest[gcm.NonceSize():])
	plain, err := gcm.Open(nil, nonce, sealed, []byte(fileMagic))
	if err != nil {
		return nil, errors.New("cannot decrypt: wrong key or tampered file")
	}
	return plain, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// writeAtomic writes data to a new 0600 file beside path and renames it
// over path, so a reader sees the old file or the new one, never half.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/secret"
)

// State is the [state] table: where Switchboard keeps what outlives a run
// (the tool-list cache, servers added at run time; see the store package).
//
//	[state]
//	database = "~/.local/state/switchboard/switchboard.db"  # a SQLite file
//	database = "postgres://switchboard:{{secrets.pg}}@db.internal/switchboard"  # shared by replicas
//
// database is a file path, or "sqlite:" and a path: ~ is the home folder,
// and a relative path is relative to the config file that names it, not to
// the working directory. Or it is a PostgreSQL URL (postgres:// or
// postgresql://, with pgx's parameters such as sslmode), which the replicas
// of a gateway share: its password, if it has one, only as a placeholder
// ({{secrets.NAME}} or {{env.NAME}}), in the user part or as the password
// parameter, resolved with [State.ResolveDatabase] (pgx's PGPASSWORD and
// ~/.pgpass work too). The zero value means the default,
// $XDG_STATE_HOME/switchboard/switchboard.db. A later file's keys override
// an earlier file's one by one.
//
// encryption_key seals the secrets kept in a PostgreSQL state database
// (the OAuth logins the replicas share) and keys the signatures of the
// requestStates replicas verify for each other. It is only a placeholder, resolved
// with [State.ResolveEncryptionKey], the same value on every replica, of
// at least 32 bytes (openssl rand -base64 32). It is required when the
// database is PostgreSQL and a server signs in with OAuth's authorization
// code grant. encryption_key_fallbacks rotates it: keys (placeholders
// too) that open what they sealed and verify what they signed, but never
// seal or sign ([State.ResolveEncryptionKeyFallbacks]).
//
//	encryption_key = "{{secrets.state_key}}"
//	encryption_key_fallbacks = ["{{secrets.state_key_old}}"]
type State struct {
	// Database is the state database as store.Open takes it once
	// resolved: a SQLite file's path (absolute once loaded), "sqlite:" and
	// a path, or a PostgreSQL URL with placeholders; "" means the
	// default.
	Database string
	// EncryptionKey is the placeholder of the key sealing the secrets
	// kept in a PostgreSQL database; "" when not set.
	EncryptionKey string
	// EncryptionKeyFallbacks are the placeholders of keys being rotated
	// in or out: what they sealed opens, what they signed verifies, and
	// nothing is sealed or signed with them. nil when not set.
	EncryptionKeyFallbacks []string

	// Source is where the last [state] table was declared; zero when none
	// was.
	Source Position
}

// stateTable declares [state], checked as each file is read (a path is
// relative to its own file).
var stateTable = mergedTable[State]{
	key: "state",
	fields: decode.Table[State]{
		decode.Value("database", decode.TOML, func(s *State) *string { return &s.Database }, readDatabase, checkDatabase),
		decode.Value("encryption_key", decode.TOML, func(s *State) *string { return &s.EncryptionKey }, readEncryptionKey, checkEncryptionKey),
		decode.StringList("encryption_key_fallbacks", decode.TOML, func(s *State) *[]string { return &s.EncryptionKeyFallbacks }, func(l []string, i int) string {
			if l[i] == "" {
				return `empty; write "{{secrets.NAME}}" or "{{env.NAME}}"`
			}
			return checkEncryptionKey(l[i])
		}),
	},
	config:        func(c *Config) *State { return &c.State },
	source:        func(s *State) *Position { return &s.Source },
	checkOnDecode: true,
}

// readDatabase reads a database and resolves its path against the file.
// What is not a path (an address, a placeholder) is left for
// checkDatabase to refuse.
func readDatabase(d *decode.Decoder, field string, v any) (string, bool) {
	s, ok := d.String(field, v)
	if !ok {
		return "", false
	}
	prefix, path := "", s
	if rest, ok := strings.CutPrefix(s, "sqlite:"); ok && !strings.HasPrefix(rest, "//") {
		prefix, path = "sqlite:", rest
	}
	switch {
	case strings.TrimSpace(path) == "":
		// Set empty, it would also override a database an earlier file
		// named.
		d.Errorf(field, "empty; write a SQLite file's path or a postgres:// URL, or leave database out for the default ($XDG_STATE_HOME/switchboard/switchboard.db)")
		return "", false
	case isPostgresURL(s) || checkDatabase(s) != "":
		return s, true
	}
	if path, ok = d.Path(field, path); !ok {
		return "", false
	}
	return prefix + path, true
}

// checkDatabase returns what is wrong with a database, or "". It never
// quotes an address: it may hold a password.
func checkDatabase(db string) string {
	scheme, _, isURL := strings.Cut(db, "://")
	switch {
	case isPostgresURL(db):
		return checkPostgres(db)
	case hasPlaceholder(db):
		return "placeholders are not allowed in a SQLite file's path"
	case isURL && strings.EqualFold(scheme, "sqlite"):
		return `write sqlite: and a path, without //, such as "sqlite:/var/lib/switchboard/state.db"; or just the path`
	case isURL && isScheme(scheme):
		return `unsupported database address (` + scheme + `://); want a SQLite file's path, "sqlite:" and a path, or a postgres:// URL`
	case isURL:
		return `unsupported database address; want a SQLite file's path, "sqlite:" and a path, or a postgres:// URL`
	}
	return ""
}

// readEncryptionKey refuses an empty key.
var readEncryptionKey = readNonEmpty(`empty; write "{{secrets.NAME}}" or "{{env.NAME}}", or leave encryption_key out`)

// checkEncryptionKey wants a placeholder and nothing else.
func checkEncryptionKey(key string) string {
	return checkCredential(key, true, `want one placeholder and nothing else, "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}": a key written in a config file leaks with it`)
}

// Shared reports whether the database is PostgreSQL, which processes on
// several machines share.
func (s State) Shared() bool { return isPostgresURL(s.Database) }

// ResolveEncryptionKey expands EncryptionKey, registering the key with red
// (when non-nil) so that it never reaches output; "" when none is set. It
// does not check the key's length: secret.NewSealer does, without quoting
// it.
func (s State) ResolveEncryptionKey(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (string, error) {
	if s.EncryptionKey == "" {
		return "", nil
	}
	return expandCredential("state.encryption_key", s.EncryptionKey, getenv, secrets, red)
}

// ResolveEncryptionKeyFallbacks expands EncryptionKeyFallbacks as
// ResolveEncryptionKey does EncryptionKey; nil when none are set.
func (s State) ResolveEncryptionKeyFallbacks(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) ([]string, error) {
	var keys []string
	for i, p := range s.EncryptionKeyFallbacks {
		key, err := expandCredential(fmt.Sprintf("state.encryption_key_fallbacks[%d]", i), p, getenv, secrets, red)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// state checks what [state] needs of the rest of the configuration: a
// shared database keeps OAuth logins sealed, so it needs the key when a
// server signs in; fallbacks need a key to fall back from.
func (v *validator) state(c *Config) {
	if len(c.State.EncryptionKeyFallbacks) > 0 && c.State.EncryptionKey == "" && !v.reported("state.encryption_key") {
		v.problems = append(v.problems, &Problem{Pos: v.mergedPos("state.encryption_key_fallbacks", c.State.Source), Field: "state.encryption_key_fallbacks",
			Msg: "set without encryption_key: fallbacks only open and verify; encryption_key seals and signs"})
	}
	if !c.State.Shared() || c.State.EncryptionKey != "" || v.reported("state.encryption_key") {
		return
	}
	var ids []string
	for _, s := range c.Servers {
		if s.OAuth != nil && s.OAuth.Grant != GrantClientCredentials {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	v.problems = append(v.problems, &Problem{Pos: v.mergedPos("state.database", c.State.Source), Field: "state.encryption_key",
		Msg: fmt.Sprintf(`required: server %s signs in with OAuth, and with a PostgreSQL database its login is kept there, for every replica, sealed under this key; set encryption_key = "{{secrets.NAME}}" (or "{{env.NAME}}"), the same 32 bytes or more on every replica (openssl rand -base64 32)`,
			strings.Join(quoteEach(ids), ", "))})
}

func quoteEach(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

func isPostgresURL(db string) bool {
	l := strings.ToLower(db)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// checkPostgres checks a PostgreSQL URL: well formed with its placeholders
// in place, and a password, if any, a placeholder and nothing else.
func checkPostgres(db string) string {
	u, marks, err := markPlaceholders(db)
	if err != nil {
		return err.Error()
	}
	const literal = `a literal password is not allowed: config files are shared and committed, and a password written there leaks; write it as a placeholder, "postgres://USER:{{secrets.NAME}}@HOST/DB" (switchboard secrets set NAME) or {{env.NAME}}, or leave it to PGPASSWORD or ~/.pgpass`
	if pw, ok := u.User.Password(); ok && marks[pw] == "" {
		return literal
	}
	if q := u.Query(); q.Has("password") && marks[q.Get("password")] == "" {
		return literal
	}
	return ""
}

// markPlaceholders parses a PostgreSQL URL whose placeholders are replaced
// by plain markers ({{ and }} are not allowed in a URL's user part); marks
// maps each marker to its placeholder. Its errors never quote the URL.
func markPlaceholders(db string) (*url.URL, map[string]string, error) {
	ps, err := secret.Parse(db)
	if err != nil {
		return nil, nil, err
	}
	marks := map[string]string{}
	marked := db
	for i, p := range ps {
		m := fmt.Sprintf("sbplaceholder%dx", i)
		marks[m] = p.String()
		marked = strings.Replace(marked, p.String(), m, 1)
	}
	u, err := url.Parse(marked)
	if err != nil {
		return nil, nil, errors.New("not a valid PostgreSQL URL (postgres://USER:{{secrets.NAME}}@HOST:PORT/DB?sslmode=verify-full)")
	}
	return u, marks, nil
}

// ResolveDatabase returns Database as store.Open takes it: a PostgreSQL
// URL with its placeholders expanded (a password escaped as the URL needs,
// and registered with red, when non-nil, so that it never reaches output);
// anything else as it is. An unresolved placeholder is an error naming
// it, never a value.
func (s State) ResolveDatabase(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (string, error) {
	if !isPostgresURL(s.Database) || !hasPlaceholder(s.Database) {
		return s.Database, nil
	}
	u, marks, err := markPlaceholders(s.Database)
	if err != nil {
		return "", fmt.Errorf("state.database: %w", err)
	}
	var errs []error
	expand := func(v string) string {
		for m, p := range marks {
			if strings.Contains(v, m) {
				x, err := secret.Expand(p, getenv, secrets, red)
				if err != nil {
					errs = append(errs, err)
				}
				v = strings.ReplaceAll(v, m, x)
			}
		}
		return v
	}
	if u.User != nil {
		name := expand(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			pw = expand(pw)
			if red != nil && pw != "" {
				red.Add(pw) // a password, even from a public variable
			}
			u.User = url.UserPassword(name, pw)
		} else {
			u.User = url.User(name)
		}
	}
	u.Host = expand(u.Host)
	u.Path = expand(u.Path)
	u.RawPath = ""
	q := u.Query()
	for k, vs := range q {
		for i := range vs {
			vs[i] = expand(vs[i])
			if k == "password" && red != nil && vs[i] != "" {
				red.Add(vs[i])
			}
		}
	}
	u.RawQuery = q.Encode()
	if len(errs) > 0 {
		return "", fmt.Errorf("state.database: %w", errors.Join(errs...))
	}
	return u.String(), nil
}

// isScheme reports whether s is a URL scheme (RFC 3986), and so holds
// nothing secret.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

package config

import (
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// State is the [state] table: where Switchboard keeps what outlives a run
// (the tool-list cache, servers added at run time; see the store package).
//
//	[state]
//	database = "~/.local/state/switchboard/switchboard.db"  # a SQLite file
//
// database is a file path, or "sqlite:" and a path: ~ is the home folder,
// and a relative path is relative to the config file that names it, not to
// the working directory. PostgreSQL is planned, not supported yet: a
// postgres:// address is refused. The zero value means the default,
// $XDG_STATE_HOME/switchboard/switchboard.db. A later file's keys override
// an earlier file's one by one.
type State struct {
	// Database is the state database as store.Open takes it: a SQLite
	// file's path (absolute once loaded), or "sqlite:" and a path; ""
	// means the default.
	Database string

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
		d.Errorf(field, "empty; write a SQLite file's path, or leave database out for the default ($XDG_STATE_HOME/switchboard/switchboard.db)")
		return "", false
	case checkDatabase(s) != "":
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
	switch l := strings.ToLower(db); {
	case hasPlaceholder(db):
		return "placeholders are not allowed here"
	case strings.HasPrefix(l, "postgres:") || strings.HasPrefix(l, "postgresql:"):
		return `PostgreSQL is not supported yet (it is coming); meanwhile use a SQLite file: a path such as "switchboard.db" (relative to this config file) or "~/switchboard/state.db", or leave database out for the default`
	case isURL && strings.EqualFold(scheme, "sqlite"):
		return `write sqlite: and a path, without //, such as "sqlite:/var/lib/switchboard/state.db"; or just the path`
	case isURL && isScheme(scheme):
		return `unsupported database address (` + scheme + `://); want a SQLite file's path, or "sqlite:" and a path`
	case isURL:
		return `unsupported database address; want a SQLite file's path, or "sqlite:" and a path`
	}
	return ""
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

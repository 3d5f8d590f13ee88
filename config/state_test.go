package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/secret"
)

// TestState: database is resolved against the file that names it, not the
// working directory; ~ is the home folder Getenv gives.
func TestState(t *testing.T) {
	root := t.TempDir()
	for _, tt := range []struct{ in, want string }{
		{"state/sb.db", filepath.Join(root, "conf", "state", "sb.db")},
		{"../shared/sb.db", filepath.Join(root, "shared", "sb.db")},
		{"sqlite:state/sb.db", "sqlite:" + filepath.Join(root, "conf", "state", "sb.db")},
		{"~/.local/state/sb.db", "/home/me/.local/state/sb.db"},
		{"sqlite:~/sb.db", "sqlite:/home/me/sb.db"},
		{"/var/lib/switchboard/state.db", "/var/lib/switchboard/state.db"},
		// A PostgreSQL URL is kept as written, placeholders too.
		{"postgres://sb:{{secrets.pg}}@db.internal:5432/switchboard?sslmode=verify-full", "postgres://sb:{{secrets.pg}}@db.internal:5432/switchboard?sslmode=verify-full"},
		{"postgresql:///sb?host=/run/postgresql", "postgresql:///sb?host=/run/postgresql"},
		{"postgres://{{env.PGUSER}}@{{env.PGHOST}}/sb?password={{env.PGPW}}", "postgres://{{env.PGUSER}}@{{env.PGHOST}}/sb?password={{env.PGPW}}"},
	} {
		file := writeFile(t, root, "conf/s.toml", "\n[state]\ndatabase = \""+tt.in+"\"\n")
		c, err := Load(&LoadOptions{File: file, Dir: t.TempDir(), Getenv: getenv(map[string]string{"HOME": "/home/me"})})
		if err != nil {
			t.Fatalf("Load(database = %q): %v", tt.in, err)
		}
		want := State{Database: tt.want, Source: Position{File: file, Line: 2, Field: "state"}}
		if diff := cmp.Diff(want, c.State); diff != "" {
			t.Errorf("database = %q: State (-want +got):\n%s", tt.in, diff)
		}
	}

	// No [state]: the zero State, which means the default.
	c, err := LoadFile(writeFile(t, root, "none.toml", "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n"))
	if err != nil || !reflect.DeepEqual(c.State, State{}) {
		t.Errorf("LoadFile without [state] = %+v, %v; want the zero State", c.State, err)
	}
}

// TestStateLayering: [state] is merged key by key like [network]; each
// file's relative path is relative to that file.
func TestStateLayering(t *testing.T) {
	root := t.TempDir()
	user := writeFile(t, root, "user/switchboard/config.toml", "[state]\ndatabase = \"state.db\"\n")
	writeFile(t, root, "work/switchboard.toml", "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n")
	opts := &LoadOptions{Dir: filepath.Join(root, "work"), UserConfigDir: filepath.Join(root, "user", "switchboard"), Getenv: getenv(nil)}
	c, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := State{Database: filepath.Join(root, "user", "switchboard", "state.db"), Source: Position{File: user, Line: 1, Field: "state"}}
	if diff := cmp.Diff(want, c.State); diff != "" {
		t.Errorf("State from the user's file only (-want +got):\n%s", diff)
	}

	work := writeFile(t, root, "work/switchboard.toml", "[state]\ndatabase = \"project.db\"\n")
	if c, err = Load(opts); err != nil {
		t.Fatalf("Load: %v", err)
	}
	want = State{Database: filepath.Join(root, "work", "project.db"), Source: Position{File: work, Line: 1, Field: "state"}}
	if diff := cmp.Diff(want, c.State); diff != "" {
		t.Errorf("State overridden by ./switchboard.toml (-want +got):\n%s", diff)
	}

	// A value a later file overrides is still checked, with its own line.
	writeFile(t, root, "user/switchboard/config.toml", "[state]\n\ndatabase = \"postgres://sb:hunter2@db/sb\"\n")
	_, err = Load(opts)
	if got := problemStrings(t, err, root); len(got) != 1 || !strings.HasPrefix(got[0], "user/switchboard/config.toml:3: state.database: a literal password is not allowed") {
		t.Errorf("Load with an overridden postgres address = %q, want its problem on line 3", got)
	}
}

func TestStateProblems(t *testing.T) {
	const pg = `a literal password is not allowed: config files are shared and committed, and a password written there leaks; write it as a placeholder, "postgres://USER:{{secrets.NAME}}@HOST/DB" (switchboard secrets set NAME) or {{env.NAME}}, or leave it to PGPASSWORD or ~/.pgpass`
	for _, tt := range []struct {
		name, toml string
		want       []string
	}{
		{"postgres", `[state]
database = "postgres://sb:hunter2@db.internal:5432/switchboard"
`, []string{`s.toml:2: state.database: ` + pg}},
		{"postgresql, any case", `[state]
database = "PostgreSQL://sb:hunter2@db.internal/switchboard"
`, []string{`s.toml:2: state.database: ` + pg}},
		{"password parameter", `[state]
database = "postgres://sb@db.internal/switchboard?sslmode=require&password=hunter2"
`, []string{`s.toml:2: state.database: ` + pg}},
		{"password around a placeholder", `[state]
database = "postgres://sb:hunter2{{secrets.pg}}@db.internal/switchboard"
`, []string{`s.toml:2: state.database: ` + pg}},
		{"malformed postgres URL", `[state]
database = "postgres://sb:{{secrets.pg}}@[db.internal/hunter2"
`, []string{`s.toml:2: state.database: not a valid PostgreSQL URL (postgres://USER:{{secrets.NAME}}@HOST:PORT/DB?sslmode=verify-full)`}},
		{"malformed placeholder", `[state]
database = "postgres://sb:{{secret.pg}}@db.internal/hunter2"
`, []string{`s.toml:2: state.database: "{{secret.pg}}" at offset 14: unknown kind "secret"; did you mean {{secrets.pg}}?`}},
		{"another database", `[state]
database = "mysql://sb:hunter2@db.internal/switchboard"
`, []string{`s.toml:2: state.database: unsupported database address (mysql://); want a SQLite file's path, "sqlite:" and a path, or a postgres:// URL`}},
		{"sqlite URL", `[state]
database = "sqlite:///var/lib/sb.db"
`, []string{`s.toml:2: state.database: write sqlite: and a path, without //, such as "sqlite:/var/lib/switchboard/state.db"; or just the path`}},
		{"placeholder", `[state]
database = "{{env.DB}}"
`, []string{`s.toml:2: state.database: placeholders are not allowed in a SQLite file's path`}},
		{"empty", `[state]
database = " "
`, []string{`s.toml:2: state.database: empty; write a SQLite file's path or a postgres:// URL, or leave database out for the default ($XDG_STATE_HOME/switchboard/switchboard.db)`}},
		{"sqlite: without a path", `[state]
database = "sqlite:"
`, []string{`s.toml:2: state.database: empty; write a SQLite file's path or a postgres:// URL, or leave database out for the default ($XDG_STATE_HOME/switchboard/switchboard.db)`}},
		{"~ without a home", `[state]
database = "~/sb.db"
`, []string{`s.toml:2: state.database: ~/sb.db: no home folder to expand ~ to (HOME is not set)`}},
		{"~user", `[state]
database = "~bob/sb.db"
`, []string{`s.toml:2: state.database: ~bob/sb.db: ~user is not expanded; write ~/… for your home folder, or the whole path`}},
		{"types and unknown keys", `[state]
database = 5
databse = "x.db"
`, []string{
			`s.toml:2: state.database: must be a string, not an integer`,
			`s.toml:3: state.databse: unknown key "databse"; did you mean database?`,
		}},
		{"not a table", `state = "x.db"
`, []string{`s.toml:1: state: must be a table, not a string`}},
		{"misspelt table", `[stat]
database = "x.db"
`, []string{`s.toml:1: stat: unknown key "stat"; did you mean state?`}},
		{"literal encryption key", `[state]
encryption_key = "hunter2hunter2hunter2hunter2hunter2"
`, []string{`s.toml:2: state.encryption_key: want one placeholder and nothing else, "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}": a key written in a config file leaks with it`}},
		{"encryption key around a placeholder", `[state]
encryption_key = "hunter2{{secrets.k}}"
`, []string{`s.toml:2: state.encryption_key: want one placeholder and nothing else, "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}": a key written in a config file leaks with it`}},
		{"empty encryption key", `[state]
encryption_key = ""
`, []string{`s.toml:2: state.encryption_key: empty; write "{{secrets.NAME}}" or "{{env.NAME}}", or leave encryption_key out`}},
		{"a literal fallback key", `[state]
encryption_key = "{{secrets.k}}"
encryption_key_fallbacks = ["{{secrets.old}}", "hunter2hunter2hunter2hunter2hunter2", ""]
`, []string{
			`s.toml:3: state.encryption_key_fallbacks[1]: want one placeholder and nothing else, "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}": a key written in a config file leaks with it`,
			`s.toml:3: state.encryption_key_fallbacks[2]: empty; write "{{secrets.NAME}}" or "{{env.NAME}}"`,
		}},
		{"fallbacks without the key", `[state]
encryption_key_fallbacks = ["{{secrets.old}}"]
`, []string{`s.toml:2: state.encryption_key_fallbacks: set without encryption_key: fallbacks only open and verify; encryption_key seals and signs`}},
		{"shared logins need the key", `[state]
database = "postgres://sb@db.internal/switchboard"

[[mcp_servers]]
id = "remote"
url = "https://mcp.example.com/mcp"
oauth = {}

[[mcp_servers]]
id = "robot"
url = "https://mcp.example.com/mcp"
oauth = { grant = "client_credentials", client_id = "c", client_secret = "{{secrets.c}}" }
`, []string{`s.toml:2: state.encryption_key: required: server "remote" signs in with OAuth, and with a PostgreSQL database its login is kept there, for every replica, sealed under this key; set encryption_key = "{{secrets.NAME}}" (or "{{env.NAME}}"), the same 32 bytes or more on every replica (openssl rand -base64 32)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "s.toml", tt.toml)
			_, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
			if diff := cmp.Diff(tt.want, problemStrings(t, err, dir)); diff != "" {
				t.Errorf("Load(%q) problems (-want +got):\n%s", tt.toml, diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("a problem quotes the password: %v", err)
			}
		})
	}
}

func noEnv(string) (string, bool) { return "", false }

// TestStateEncryptionKey: a shared database with OAuth servers and the
// key loads; the key resolves from its placeholder and is redacted, and an
// unset one is named, never a value.
func TestStateEncryptionKey(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", `[state]
database = "postgres://sb@db.internal/switchboard"
encryption_key = "{{secrets.state_key}}"

[[mcp_servers]]
id = "remote"
url = "https://mcp.example.com/mcp"
oauth = {}
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if !c.State.Shared() || c.State.EncryptionKey != "{{secrets.state_key}}" {
		t.Errorf("State = %+v: want shared, with the placeholder", c.State)
	}
	red := secret.NewRedactor()
	key, err := c.State.ResolveEncryptionKey(noEnv, mapStore{"state_key": "k3y-k3y-k3y"}, red)
	if err != nil || key != "k3y-k3y-k3y" || red.Redact("k3y-k3y-k3y") == "k3y-k3y-k3y" {
		t.Errorf("ResolveEncryptionKey = %q, %v (redacted: %q)", key, err, red.Redact("k3y-k3y-k3y"))
	}
	if _, err := c.State.ResolveEncryptionKey(noEnv, mapStore{}, nil); err == nil || !strings.HasPrefix(err.Error(), "state.encryption_key: {{secrets.state_key}} is not set") {
		t.Errorf("ResolveEncryptionKey of an unset secret: %v", err)
	}
	if key, err := (State{}).ResolveEncryptionKey(noEnv, nil, nil); key != "" || err != nil {
		t.Errorf("ResolveEncryptionKey of none = %q, %v", key, err)
	}
	fb := State{EncryptionKey: "{{secrets.state_key}}", EncryptionKeyFallbacks: []string{"{{env.OLD}}", "{{secrets.older}}"}}
	keys, err := fb.ResolveEncryptionKeyFallbacks(func(k string) (string, bool) { return map[string]string{"OLD": "old-old-old"}[k], k == "OLD" }, mapStore{"older": "older-older"}, red)
	if err != nil || len(keys) != 2 || keys[0] != "old-old-old" || keys[1] != "older-older" || red.Redact("old-old-old older-older") != "[REDACTED] [REDACTED]" {
		t.Errorf("ResolveEncryptionKeyFallbacks = %q, %v (redacted: %q)", keys, err, red.Redact("old-old-old older-older"))
	}
	if _, err := fb.ResolveEncryptionKeyFallbacks(noEnv, mapStore{}, nil); err == nil || !strings.HasPrefix(err.Error(), "state.encryption_key_fallbacks[0]: {{env.OLD}} is not set") {
		t.Errorf("ResolveEncryptionKeyFallbacks of an unset variable: %v", err)
	}
	if (State{Database: "/var/lib/sb.db"}).Shared() {
		t.Errorf("a SQLite file is Shared")
	}
}

// TestBuiltTablesValidate: Validate checks the key-by-key tables of a
// Config built in Go with the checks loading applies ([state] and [limits]
// were not checked at all).
func TestBuiltTablesValidate(t *testing.T) {
	c := &Config{
		State:  State{Database: "postgres://sb:hunter2@db/sb"},
		Limits: Limits{MaxNameBytes: 5},
	}
	want := []string{
		`limits.max_name_bytes: must be between 64 and 65536, not 5`,
		`state.database: a literal password is not allowed: config files are shared and committed, and a password written there leaks; write it as a placeholder, "postgres://USER:{{secrets.NAME}}@HOST/DB" (switchboard secrets set NAME) or {{env.NAME}}, or leave it to PGPASSWORD or ~/.pgpass`,
	}
	if diff := cmp.Diff(want, problemStrings(t, c.Validate(), "\x00")); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	c = &Config{State: State{Database: "relative/sb.db"}, Limits: Limits{MaxDescriptionBytes: 4096}}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate of good tables: %v", err)
	}
}

// TestStateResolveDatabase: a PostgreSQL URL's placeholders are expanded,
// a password escaped for the URL and registered with the redactor; an
// unresolved one is named, never a value; anything else is left as it is.
func TestStateResolveDatabase(t *testing.T) {
	vars := map[string]string{"PGUSER": "sb", "PGHOST": "db.internal:5432", "USER": "me-the-user"}
	env := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	secrets := mapStore{"pg": "p@ss/w:rd?#", "q": "s3cr3t-q"}
	for _, tt := range []struct{ in, want, redacted string }{
		{"postgres://sb:{{secrets.pg}}@db/sb?sslmode=disable", "postgres://sb:p%40ss%2Fw%3Ard%3F%23@db/sb?sslmode=disable", "p@ss/w:rd?#"},
		{"postgres://{{env.PGUSER}}@{{env.PGHOST}}/sb?password={{secrets.q}}", "postgres://sb@db.internal:5432/sb?password=s3cr3t-q", "s3cr3t-q"},
		{"postgres://sb:{{env.USER}}@db/sb", "postgres://sb:me-the-user@db/sb", "me-the-user"}, // a public variable as a password is still a password
		{"postgres://sb@db/sb", "postgres://sb@db/sb", ""},
		{"/var/lib/sb.db", "/var/lib/sb.db", ""},
	} {
		red := secret.NewRedactor()
		got, err := State{Database: tt.in}.ResolveDatabase(env, secrets, red)
		if err != nil || got != tt.want {
			t.Errorf("ResolveDatabase(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if tt.redacted != "" && red.Redact("x "+tt.redacted+" x") == "x "+tt.redacted+" x" {
			t.Errorf("ResolveDatabase(%q): the password is not redacted", tt.in)
		}
	}
	_, err := State{Database: "postgres://sb:{{secrets.nope}}@db/sb"}.ResolveDatabase(env, secrets, nil)
	if err == nil || !strings.Contains(err.Error(), "{{secrets.nope}}") || !strings.HasPrefix(err.Error(), "state.database: ") {
		t.Errorf("ResolveDatabase with an unknown secret: %v", err)
	}
}

package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/secret"
)

// ImportOptions say what [PlanImport] takes and how.
type ImportOptions struct {
	// Existing is the configuration in force (every layer); its servers
	// are not imported again, and an entry whose id one of them has is
	// not taken. nil: none.
	Existing *Config
	// Only names the entries to take (by name or id); nil: all.
	Only []string
	// Rename gives an entry (by name or id) another id.
	Rename map[string]string
	// MoveSecrets moves the credentials of env and headers values to the
	// secret store (see [SecretMove]); without it such an entry is not
	// taken.
	MoveSecrets bool
	// AllowLocalEndpoint sets allow_local_endpoint on the network servers
	// whose URL is a loopback or private address, which are otherwise
	// refused.
	AllowLocalEndpoint bool
	// Secrets looks up the secrets that Existing's placeholders name, to
	// tell a server already configured from one that differs, and the
	// names a move would take. nil: none.
	Secrets secret.Store
	// LookupEnv resolves Existing's {{env.NAME}}; nil: none.
	LookupEnv func(string) (string, bool)
}

// An ImportPlan is what an import takes and leaves.
type ImportPlan struct {
	Add     []Imported
	Skipped []Skip
	// Secrets are the credentials to store before the servers are
	// written.
	Secrets []SecretMove
	// Unmatched are the names of ImportOptions.Only that no entry has.
	Unmatched []string
}

// Imported is an entry taken.
type Imported struct {
	Entry Entry
	// Server is what is written: its id renamed, its credentials replaced
	// by placeholders, allow_local_endpoint set where asked for.
	Server Server
	// Moved are the fields whose credentials move to the secret store.
	Moved []string
}

// The kinds of Skip.
const (
	SkipDisabled   = "disabled"   // the client has it switched off
	SkipInvalid    = "invalid"    // it has a problem
	SkipDuplicate  = "duplicate"  // an entry taken earlier is the same server
	SkipConfigured = "configured" // the configuration already has it
	SkipClash      = "clash"      // its id is taken by another server
	SkipSecret     = "secret"     // it holds a credential that cannot, or may not, move
)

// A Skip is an entry not taken, and why.
type Skip struct {
	Entry  Entry
	ID     string // the id it would have had
	Kind   string // one of the Skip kinds
	Reason string // for people, naming no credential's value
}

// A SecretMove is a credential taken out of an entry: stored as secret
// Name, it is {{secrets.Name}} in the server written.
type SecretMove struct {
	Name   string
	Server string // the server's id
	Field  string // env.API_KEY, headers.Authorization
	// Value is the credential; never printed (String leaves it out, and
	// so does JSON).
	Value string `json:"-"`
	// Stored reports that the store already holds Value under Name: there
	// is nothing to store.
	Stored bool
}

func (m SecretMove) String() string {
	return m.Server + " " + m.Field + " → {{secrets." + m.Name + "}}"
}

// PlanImport decides, entry by entry in order, what an import takes: not
// a disabled or invalid entry, not a second copy of a server (the same
// server in Claude Desktop and Cursor is taken once), not one the
// configuration has (whose placeholders resolve to the entry's values),
// not one whose id another server has (the first wins, and the reason says
// how to take it under another id), not one holding a credential written
// out unless it can move to the secret store and o.MoveSecrets allows it.
// Nothing is written or stored.
func PlanImport(entries []Entry, o *ImportOptions) *ImportPlan {
	if o == nil {
		o = &ImportOptions{}
	}
	p := &ImportPlan{}
	matched := map[string]bool{}
	type taken struct {
		raw Server // renamed, credentials as written
		e   Entry
	}
	var done []taken
	names := map[string]string{} // secret name → value planned
	for _, e := range entries {
		id := e.Server.ID
		if e.Disabled {
			id = jsonID(e.Name)
		}
		if o.Only != nil {
			hit := ""
			for _, n := range o.Only {
				if n == e.Name || n == id {
					hit = n
				}
			}
			if hit == "" {
				continue
			}
			matched[hit] = true
		}
		if n, ok := o.Rename[e.Name]; ok {
			id = n
		} else if n, ok := o.Rename[id]; ok {
			id = n
		}
		skip := func(kind, format string, args ...any) {
			p.Skipped = append(p.Skipped, Skip{Entry: e, ID: id, Kind: kind, Reason: fmt.Sprintf(format, args...)})
		}
		switch {
		case e.Disabled:
			skip(SkipDisabled, "disabled in %s", ClientTitle(e.File.Client))
			continue
		case len(e.Problems) > 0:
			msg := e.Problems[0].Error()
			if len(e.Problems) > 1 {
				msg += fmt.Sprintf(" (and %d more)", len(e.Problems)-1)
			}
			skip(SkipInvalid, "%s", msg)
			continue
		}
		if msg := checkServerID(id); msg != "" {
			skip(SkipInvalid, "--rename: %s", msg)
			continue
		}
		raw := e.Server
		raw.ID = id
		raw.Source = Position{}
		if o.AllowLocalEndpoint && needsLocalEndpoint(o.Existing, raw) {
			raw.AllowLocalEndpoint = true
		}

		if i := slices.IndexFunc(done, func(t taken) bool { return t.raw.ID == id }); i >= 0 {
			if done[i].raw.Equal(raw) {
				skip(SkipDuplicate, "the same as %s from %s", id, done[i].e.File)
			} else {
				skip(SkipClash, "%s from %s is another server with this id (%s); to take this one too: %s", id, done[i].e.File, differs(done[i].raw, raw), renameHint(e, id))
			}
			continue
		}
		if o.Existing != nil {
			if ex, ok := o.Existing.Server(id); ok {
				if sameServer(ex, raw, o) {
					skip(SkipConfigured, "already configured (%s)", ex.Source)
				} else {
					skip(SkipClash, "%s is already configured differently (%s: %s); to take this one too: %s", id, ex.Source, differs(resolved(ex, o), raw), renameHint(e, id))
				}
				continue
			}
		}

		out := raw
		out.Env, out.Headers = maps.Clone(raw.Env), maps.Clone(raw.Headers)
		var moves []SecretMove
		var moved []string
		refused := ""
		for _, l := range Literals(raw) {
			if !l.Movable {
				refused = fmt.Sprintf("%s looks like a credential written out (%s), and Switchboard writes none into a config file; a command line and a URL are no place for one (argv is readable by every user on this machine): if the server can read it from an environment variable, add it with `switchboard add %s --env NAME={{secrets.NAME}} …` after `switchboard secrets set NAME`", l.Field, l.Why, id)
				break
			}
			name := secretName(id, l)
			if !o.MoveSecrets {
				refused = fmt.Sprintf("%s holds a credential written out (%s), and Switchboard writes none into a config file: re-run with --move-secrets to keep it in the secret store as {{secrets.%s}}", l.Field, l.Why, name)
				break
			}
			m := SecretMove{Name: name, Server: id, Field: l.Field, Value: l.Value}
			if prev, ok := names[name]; ok && prev != l.Value {
				refused = fmt.Sprintf("%s would be stored as secret %s, which this import already gives another value", l.Field, name)
				break
			}
			if o.Secrets != nil {
				if have, ok := o.Secrets.Lookup(name); ok {
					if have != l.Value {
						refused = fmt.Sprintf("%s would be stored as secret %s, which the secret store already holds with another value: store it under a name of your choosing (`switchboard secrets set NAME`) and add the server by hand", l.Field, name)
						break
					}
					m.Stored = true
				}
			}
			moves = append(moves, m)
			moved = append(moved, l.Field)
			placeholder := l.Keep + "{{secrets." + name + "}}"
			if l.table == "env" {
				out.Env[l.key] = placeholder
			} else {
				out.Headers[l.key] = placeholder
			}
		}
		if refused != "" {
			skip(SkipSecret, "%s", refused)
			continue
		}
		for _, m := range moves {
			names[m.Name] = m.Value
		}
		p.Secrets = append(p.Secrets, moves...)
		p.Add = append(p.Add, Imported{Entry: e, Server: out, Moved: moved})
		done = append(done, taken{raw: raw, e: e})
	}
	for _, n := range o.Only {
		if !matched[n] {
			p.Unmatched = append(p.Unmatched, n)
		}
	}
	return p
}

// Refuse moves the server id from Add to Skipped, with its secrets: the
// configuration it would join refused it (reason).
func (p *ImportPlan) Refuse(id, reason string) {
	i := slices.IndexFunc(p.Add, func(a Imported) bool { return a.Server.ID == id })
	if i < 0 {
		return
	}
	a := p.Add[i]
	p.Add = slices.Delete(p.Add, i, i+1)
	p.Secrets = slices.DeleteFunc(p.Secrets, func(m SecretMove) bool { return m.Server == id })
	p.Skipped = append(p.Skipped, Skip{Entry: a.Entry, ID: id, Kind: SkipInvalid, Reason: reason})
}

// sameServer reports whether the configured server ex is the entry's
// server s: equal as written, or once ex's placeholders are resolved (a
// server imported before with --move-secrets).
func sameServer(ex, s Server, o *ImportOptions) bool {
	return ex.Equal(s) || resolved(ex, o).Equal(s)
}

// resolved is ex with its placeholders resolved, for comparing with an
// entry's values; ex when they cannot be.
func resolved(ex Server, o *ImportOptions) Server {
	if o.Secrets == nil && o.LookupEnv == nil {
		return ex
	}
	lookupEnv := o.LookupEnv
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	if r, err := ex.Resolve(lookupEnv, o.Secrets, nil); err == nil {
		return r
	}
	return ex
}

// differs names the first fields in which two servers differ, never their
// values.
func differs(a, b Server) string {
	c := Config{Servers: []Server{a, b}}
	c.setDefaults()
	a, b = c.Servers[0], c.Servers[1]
	var diff []string
	for _, f := range serverFields {
		if f.In&decode.TOML == 0 || f.Key == "id" || f.Get(&a) == nil {
			continue
		}
		if !onlyField(f.Key, a).Equal(onlyField(f.Key, b)) {
			diff = append(diff, f.Key)
		}
	}
	if len(diff) == 0 {
		return "as its defaults apply"
	}
	if len(diff) > 3 {
		diff = append(diff[:3], "…")
	}
	return strings.Join(diff, ", ") + " differ"
}

// onlyField returns s with every field but key cleared.
func onlyField(key string, s Server) Server {
	var out Server
	out.ID = s.ID
	serverFields.Merge(&out, &s, []string{key})
	return out
}

// renameHint says how to take entry e under another id.
func renameHint(e Entry, id string) string {
	from := ""
	switch {
	case e.File.Client != "" && !e.File.Project:
		from = "--from " + e.File.Client + " "
	case e.File.Client != "":
		from = "--project --from " + e.File.Client + " "
	}
	return fmt.Sprintf("switchboard import %s--only %s --rename %s=%s-2", from, e.Name, e.Name, id)
}

// secretName is the secret a credential of server id moves to:
// github_token for GITHUB_TOKEN of github, search_authorization for the
// Authorization header of search.
func secretName(id string, l Literal) string {
	key := strings.ToLower(l.key)
	key = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, key)
	lid := strings.ToLower(id)
	name := key
	if !strings.HasPrefix(key, strings.ReplaceAll(lid, "-", "_")+"_") && !strings.HasPrefix(key, lid+"_") {
		name = lid + "_" + key
	}
	if c := name[0]; !(c >= 'a' && c <= 'z' || c == '_') {
		name = "_" + name
	}
	return name
}

// needsLocalEndpoint reports whether s's URL is refused as a local address
// and admitted with allow_local_endpoint, under c's [network].
func needsLocalEndpoint(c *Config, s Server) bool {
	if !isNetwork(inferTransport(&s)) || s.URL == "" || s.AllowLocalEndpoint {
		return false
	}
	var n Network
	if c != nil {
		n = c.Network
	}
	g := n.guard()
	return g.CheckURL(s.URL, false) != nil && g.CheckURL(s.URL, true) == nil
}

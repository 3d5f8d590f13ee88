package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/secret"
)

// importJSON is what import prints with --json.
type importJSON struct {
	File    string             `json:"file"`
	DryRun  bool               `json:"dry_run"`
	Written bool               `json:"written"`
	Backup  string             `json:"backup,omitempty"`
	Sources []importSourceJSON `json:"sources"`
	Added   []importedJSON     `json:"added"`
	Skipped []skippedEntryJSON `json:"skipped"`
	Secrets []movedSecretJSON  `json:"secrets"`
	TOML    string             `json:"toml"` // the tables appended
	// Warnings are what an imported server needs before it can start
	// here: each placeholder that does not resolve, with the next step.
	Warnings []string `json:"warnings"`
}

type importSourceJSON struct {
	Client  string `json:"client"` // "" for a file named with --file
	Path    string `json:"path"`
	Project bool   `json:"project"`
	Found   bool   `json:"found"`
	Servers int    `json:"servers"`
	Error   string `json:"error,omitempty"`
}

type importedJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"` // the entry's name in its file
	Client    string   `json:"client"`
	Path      string   `json:"path"`
	Line      int      `json:"line"`
	Transport string   `json:"transport"`
	Secrets   []string `json:"secrets"` // the fields whose credentials moved
}

type skippedEntryJSON struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Client string `json:"client"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Kind   string `json:"kind"` // disabled, invalid, duplicate, configured, clash, secret
	Reason string `json:"reason"`
}

type movedSecretJSON struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	Field  string `json:"field"`
	Stored bool   `json:"stored"` // in the store now (or already)
}

type importFlags struct {
	from, only, files, rename []string
	project, moveSecrets      bool
	allowLocal, dryRun        bool
}

func (e *env) importCommand() *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:        "import",
		SuggestFor: []string{"init", "setup"},
		Short:      "Take the MCP servers of Claude Desktop, Claude Code, Cursor, VS Code and Windsurf",
		Long: `Finds the MCP servers configured in the clients on this machine — Claude
Desktop, Claude Code, Cursor, VS Code and Windsurf — and adds them to the
user's config.toml ($XDG_CONFIG_HOME/switchboard/config.toml), or to the file
--config names, creating it if need be. With --project, the servers of the
project in the working folder (.mcp.json, Claude Code's servers for this
folder, .cursor/mcp.json, .vscode/mcp.json) go to ./switchboard.toml.

Each server is taken once, validated as an entry of the file would be, and
listed with what was skipped and why: a server the configuration already
has, a second copy of one, an id another server has (the first wins; the
reason says how to take the other under another id), an entry with a
problem, a disabled one. The file's text, comments included, is kept, and
the previous text saved as FILE.bak. Run it again after changing a client:
what is already there is left alone.

Credentials written out in env or headers values (a token, an Authorization
header) are never copied into the file: with --move-secrets they go to the
secret store (switchboard secrets) and the file gets {{secrets.NAME}};
without it such a server is skipped. A credential in args or a URL cannot
move and is refused. A placeholder that does not resolve here (a variable
not set, a secret not stored) is warned about, with the next step: such a
server cannot start until it does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runImport(&f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.from, "from", nil, "only these clients: "+strings.Join(config.Clients, ", "))
	fl.StringArrayVar(&f.files, "file", nil, "read this file (any of the clients' JSON forms) instead of looking for the clients' (repeatable)")
	fl.BoolVar(&f.project, "project", false, "the working folder's project files, into ./switchboard.toml")
	fl.StringSliceVar(&f.only, "only", nil, "only these entries (by name)")
	fl.StringArrayVar(&f.rename, "rename", nil, "take entry `NAME=ID` under another id (repeatable)")
	fl.BoolVar(&f.moveSecrets, "move-secrets", false, "move credentials in env and headers to the secret store, writing {{secrets.NAME}}")
	fl.BoolVar(&f.allowLocal, "allow-local-endpoint", false, "set allow_local_endpoint on servers at a loopback or private address")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show what would be taken and the tables that would be written; write and store nothing")
	return cmd
}

func (e *env) runImport(f *importFlags) error {
	for _, c := range f.from {
		if !slices.Contains(config.Clients, c) {
			return usageErr("import: unknown client %q for --from (want %s)", c, strings.Join(config.Clients, ", "))
		}
	}
	if len(f.files) > 0 && (len(f.from) > 0 || f.project) {
		return usageErr("import: --file reads the files named; it does not go with --from or --project")
	}
	rename := map[string]string{}
	for _, r := range f.rename {
		old, id, ok := strings.Cut(r, "=")
		if !ok || old == "" || id == "" {
			return usageErr("import: --rename wants NAME=ID, not %q", r)
		}
		rename[old] = id
	}
	dir, err := os.Getwd()
	if err != nil {
		return failed(err)
	}
	def := ""
	if f.project {
		def = "switchboard.toml"
	}
	target, err := e.editTarget(def)
	if err != nil {
		return err
	}
	before, err := e.loadBefore()
	if err != nil {
		return err
	}

	// The files to read.
	var files []config.ClientFile
	if len(f.files) > 0 {
		for _, p := range f.files {
			files = append(files, config.UserFile(p, dir))
		}
	} else {
		for _, cf := range config.ClientFiles(&config.ClientOptions{Home: e.home(), Dir: dir, Getenv: e.getenv}) {
			if cf.Project == f.project && (len(f.from) == 0 || slices.Contains(f.from, cf.Client)) {
				files = append(files, cf)
			}
		}
	}
	out := importJSON{File: target, DryRun: f.dryRun, Sources: []importSourceJSON{}, Added: []importedJSON{}, Skipped: []skippedEntryJSON{}, Secrets: []movedSecretJSON{}}
	var entries []config.Entry
	for _, cf := range files {
		src := importSourceJSON{Client: cf.Client, Path: cf.Path, Project: cf.Project}
		es, err := config.ReadClientFile(cf, e.home())
		switch {
		case errors.Is(err, fs.ErrNotExist) && len(f.files) == 0:
		case err != nil:
			src.Found = true
			src.Error = strings.TrimPrefix(err.Error(), cf.Path+": ")
			if errors.Is(err, fs.ErrNotExist) {
				src.Found = false
			}
		default:
			src.Found, src.Servers = true, len(es)
		}
		out.Sources = append(out.Sources, src)
		// No credential in these files reaches the output, whatever
		// happens to its entry.
		for _, en := range es {
			for _, l := range config.Literals(en.Server) {
				e.red.Add(l.Value)
			}
		}
		entries = append(entries, es...)
	}

	// The secret store, for resolving what is configured and for the
	// moves; one that cannot take a secret refuses the entries that need
	// it.
	var vault secret.Vault
	storeProblem := ""
	if v, err := e.openStore(); err != nil {
		storeProblem = err.Error()
	} else {
		vault = v
		if v.Backend() == secret.BackendEnv {
			storeProblem = "the secret store is the environment, which is read-only (SWITCHBOARD_SECRETS_BACKEND=env)"
		}
	}
	opts := &config.ImportOptions{
		Existing:           before,
		Only:               f.only,
		Rename:             rename,
		MoveSecrets:        f.moveSecrets,
		AllowLocalEndpoint: f.allowLocal,
		LookupEnv:          e.lookupEnv,
	}
	if vault != nil {
		opts.Secrets = vault
	}
	plan := config.PlanImport(entries, opts)
	if len(plan.Unmatched) > 0 {
		return usageErr("import: --only %s: no such entry in the files read", strings.Join(plan.Unmatched, ", "))
	}
	if storeProblem != "" {
		for _, m := range plan.Secrets {
			if !m.Stored {
				plan.Refuse(m.Server, fmt.Sprintf("%s cannot move to the secret store: %s", m.Field, storeProblem))
			}
		}
	}

	// Build the edit, and drop the servers the whole configuration
	// refuses (a local URL, [network], …) until it loads clean.
	var ed *config.Edit
	for {
		ed, err = e.openEdit(target)
		if err != nil {
			return err
		}
		for _, a := range plan.Add {
			if err := ed.Add(a.Server, "imported from "+e.sourceName(a.Entry.File)); err != nil {
				return failed(err)
			}
		}
		if len(plan.Add) == 0 {
			break
		}
		_, err := e.loadWith(ed)
		if err == nil {
			break
		}
		byServer, other := editProblems(err, ed)
		if len(other) > 0 || len(byServer) == 0 {
			return usageErr("import: the configuration would have problems:\n%s", indent(err.Error()))
		}
		for id, msgs := range byServer {
			reason := strings.Join(msgs, "; ")
			if strings.Contains(reason, "allow_local_endpoint") {
				reason += "; if you trust it, re-run with --allow-local-endpoint"
			}
			plan.Refuse(id, reason)
		}
	}
	out.TOML = string(ed.Appended())

	if !f.dryRun && len(plan.Add) > 0 {
		for i, m := range plan.Secrets {
			if m.Stored {
				continue
			}
			if err := vault.Set(m.Name, m.Value); err != nil {
				return failed(fmt.Errorf("import: storing secret %s: %w (nothing was written to %s)", m.Name, err, target))
			}
			plan.Secrets[i].Stored = true
		}
		backup, err := ed.Write()
		if err != nil {
			return failed(fmt.Errorf("import: %w", err))
		}
		out.Written, out.Backup = true, backup
	}

	for _, a := range plan.Add {
		out.Added = append(out.Added, importedJSON{ID: a.Server.ID, Name: a.Entry.Name, Client: a.Entry.File.Client, Path: a.Entry.File.Path,
			Line: a.Entry.Line, Transport: string(transportOf(a.Server)), Secrets: append([]string{}, a.Moved...)})
	}
	for _, s := range plan.Skipped {
		out.Skipped = append(out.Skipped, skippedEntryJSON{ID: s.ID, Name: s.Entry.Name, Client: s.Entry.File.Client, Path: s.Entry.File.Path,
			Line: s.Entry.Line, Kind: s.Kind, Reason: s.Reason})
	}
	for _, m := range plan.Secrets {
		out.Secrets = append(out.Secrets, movedSecretJSON{Name: m.Name, Server: m.Server, Field: m.Field, Stored: m.Stored})
	}
	out.Warnings = e.unresolved(plan, vault, target)
	for _, w := range out.Warnings {
		fmt.Fprintf(e.stderr, "switchboard: warning: %s\n", w)
	}
	if e.jsonOut {
		return e.printJSON(out)
	}
	e.printImport(out, plan, files, vault)
	return nil
}

// sourceName names a client file for people and for the comment above an
// imported table.
func (e *env) sourceName(cf config.ClientFile) string {
	p := e.tildePath(cf.Path)
	if cf.Client == "" {
		return p
	}
	if cf.Project && cf.Client == config.ClientClaudeCode && strings.HasSuffix(cf.Path, ".claude.json") {
		p += ", for " + e.tildePath(cf.Dir())
	}
	return config.ClientTitle(cf.Client) + " (" + p + ")"
}

func transportOf(s config.Server) config.Transport {
	if s.Transport != "" {
		return s.Transport
	}
	if s.URL != "" {
		if strings.HasPrefix(s.URL, "ws") {
			return config.TransportWebSocket
		}
		return config.TransportHTTP
	}
	return config.TransportStdio
}

// printImport writes the report of an import for people: per file read,
// the servers taken (+) and skipped (-, with why), then what was written.
func (e *env) printImport(out importJSON, plan *config.ImportPlan, files []config.ClientFile, vault secret.Vault) {
	var b strings.Builder
	found := 0
	for i, src := range out.Sources {
		if !src.Found {
			continue
		}
		found++
		fmt.Fprintf(&b, "%s:", e.sourceName(files[i]))
		if src.Error != "" {
			fmt.Fprintf(&b, " cannot be read: %s\n", src.Error)
			continue
		}
		if src.Servers == 0 {
			b.WriteString(" no servers\n")
			continue
		}
		b.WriteString("\n")
		// In the order of the file.
		type row struct {
			line int
			text string
		}
		var rows []row
		for _, a := range plan.Add {
			if sameSource(a.Entry.File, files[i]) {
				t := fmt.Sprintf("  + %-16s %s", a.Server.ID, commandLine(a.Server))
				for _, m := range plan.Secrets {
					if m.Server == a.Server.ID {
						t += fmt.Sprintf("  [%s → {{secrets.%s}}]", m.Field, m.Name)
					}
				}
				rows = append(rows, row{a.Entry.Line, t})
			}
		}
		for _, s := range plan.Skipped {
			if sameSource(s.Entry.File, files[i]) {
				rows = append(rows, row{s.Entry.Line, fmt.Sprintf("  - %-16s skipped (%s): %s", s.ID, s.Kind, s.Reason)})
			}
		}
		slices.SortStableFunc(rows, func(x, y row) int { return x.line - y.line })
		for _, r := range rows {
			b.WriteString(r.text + "\n")
		}
	}
	if found == 0 {
		b.WriteString("found no MCP client configuration; looked in:\n")
		for _, src := range out.Sources {
			fmt.Fprintf(&b, "  %s\n", e.tildePath(src.Path))
		}
		b.WriteString("add a server with: switchboard add NAME -- COMMAND [ARGS...], or switchboard add NAME URL\n")
	}
	n := len(plan.Add)
	switch {
	case n == 0 && found > 0:
		fmt.Fprintf(&b, "nothing to import into %s\n", out.File)
	case out.DryRun:
		fmt.Fprintf(&b, "dry run: %d server(s) would be added to %s; nothing written. The tables:\n\n%s", n, out.File, out.TOML)
	case out.Written:
		fmt.Fprintf(&b, "added %d server(s) to %s", n, out.File)
		if out.Backup != "" {
			fmt.Fprintf(&b, " (the previous file is %s)", out.Backup)
		}
		b.WriteString("\n")
		if len(plan.Secrets) > 0 && vault != nil {
			fmt.Fprintf(&b, "%d secret(s) in the secret store (%s)\n", len(plan.Secrets), vault.Backend())
		}
	}
	e.printf("%s", b.String())
}

// unresolved says, for each imported server, the placeholders that do not
// resolve here — a variable not set in this environment, a secret not in
// the store nor moving there — with the next step: such a server fails
// its start, and with it every command that starts it (the client it came
// from may have had the variable set; serve may run elsewhere).
func (e *env) unresolved(plan *config.ImportPlan, vault secret.Vault, file string) []string {
	moving := map[string]bool{}
	for _, m := range plan.Secrets {
		moving[m.Name] = true
	}
	out := []string{}
	for _, a := range plan.Add {
		s := a.Server
		fields := map[string]string{}
		for k, v := range s.Env {
			fields[decode.KeyPath("env", k)] = v
		}
		for k, v := range s.Headers {
			fields[decode.KeyPath("headers", k)] = v
		}
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			ps, _ := secret.Parse(fields[f]) // a malformed one is the entry's problem, said already
			for _, p := range ps {
				switch p.Kind {
				case "env":
					if _, ok := e.lookupEnv(p.Name); ok {
						continue
					}
					name := strings.ToLower(p.Name)
					out = append(out, fmt.Sprintf("%s: %s: %s is not set here: export %s where switchboard runs, or store it with `switchboard secrets set %s` and write {{secrets.%s}} in %s",
						s.ID, f, p, p.Name, name, name, file))
				case "secrets":
					if moving[p.Name] {
						continue
					}
					if vault != nil {
						if _, ok := vault.Lookup(p.Name); ok {
							continue
						}
					}
					out = append(out, fmt.Sprintf("%s: %s: %s is not in the secret store: store it with `switchboard secrets set %s`", s.ID, f, p, p.Name))
				}
			}
		}
	}
	return out
}

func sameSource(a, b config.ClientFile) bool {
	return a.Path == b.Path && a.Project == b.Project && a.Client == b.Client
}

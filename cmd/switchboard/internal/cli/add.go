package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/store"
)

// editJSON is what add and remove print with --json.
type editJSON struct {
	Action   string   `json:"action"` // "add", "replace" or "remove"
	Server   string   `json:"server"`
	File     string   `json:"file"`
	DryRun   bool     `json:"dry_run"`
	Written  bool     `json:"written"`
	Backup   string   `json:"backup,omitempty"`
	TOML     string   `json:"toml,omitempty"` // the table added (add)
	Warnings []string `json:"warnings"`
	// Database is the state database a server added at run time was
	// removed from (remove; File is then ""), and Serve says that the
	// running serve removed it, stopping it.
	Database string `json:"database,omitempty"`
	Serve    bool   `json:"serve,omitempty"`
}

type addFlags struct {
	env, headers        []string
	transport           string
	description, cwd    string
	timeout, connect    time.Duration
	optional, lazy      bool
	tools, allowEnv     []string
	allowLocal, replace bool
	dryRun              bool
	reg                 registryFlags
}

func (e *env) addCommand() *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add NAME URL | add NAME [flags] -- COMMAND [ARGS...] | add --from-registry NAME[@VERSION]",
		Short: "Add one MCP server to a config file",
		Long: `Adds one MCP server, as an [[mcp_servers]] table, to the config file that
--config or SWITCHBOARD_CONFIG names, else to the user's config.toml
($XDG_CONFIG_HOME/switchboard/config.toml). The rest of the file, comments
included, is kept; the previous text is saved as FILE.bak.

  switchboard add everything -- npx -y @modelcontextprotocol/server-everything
  switchboard add search https://search.example.com/mcp --header "Authorization: Bearer {{secrets.search_token}}"

The server is validated as an entry of the file would be, with the whole
configuration, before anything is written. A value that looks like a
credential written out (a token in --env, an Authorization header, an API key
among the args) is refused: store it with 'switchboard secrets set NAME' and
write {{secrets.NAME}} instead. A server the configuration already has is
refused unless --replace.

With --from-registry, the server is an MCP registry's entry (switchboard
search finds them), pinned to its version (the latest unless @VERSION):

  switchboard add --from-registry io.github.domdomegg/airtable-mcp-server@1.7.3

an npm package as npx -y PKG@VERSION, a PyPI one as uvx PKG==VERSION, an OCI
image as docker (or podman) run -i --rm IMAGE, a remote as an http or sse
server with its URL template filled in. The values the entry asks for are
prompted for on a terminal, or given with --var NAME=VALUE or --var-env
NAME=ENVVAR; a secret one is put in the secret store (as ID_NAME) and the
entry gets {{secrets.ID_NAME}}. A version the registry marks deprecated or
deleted is refused unless --force. The entry records where it came from
(registry = { name, version, url }), for switchboard outdated and upgrade.`,
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if f.reg.from != "" {
				if len(args) > 0 {
					return usageErr("add --from-registry %s: no NAME or command with it (--id names the server)", f.reg.from)
				}
				return nil
			}
			switch {
			case len(args) == 0:
				return usageErr("add: name the server: switchboard add NAME URL, or switchboard add NAME -- COMMAND [ARGS...]")
			case dash == 0:
				return usageErr("add: the server's NAME comes before --: switchboard add NAME -- COMMAND [ARGS...]")
			case dash > 0 && dash != 1:
				return usageErr("add: one NAME before --, then the command: switchboard add NAME -- COMMAND [ARGS...]")
			case dash > 0 && len(args) == 1:
				return usageErr("add %s: no command after --", args[0])
			case dash < 0 && len(args) == 1:
				return usageErr("add %s: give a URL, or -- and the command: switchboard add %s -- COMMAND [ARGS...]", args[0], args[0])
			case dash < 0 && len(args) > 2:
				return usageErr("add %s: to add a command with arguments, put -- before it: switchboard add %s -- %s", args[0], args[0], strings.Join(args[1:], " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.reg.from != "" {
				f.reg.env = f.env
				return e.addFromRegistry(&f.reg, f.replace, f.dryRun)
			}
			s, err := f.server(args, cmd.ArgsLenAtDash())
			if err != nil {
				return err
			}
			return e.add(s, f.replace, f.dryRun)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v\nTo add a command with options of its own, put -- before it: switchboard add NAME -- COMMAND [ARGS...]\nRun 'switchboard add --help' for usage.", err)
	})
	fl := cmd.Flags()
	fl.StringArrayVar(&f.env, "env", nil, "an environment variable of a stdio server, `NAME=VALUE` (repeatable); a secret as {{secrets.NAME}}")
	fl.StringArrayVar(&f.headers, "header", nil, "an HTTP header of a network server, `\"Name: value\"` or Name=value (repeatable)")
	fl.StringVar(&f.transport, "transport", "", "stdio, http (or streamable-http), sse or websocket (or ws) (default: stdio for a command, http for an http(s) URL, websocket for ws(s))")
	fl.StringVar(&f.description, "description", "", "what the server is for")
	fl.StringVar(&f.cwd, "cwd", "", "the working directory of a stdio server")
	fl.DurationVar(&f.timeout, "timeout", 0, "per call (default 60s)")
	fl.DurationVar(&f.connect, "connect-timeout", 0, "to connect (default 30s)")
	fl.BoolVar(&f.optional, "optional", false, "a failure to start does not stop the others")
	fl.BoolVar(&f.lazy, "lazy", false, "start on the first call; offer the cached tools until then")
	fl.StringSliceVar(&f.tools, "tools", nil, "offer only these tools (tools_allowlist)")
	fl.StringSliceVar(&f.allowEnv, "allow-env", nil, "variables of --env that make the program load other code, allowed all the same (e.g. NODE_OPTIONS)")
	fl.BoolVar(&f.allowLocal, "allow-local-endpoint", false, "admit the URL although it is a loopback or private address (exactly its host:port)")
	fl.BoolVar(&f.replace, "replace", false, "replace a server the file already declares, where it stands")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the table that would be added; write nothing")
	fl.StringVar(&f.reg.from, "from-registry", "", "add an MCP registry's entry, `NAME[@VERSION]`, pinned")
	fl.StringVar(&f.reg.id, "id", "", "the id of a server added --from-registry (default: the last part of its name)")
	f.reg.add(cmd)
	return cmd
}

// server builds the server the flags and arguments describe.
func (f *addFlags) server(args []string, dash int) (config.Server, error) {
	// Another client's name for a transport means the same here; an
	// unknown one is left for the configuration's check to name.
	transport, ok := config.ParseTransport(f.transport)
	if !ok {
		transport = config.Transport(f.transport)
	}
	s := config.Server{
		ID:                 args[0],
		Description:        f.description,
		Transport:          transport,
		Cwd:                f.cwd,
		Timeout:            f.timeout,
		ConnectTimeout:     f.connect,
		Optional:           f.optional,
		Lazy:               f.lazy,
		ToolsAllowlist:     f.tools,
		AllowEnv:           f.allowEnv,
		AllowLocalEndpoint: f.allowLocal,
	}
	if dash > 0 {
		s.Command = args[1]
		if len(args) > 2 {
			s.Args = args[2:]
		}
	} else if strings.Contains(args[1], "://") {
		s.URL = args[1]
	} else {
		s.Command = args[1]
	}
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return s, usageErr("add %s: --env wants NAME=VALUE, not %q", s.ID, k)
		}
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env[k] = v
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if eq := strings.IndexByte(h, '='); eq >= 0 && (!ok || eq < len(k)) {
			k, v, ok = h[:eq], h[eq+1:], true
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return s, usageErr("add %s: --header wants \"Name: value\" or Name=value", s.ID)
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[k] = v
	}
	return s, nil
}

// add writes s to the target file.
func (e *env) add(s config.Server, replace, dryRun bool) error {
	// Whatever happens next, no credential given on the command line
	// reaches the output.
	lits := config.Literals(s)
	for _, l := range lits {
		e.red.Add(l.Value)
	}
	if len(lits) > 0 {
		return e.refuseLiterals(s, lits)
	}
	target, err := e.editTarget("")
	if err != nil {
		return err
	}
	before, err := e.loadBefore()
	if err != nil {
		return err
	}
	ed, err := e.openEdit(target)
	if err != nil {
		return err
	}
	out := editJSON{Action: "add", Server: s.ID, File: target, DryRun: dryRun, Warnings: []string{}}
	switch ex, exists := before.Server(s.ID); {
	case ed.Has(s.ID) && replace:
		out.Action = "replace"
		if err := ed.Replace(s); err != nil {
			return failed(err)
		}
	case exists && !replace:
		return usageErr("add %s: already configured (%s); --replace replaces it", s.ID, ex.Source)
	case exists && later(before, ex.Source.File, target):
		return usageErr("add %s: %s declares it too, and is read after %s, so the server added would not be used; edit that file (--config %s)", s.ID, ex.Source, target, ex.Source.File)
	default:
		if exists {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s overrides %s declared in %s", target, s.ID, ex.Source))
		}
		if err := ed.Add(s, ""); err != nil {
			return failed(err)
		}
	}
	out.TOML = string(config.ServerTOML(s))
	cfg, err := e.loadWith(ed)
	if err != nil {
		byServer, other := editProblems(err, ed)
		msgs := byServer[s.ID]
		for _, p := range other {
			msgs = append(msgs, p.Error())
		}
		// The file's keys, as this command's flags.
		for i, m := range msgs {
			for key, flag := range map[string]string{"allow_env = [": "--allow-env", "allow_local_endpoint = true": "--allow-local-endpoint"} {
				if strings.Contains(m, key) {
					msgs[i] = m + " (" + flag + ")"
				}
			}
		}
		return usageErr("add %s:\n%s", s.ID, indent(strings.Join(msgs, "\n")))
	}
	// What the configuration warns of in the server added (a command line
	// through sh -c, PATH in env, …), as validate and serve will.
	if added, ok := cfg.Server(s.ID); ok {
		for _, w := range cfg.Warnings {
			if w.Pos.File == added.Source.File && serverPrefix(w.Field) == added.Source.Field {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s %s: %s", s.ID, strings.TrimPrefix(w.Field, added.Source.Field+"."), w.Msg))
			}
		}
	}
	if !dryRun {
		backup, err := ed.Write()
		if err != nil {
			return failed(fmt.Errorf("add %s: %w", s.ID, err))
		}
		out.Written, out.Backup = true, backup
	}
	return e.printEdit(out)
}

// later reports whether file is read after target in cfg's layers.
func later(cfg *config.Config, file, target string) bool {
	fi, ti := -1, len(cfg.Files)
	for i, f := range cfg.Files {
		if absPath(f) == absPath(file) {
			fi = i
		}
		if absPath(f) == absPath(target) {
			ti = i
		}
	}
	return fi > ti
}

// refuseLiterals explains why a server with credentials written out is not
// added, and how to add it.
func (e *env) refuseLiterals(s config.Server, lits []config.Literal) error {
	var b strings.Builder
	fmt.Fprintf(&b, "add %s: Switchboard writes no credential into a config file, and these look like one:\n", s.ID)
	var movable []config.Literal
	for _, l := range lits {
		fmt.Fprintf(&b, "  %s (%s)\n", l.Field, l.Why)
		if l.Movable {
			movable = append(movable, l)
		}
	}
	if len(movable) > 0 {
		b.WriteString("Store each in the secret store and name it instead:\n")
		for _, l := range movable {
			name := l.SecretName(s.ID)
			flag, key, _ := strings.Cut(l.Field, ".")
			if flag == "env" {
				fmt.Fprintf(&b, "  switchboard secrets set %s      # then: --env %s={{secrets.%s}}\n", name, unquote(key), name)
			} else {
				fmt.Fprintf(&b, "  switchboard secrets set %s      # then: --header \"%s: %s{{secrets.%s}}\"\n", name, unquote(key), l.Keep, name)
			}
		}
	}
	if len(movable) < len(lits) {
		b.WriteString("A command line and a URL are no place for a credential (argv is readable by every user on this machine): pass it in --env if the server reads it from there.\n")
	}
	b.WriteString("A value typed on a command line is also in your shell's history.")
	return usageErr("%s", b.String())
}

func unquote(k string) string {
	if len(k) >= 2 && k[0] == '"' {
		return strings.Trim(k, `"`)
	}
	return k
}

// printEdit reports what add or remove did.
func (e *env) printEdit(out editJSON) error {
	for _, w := range out.Warnings {
		fmt.Fprintf(e.stderr, "switchboard: warning: %s\n", w)
	}
	if e.jsonOut {
		return e.printJSON(out)
	}
	verb := map[string]string{"add": "added", "replace": "replaced", "remove": "removed"}[out.Action]
	prep := map[string]string{"add": "to", "replace": "in", "remove": "from"}[out.Action]
	if out.Database != "" {
		switch {
		case out.DryRun:
			fmt.Fprintf(e.stderr, "switchboard: dry run: %s (added at run time) would be removed from the state database %s; nothing changed\n", out.Server, out.Database)
		case out.Serve:
			e.printf("removed %s (added at run time) from the running switchboard serve and its state database %s\n", out.Server, out.Database)
		default:
			e.printf("removed %s (added at run time) from the state database %s\n", out.Server, out.Database)
		}
		return nil
	}
	if out.DryRun {
		if out.TOML != "" {
			e.printf("%s", out.TOML)
		}
		fmt.Fprintf(e.stderr, "switchboard: dry run: %s would be %s %s %s; nothing written\n", out.Server, verb, prep, out.File)
		return nil
	}
	e.printf("%s %s %s %s\n", verb, out.Server, prep, out.File)
	if out.Backup != "" {
		fmt.Fprintf(e.stderr, "switchboard: the previous file is %s\n", out.Backup)
	}
	return nil
}

func (e *env) removeCommand() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove one MCP server from a config file or the state database",
		Long: `Removes server NAME from the config file that --config or SWITCHBOARD_CONFIG
names, else from the user's config.toml, with the comment lines just above
its table; the rest of the file is kept and the previous text saved as
FILE.bak. The secrets it used stay in the secret store (switchboard secrets
rm NAME).

A server added at run time (through the REST API or the web UI of
switchboard serve) is removed from the state database instead: through the
running serve of this configuration, which stops it, or directly when none
runs.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("remove: name one server: switchboard remove NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			target, err := e.editTarget("")
			if err != nil {
				return err
			}
			before, err := e.loadBefore()
			if err != nil {
				return err
			}
			ed, err := e.openEdit(target)
			if err != nil {
				return err
			}
			if !ed.Has(id) {
				if ex, ok := before.Server(id); ok {
					return usageErr("remove %s: %s does not declare it; %s does (--config %s)", id, target, ex.Source, ex.Source.File)
				}
				if out, ok, err := e.removeStored(cmd.Context(), before, id, dryRun); ok || err != nil {
					if err != nil {
						return err
					}
					return e.printEdit(out)
				}
				return usageErr("remove %s: no such server (%s)", id, serverIDs(before))
			}
			if err := ed.Remove(id); err != nil {
				return failed(err)
			}
			out := editJSON{Action: "remove", Server: id, File: target, DryRun: dryRun, Warnings: []string{}}
			after, err := e.loadWith(ed)
			if err != nil {
				return usageErr("remove %s: the configuration would have problems:\n%s", id, indent(err.Error()))
			}
			if still, ok := after.Server(id); ok {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s is still declared in %s", id, still.Source))
			}
			if !dryRun {
				backup, err := ed.Write()
				if err != nil {
					return failed(fmt.Errorf("remove %s: %w", id, err))
				}
				out.Written, out.Backup = true, backup
			}
			return e.printEdit(out)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed; write nothing")
	return cmd
}

// removeStored removes server id from the state database, when a server
// was added there at run time (ok false when none was): through the
// running serve of cfg's configuration, which stops it as it deletes it,
// else directly (a serve of another configuration on the same SQLite
// database would not hear of it, and runs it until it restarts).
func (e *env) removeStored(ctx context.Context, cfg *config.Config, id string, dryRun bool) (editJSON, bool, error) {
	st := e.stateStore(cfg)
	if st == nil {
		return editJSON{}, false, nil
	}
	if _, err := st.Server(ctx, id); errors.Is(err, store.ErrNotFound) {
		return editJSON{}, false, nil
	} else if err != nil {
		return editJSON{}, true, failed(fmt.Errorf("remove %s: %w", id, err))
	}
	out := editJSON{Action: "remove", Server: id, DryRun: dryRun, Warnings: []string{}, Database: st.Where()}
	if dryRun {
		return out, true, nil
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("switchboard serve does not answer (%v): removed from the database alone; a serve still running keeps %s until it restarts", err, id))
	}
	if c != nil {
		defer c.Close()
		if err := c.DeleteServer(ctx, id); err != nil {
			return out, true, failed(fmt.Errorf("remove %s: switchboard serve: %w", id, err))
		}
		out.Written, out.Serve = true, true
		return out, true, nil
	}
	if err := st.DeleteServer(ctx, id, 0); err != nil {
		return out, true, failed(fmt.Errorf("remove %s: %w", id, err))
	}
	out.Written = true
	return out, true, nil
}

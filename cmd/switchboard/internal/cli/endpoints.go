package cli

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/secret"
)

// The endpoints commands manage the [[endpoints]] tables of a config file
// as add and remove manage [[mcp_servers]]: the same file (edit.go), its
// text kept, the whole configuration checked before anything is written.
// They see the endpoints added at run time too (endpoints_stored.go).

// endpointJSON is an endpoint as `switchboard endpoints --json` lists it:
// what it serves and how it is reached, never its token.
type endpointJSON struct {
	Name         string   `json:"name"`
	URL          string   `json:"url,omitempty"` // Streamable HTTP on this machine, at [gateway] listen
	Path         string   `json:"path"`          // Streamable HTTP
	SSE          string   `json:"sse"`           // the legacy HTTP+SSE transport
	WebSocket    string   `json:"websocket"`     // WebSocket
	Servers      []string `json:"servers"`       // null: every server
	Tools        []string `json:"tools"`         // null: every tool of Servers
	Workflows    []string `json:"workflows"`
	Instructions string   `json:"instructions,omitempty"`
	Mode         string   `json:"mode"`       // "all", "search" or "code"
	Renamed      int      `json:"renamed"`    // tools offered under another name
	Overridden   int      `json:"overridden"` // tools whose description or hints are changed
	Auth         string   `json:"auth"`       // "token" (its own auth_token), "gateway" (the gateway's)
	Scopes       []string `json:"scopes"`     // OAuth scopes a token needs here
	Source       string   `json:"source"`     // file:line; "" for one added at run time
	// Origin is "config" (a config file's) or "runtime" (added through the
	// REST API or the web UI, kept in the state store), as the API says.
	Origin string `json:"origin"`
	// State is "served", or "failed" for one added at run time that a
	// serve of this configuration cannot serve, Error saying why.
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// toEndpointJSON is ep as the list shows it; url is its Streamable HTTP
// URL's scheme and address, "" when unknown.
func toEndpointJSON(ep config.Endpoint, base string) endpointJSON {
	mcp, sse, _, ws := ep.Paths()
	url := ""
	if base != "" {
		url = base + mcp
	}
	return endpointJSON{Name: ep.Name, URL: url, Path: mcp, SSE: sse, WebSocket: ws, Servers: ep.Servers, Tools: ep.Tools,
		Workflows: ep.Workflows, Instructions: ep.Instructions, Mode: cmp.Or(ep.Mode, config.ModeAll), Renamed: len(ep.Rename), Overridden: len(ep.Override),
		Auth: endpointAuth(ep), Scopes: ep.Scopes, Source: ep.Source.String(), Origin: daemon.OriginConfig, State: "served"}
}

// endpointAuth says how a client authenticates to ep, never with what.
func endpointAuth(ep config.Endpoint) string {
	if ep.AuthToken != "" {
		return "token"
	}
	return "gateway"
}

func (e *env) endpointsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "endpoints",
		Short: "List, add, change, remove, export and import the gateway's named endpoints",
		Long: `Lists the named endpoints of the configuration ([[endpoints]] tables), then
those added at run time (through the REST API or the web UI of switchboard
serve, kept in the state store): each an MCP server of its own that
switchboard serve publishes beside the default one at /mcp, with its own
servers, tools, instructions, workflows and token. Per endpoint: its name,
the paths it is served at (/e/NAME/mcp, /e/NAME/sse, /e/NAME/ws unless path
says otherwise), the servers and tool patterns it publishes, how clients
authenticate (its own token, or the gateway's; never a token), and its
origin (config or runtime). One added at run time that cannot be served (a
server it names was removed, its token does not resolve) is listed failed,
with why. Those added at run time are asked of the running switchboard serve
of this configuration when there is one, else read from the state store.

  switchboard endpoints add code --servers github,filesystem --tools 'github_*,!github_delete_*'
  switchboard endpoints edit code --instructions "Tools for this repository."
  switchboard endpoints remove code
  switchboard endpoints export > endpoints.toml
  switchboard endpoints import endpoints.toml
  switchboard connect cursor --endpoint code

add, edit, remove and import write the config file --config or
SWITCHBOARD_CONFIG names, else the user's config.toml, as switchboard add
does: the rest of the file, comments included, is kept, and the previous
text saved as FILE.bak. An endpoint added at run time is removed from the
state store (through the running serve when there is one) and changed
through the running serve; export writes it as a table too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			rts, err := e.runtimeEndpoints(cmd.Context(), cfg)
			if err != nil {
				return failed(fmt.Errorf("endpoints: the endpoints added at run time: %w", err))
			}
			out := []endpointJSON{}
			base := ""
			if addr, err := connectAddr(cfg.Gateway.Listen); err == nil {
				base = "http://" + addr
			}
			for _, ep := range cfg.Endpoints {
				out = append(out, toEndpointJSON(ep, base))
			}
			for _, r := range rts {
				j := toEndpointJSON(r.ep, base)
				j.Source, j.Origin = "", daemon.OriginRuntime
				if !r.decoded {
					j = endpointJSON{Name: r.ep.Name, Origin: daemon.OriginRuntime}
				}
				if r.err != nil {
					j.State, j.Error = "failed", r.err.Error()
				} else {
					j.State = "served"
				}
				out = append(out, j)
			}
			if e.jsonOut {
				return e.printJSON(map[string]any{"endpoints": out})
			}
			if len(out) == 0 {
				e.printf("no named endpoints: switchboard serve publishes /mcp alone; add one with switchboard endpoints add NAME\n")
				return nil
			}
			var b strings.Builder
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPATH\tSERVERS\tTOOLS\tMODE\tAUTH\tORIGIN")
			for _, j := range out {
				auth := j.Auth
				if len(j.Scopes) > 0 {
					auth += ", scopes " + strings.Join(j.Scopes, " ")
				}
				origin := j.Origin
				if j.State == "failed" {
					origin += " (failed)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, cmpOr(j.Path, "-"), listOrAll(j.Servers, "all"), listOrAll(j.Tools, "all"), cmpOr(j.Mode, "-"), cmpOr(auth, "-"), origin)
			}
			tw.Flush()
			for _, j := range out {
				if j.State == "failed" {
					fmt.Fprintf(&b, "%s is not served: %s\n", j.Name, j.Error)
				}
			}
			e.printf("%s", b.String())
			return nil
		},
	}
	cmd.AddCommand(e.endpointsAddCommand(false), e.endpointsAddCommand(true), e.endpointsRemoveCommand(),
		e.endpointsExportCommand(), e.endpointsImportCommand())
	return cmd
}

func listOrAll(l []string, all string) string {
	switch {
	case l == nil:
		return all
	case len(l) == 0:
		return "none"
	}
	return strings.Join(l, ",")
}

// endpointEditJSON is what endpoints add, edit, remove and import print
// with --json.
type endpointEditJSON struct {
	Action   string   `json:"action"` // "add", "edit", "remove" or "import"
	Endpoint string   `json:"endpoint,omitempty"`
	File     string   `json:"file"`
	DryRun   bool     `json:"dry_run"`
	Written  bool     `json:"written"`
	Backup   string   `json:"backup,omitempty"`
	TOML     string   `json:"toml,omitempty"` // the table as written (add, edit)
	Warnings []string `json:"warnings"`
	// Import: the endpoints added, replaced, and left as they were.
	Added     []string            `json:"added,omitempty"`
	Replaced  []string            `json:"replaced,omitempty"`
	Unchanged []string            `json:"unchanged,omitempty"`
	Skipped   []skippedEndpointJS `json:"skipped,omitempty"`
	// Database is the state database of an endpoint added at run time
	// (remove, edit; File is then ""), and Serve says that the running
	// switchboard serve did it.
	Database string `json:"database,omitempty"`
	Serve    bool   `json:"serve,omitempty"`
}

type skippedEndpointJS struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

type endpointFlags struct {
	path, instructions, authToken, mode string
	servers, tools, workflows           []string
	scopes, rename                      []string
	dryRun                              bool
}

// apply sets on ep what the flags given say.
func (f *endpointFlags) apply(cmd *cobra.Command, ep *config.Endpoint) error {
	changed := cmd.Flags().Changed
	// '' for a list is the default: every server, every tool, none.
	list := func(l []string) []string {
		if len(l) == 0 || (len(l) == 1 && l[0] == "") {
			return nil
		}
		return l
	}
	if changed("path") {
		ep.Path = f.path
	}
	if changed("servers") {
		ep.Servers = list(f.servers)
	}
	if changed("tools") {
		ep.Tools = list(f.tools)
	}
	if changed("workflow") {
		ep.Workflows = list(f.workflows)
	}
	if changed("instructions") {
		ep.Instructions = f.instructions
	}
	if changed("mode") {
		ep.Mode = f.mode
		if f.mode == config.ModeAll {
			ep.Mode = "" // the default: not written
		}
	}
	if changed("auth-token") {
		ep.AuthToken = f.authToken
	}
	if changed("scopes") {
		ep.Scopes = list(f.scopes)
	}
	for _, r := range f.rename {
		name, tool, ok := strings.Cut(r, "=")
		if !ok || name == "" {
			return usageErr("endpoints: --rename wants NAME=TOOL (NAME= to drop it), not %q", r)
		}
		if tool == "" {
			delete(ep.Rename, name)
			continue
		}
		if ep.Rename == nil {
			ep.Rename = map[string]string{}
		}
		ep.Rename[name] = tool
	}
	return nil
}

func (e *env) endpointsAddCommand(edit bool) *cobra.Command {
	var f endpointFlags
	cmd := &cobra.Command{
		Use:   "add NAME [flags]",
		Short: "Add a named endpoint to a config file",
		Long: `Adds endpoint NAME, as an [[endpoints]] table, to the config file that
--config or SWITCHBOARD_CONFIG names, else to the user's config.toml. It is
validated with the whole configuration before anything is written; the rest
of the file, comments included, is kept, and the previous text saved as
FILE.bak. --dry-run prints the table instead.

A token is written as a placeholder, never as itself: store it with
'switchboard secrets set NAME' and give --auth-token '{{secrets.NAME}}'.`,
	}
	verb := "add"
	if edit {
		verb = "edit"
		cmd.Use = "edit NAME [flags]"
		cmd.Short = "Change a named endpoint of a config file"
		cmd.Long = `Changes endpoint NAME where the config file declares it (the one --config
or SWITCHBOARD_CONFIG names, else the user's config.toml): only what the
flags given say, the rest of the endpoint as it was. A list given as '' is
the default again (--servers '' publishes every server). The table is
rewritten where it stands, under its comments; the rest of the file is kept
and the previous text saved as FILE.bak. --dry-run prints the table instead.`
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageErr("endpoints %s: name one endpoint: switchboard endpoints %s NAME [flags]", verb, verb)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return e.editEndpoint(cmd, verb, args[0], &f)
	}
	fl := cmd.Flags()
	fl.StringVar(&f.path, "path", "", "where Streamable HTTP is served (default /e/NAME/mcp; SSE and WebSocket beside it)")
	fl.StringSliceVar(&f.servers, "servers", nil, "the servers it publishes, by id (default all)")
	fl.StringSliceVar(&f.tools, "tools", nil, "tool name patterns, in order: * any run, ? one character, ! before one excludes (default all)")
	fl.StringVar(&f.instructions, "instructions", "", "what its clients are told it is for (default the gateway's)")
	fl.StringVar(&f.mode, "mode", "", "what it lists: all (every tool, the default), search (search_tools and call_tool) or code (search_tools and run_code)")
	fl.StringSliceVar(&f.workflows, "workflow", nil, "a published workflow offered here (repeatable)")
	fl.StringVar(&f.authToken, "auth-token", "", "its own bearer token, as a placeholder: '{{secrets.NAME}}' or '{{env.NAME}}'")
	fl.StringSliceVar(&f.scopes, "scopes", nil, "OAuth scopes a token needs here")
	fl.StringArrayVar(&f.rename, "rename", nil, "offer a tool to clients under another name, `NAME=TOOL` (repeatable; NAME= drops one)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the table that would be written; write nothing")
	return cmd
}

// editEndpoint adds (verb "add") or changes ("edit") endpoint name.
func (e *env) editEndpoint(cmd *cobra.Command, verb, name string, f *endpointFlags) error {
	// Whatever happens next, a token given as itself reaches no output.
	if f.authToken != "" && !strings.Contains(f.authToken, "{{") {
		e.red.Add(f.authToken)
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
	existing, exists := configEndpoint(before, name)
	if verb == "edit" && !exists {
		_, rt, rts, found, err := e.findEndpoint(cmd.Context(), before, name)
		switch {
		case err != nil:
			return failed(fmt.Errorf("endpoints edit %s: %w", name, err))
		case !found:
			return usageErr("endpoints edit %s: no such endpoint (%s)", name, allEndpointNames(before, rts))
		}
		return e.editStoredEndpoint(cmd, before, rt, f)
	}
	ep := config.Endpoint{Name: name}
	switch {
	case verb == "add" && exists:
		return usageErr("endpoints add %s: already configured (%s); switchboard endpoints edit %s changes it", name, existing.Source, name)
	case verb == "edit" && !ed.HasEndpoint(name) && exists:
		return usageErr("endpoints edit %s: %s does not declare it; %s does (--config %s)", name, target, existing.Source, existing.Source.File)
	case verb == "edit":
		for _, x := range ed.Endpoints() {
			if x.Name == name {
				ep = x
			}
		}
		ep.Rename = maps.Clone(ep.Rename)
	}
	if err := f.apply(cmd, &ep); err != nil {
		return err
	}
	if verb == "add" {
		err = ed.AddEndpoint(ep, "")
	} else {
		err = ed.ReplaceEndpoint(ep)
	}
	if err != nil {
		return failed(err)
	}
	if _, err := e.loadWith(ed); err != nil {
		return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("endpoints %s %s:\n%s", verb, name, indent(err.Error())), details: problemDetails(err)}
	}
	out := endpointEditJSON{Action: verb, Endpoint: name, File: target, DryRun: f.dryRun, TOML: string(config.EndpointTOML(ep)), Warnings: []string{}}
	if !f.dryRun {
		backup, err := ed.Write()
		if err != nil {
			return failed(fmt.Errorf("endpoints %s %s: %w", verb, name, err))
		}
		out.Written, out.Backup = true, backup
	}
	return e.printEndpointEdit(out)
}

// configEndpoint returns the endpoint of cfg named name.
func configEndpoint(cfg *config.Config, name string) (config.Endpoint, bool) {
	for _, ep := range cfg.Endpoints {
		if ep.Name == name {
			return ep, true
		}
	}
	return config.Endpoint{}, false
}

func endpointNames(cfg *config.Config) string {
	if len(cfg.Endpoints) == 0 {
		return "none configured"
	}
	names := make([]string, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		names[i] = ep.Name
	}
	return "configured: " + strings.Join(names, ", ")
}

func (e *env) printEndpointEdit(out endpointEditJSON) error {
	for _, w := range out.Warnings {
		fmt.Fprintf(e.stderr, "switchboard: warning: %s\n", w)
	}
	if e.jsonOut {
		return e.printJSON(out)
	}
	verb := map[string]string{"add": "added", "edit": "changed", "remove": "removed"}[out.Action]
	prep := map[string]string{"add": "to", "edit": "in", "remove": "from"}[out.Action]
	if out.Database != "" {
		switch {
		case out.DryRun:
			e.printf("%s", out.TOML)
			fmt.Fprintf(e.stderr, "switchboard: dry run: endpoint %s (added at run time) would be %s %s the state database %s; nothing changed\n", out.Endpoint, verb, prep, out.Database)
		case out.Serve:
			e.printf("%s endpoint %s (added at run time) %s the running switchboard serve and its state database %s\n", verb, out.Endpoint, prep, out.Database)
		default:
			e.printf("%s endpoint %s (added at run time) %s the state database %s\n", verb, out.Endpoint, prep, out.Database)
		}
		return nil
	}
	if out.DryRun {
		e.printf("%s", out.TOML)
		fmt.Fprintf(e.stderr, "switchboard: dry run: endpoint %s would be %s %s %s; nothing written\n", out.Endpoint, verb, prep, out.File)
		return nil
	}
	e.printf("%s endpoint %s %s %s\n", verb, out.Endpoint, prep, out.File)
	if out.Backup != "" {
		fmt.Fprintf(e.stderr, "switchboard: the previous file is %s\n", out.Backup)
	}
	return nil
}

func (e *env) endpointsRemoveCommand() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove a named endpoint from a config file or the state database",
		Long: `Removes endpoint NAME from the config file that --config or
SWITCHBOARD_CONFIG names, else from the user's config.toml, with its
sub-tables and the comment lines just above it; the rest of the file is kept
and the previous text saved as FILE.bak. The secret its token names stays in
the secret store (switchboard secrets rm NAME).

An endpoint added at run time (through the REST API or the web UI of
switchboard serve) is removed from the state database instead: through the
running serve of this configuration, which stops serving it at once, or
directly when none runs.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("endpoints remove: name one endpoint: switchboard endpoints remove NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
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
			if !ed.HasEndpoint(name) {
				if ex, ok := configEndpoint(before, name); ok {
					return usageErr("endpoints remove %s: %s does not declare it; %s does (--config %s)", name, target, ex.Source, ex.Source.File)
				}
				if out, ok, err := e.removeStoredEndpoint(cmd.Context(), before, name, dryRun); ok || err != nil {
					if err != nil {
						return err
					}
					return e.printEndpointEdit(out)
				}
				return usageErr("endpoints remove %s: no such endpoint (%s)", name, endpointNames(before))
			}
			if err := ed.RemoveEndpoint(name); err != nil {
				return failed(err)
			}
			out := endpointEditJSON{Action: "remove", Endpoint: name, File: target, DryRun: dryRun, Warnings: []string{}}
			after, err := e.loadWith(ed)
			if err != nil {
				return usageErr("endpoints remove %s: the configuration would have problems:\n%s", name, indent(err.Error()))
			}
			if still, ok := configEndpoint(after, name); ok {
				out.Warnings = append(out.Warnings, fmt.Sprintf("endpoint %s is still declared in %s", name, still.Source))
			}
			if !dryRun {
				backup, err := ed.Write()
				if err != nil {
					return failed(fmt.Errorf("endpoints remove %s: %w", name, err))
				}
				out.Written, out.Backup = true, backup
			}
			return e.printEndpointEdit(out)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed; write nothing")
	return cmd
}

func (e *env) endpointsExportCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "export [NAME...]",
		Short: "Print endpoints as a TOML or JSON file that endpoints import reads",
		Long: `Prints the named endpoints (default all) on stdout as [[endpoints]] tables
(--format toml, the default) or as {"endpoints": [...]} (--format json), with
the keys of a config file. It holds no secret: a token is written as the
placeholder the configuration has ({{secrets.NAME}}, {{env.NAME}}), never
resolved. The endpoints added at run time (REST API, web UI) are written
after the configured ones, as stored (their tokens are placeholders too), so
that import writes them into a config file. switchboard endpoints import
reads either form back.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.jsonOut && !cmd.Flags().Changed("format") {
				format = "json"
			}
			if format != "toml" && format != "json" {
				return usageErr("endpoints export: --format is toml or json, not %q", format)
			}
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			rts, err := e.runtimeEndpoints(cmd.Context(), cfg)
			if err != nil {
				return failed(fmt.Errorf("endpoints export: the endpoints added at run time: %w", err))
			}
			eps := slices.Clone(cfg.Endpoints)
			for _, r := range rts {
				_, clash := configEndpoint(cfg, r.ep.Name)
				switch {
				case clash:
					// The configured one is served, and written.
				case !r.decoded:
					fmt.Fprintf(e.stderr, "switchboard: warning: endpoint %s (added at run time) is left out: its stored form cannot be read: %v\n", r.ep.Name, r.err)
				default:
					eps = append(eps, r.ep)
				}
			}
			if len(args) > 0 {
				var chosen []config.Endpoint
				for _, name := range args {
					i := slices.IndexFunc(eps, func(ep config.Endpoint) bool { return ep.Name == name })
					if i < 0 {
						return usageErr("endpoints export: no endpoint %q (%s)", name, allEndpointNames(cfg, rts))
					}
					chosen = append(chosen, eps[i])
				}
				eps = chosen
			}
			if format == "json" {
				e.wroteJSON = true
				_, err = e.stdout.Write(config.EndpointsJSON(eps))
			} else {
				_, err = e.stdout.Write(config.EndpointsTOML(eps))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "toml", "toml or json")
	return cmd
}

func (e *env) endpointsImportCommand() *cobra.Command {
	var replace, dryRun bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Add the endpoints of a file that endpoints export wrote",
		Long: `Reads the endpoints of FILE (TOML [[endpoints]] tables, or JSON
{"endpoints": [...]}; - for stdin) and adds them to the config file that
--config or SWITCHBOARD_CONFIG names, else to the user's config.toml, as
endpoints add does. An endpoint the configuration has already is left as it
is when it is the same, and skipped, saying so, when it differs, unless
--replace. A token written as itself is refused, as in a config file: the
file must name it ({{secrets.NAME}}); store the secret here with
'switchboard secrets set NAME'.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("endpoints import: name one file: switchboard endpoints import FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.importEndpoints(args[0], replace, dryRun)
		},
	}
	cmd.Flags().BoolVar(&replace, "replace", false, "replace an endpoint of the same name that differs")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be added; write nothing")
	return cmd
}

func (e *env) importEndpoints(file string, replace, dryRun bool) error {
	var data []byte
	var err error
	if file == "-" {
		// As large as a config file may be.
		data, err = io.ReadAll(io.LimitReader(e.stdin, config.MaxFileBytes))
	} else {
		data, err = config.ReadFile(file)
	}
	if err != nil {
		return usageErr("endpoints import: %v", err)
	}
	eps, err := config.ReadEndpoints(file, data)
	if err != nil {
		return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("endpoints import: %s cannot be imported:\n%s", file, indent(err.Error())), details: problemDetails(err)}
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
	out := endpointEditJSON{Action: "import", File: target, DryRun: dryRun, Warnings: []string{}, Added: []string{}, Replaced: []string{}, Unchanged: []string{}, Skipped: []skippedEndpointJS{}}
	for _, ep := range eps {
		ex, exists := configEndpoint(before, ep.Name)
		switch {
		case exists && config.EndpointEqual(ex, ep):
			out.Unchanged = append(out.Unchanged, ep.Name)
		case exists && !replace:
			out.Skipped = append(out.Skipped, skippedEndpointJS{ep.Name, fmt.Sprintf("already configured differently (%s); --replace replaces it", ex.Source)})
		case exists && !ed.HasEndpoint(ep.Name):
			out.Skipped = append(out.Skipped, skippedEndpointJS{ep.Name, fmt.Sprintf("%s declares it, not %s (--config %s)", ex.Source, target, ex.Source.File)})
		case exists:
			if err := ed.ReplaceEndpoint(ep); err != nil {
				return failed(err)
			}
			out.Replaced = append(out.Replaced, ep.Name)
		default:
			from := file
			if file == "-" {
				from = "stdin"
			}
			if err := ed.AddEndpoint(ep, "imported from "+from); err != nil {
				return failed(err)
			}
			out.Added = append(out.Added, ep.Name)
		}
	}
	if _, err := e.loadWith(ed); err != nil {
		return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("endpoints import: the configuration would have problems:\n%s", indent(err.Error())), details: problemDetails(err)}
	}
	if !dryRun && ed.Changed() {
		backup, err := ed.Write()
		if err != nil {
			return failed(fmt.Errorf("endpoints import: %w", err))
		}
		out.Written, out.Backup = true, backup
	}
	if e.jsonOut {
		return e.printJSON(out)
	}
	var b strings.Builder
	for _, n := range out.Added {
		fmt.Fprintf(&b, "  + %s\n", n)
	}
	for _, n := range out.Replaced {
		fmt.Fprintf(&b, "  ~ %s (replaced)\n", n)
	}
	for _, n := range out.Unchanged {
		fmt.Fprintf(&b, "  = %s (already configured, the same)\n", n)
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(&b, "  - %s skipped: %s\n", s.Name, s.Reason)
	}
	n := len(out.Added) + len(out.Replaced)
	switch {
	case n == 0:
		fmt.Fprintf(&b, "nothing to import into %s\n", target)
	case dryRun:
		fmt.Fprintf(&b, "dry run: %d endpoint(s) would be written to %s; nothing written\n", n, target)
	default:
		fmt.Fprintf(&b, "wrote %d endpoint(s) to %s\n", n, target)
	}
	e.printf("%s", b.String())
	if out.Backup != "" {
		fmt.Fprintf(e.stderr, "switchboard: the previous file is %s\n", out.Backup)
	}
	return nil
}

// secretRef names the environment variable or secret a token placeholder
// refers to, for telling people what to set; "" when it is not one
// placeholder alone.
func secretRef(placeholder string) (kind, name string) {
	ps, err := secret.Parse(placeholder)
	if err != nil || len(ps) != 1 {
		return "", ""
	}
	return ps[0].Kind, ps[0].Name
}

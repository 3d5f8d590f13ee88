package cli

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
)

// connectClients are the clients connect writes an entry for, each in the
// file config.ConnectFile names.
var connectClients = []string{config.ClientClaudeDesktop, config.ClientClaudeCode, config.ClientCursor, config.ClientVSCode}

// clientEntry is a server entry of a client's file, in the keys the four
// clients share.
type clientEntry struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// vscodeInput is an input variable of VS Code's mcp.json.
type vscodeInput struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

// connectJSON is what connect prints with --json.
type connectJSON struct {
	Client   string `json:"client"`
	File     string `json:"file"`
	Field    string `json:"field"` // the entry's field path: mcpServers.switchboard-code
	Endpoint string `json:"endpoint,omitempty"`
	URL      string `json:"url,omitempty"` // "" for a client that starts switchboard (Claude Desktop)
	// TokenEnv is the environment variable the client reads the token
	// from, when the endpoint has one.
	TokenEnv string `json:"token_env,omitempty"`
	// TokenInput is the id of the input variable VS Code asks its user
	// for the token with, once, keeping it in its secret storage.
	TokenInput string `json:"token_input,omitempty"`
	Old        string `json:"old,omitempty"` // the entry replaced
	New        string `json:"new"`
	Changed    bool   `json:"changed"`
	DryRun     bool   `json:"dry_run"`
	Written    bool   `json:"written"`
	Backup     string `json:"backup,omitempty"`
}

func (e *env) connectCommand() *cobra.Command {
	var endpoint, name string
	var yes, dryRun bool
	cmd := &cobra.Command{
		Use:   "connect CLIENT [--endpoint NAME]",
		Short: "Point Claude Desktop, Claude Code, Cursor or VS Code at switchboard serve",
		Long: `Writes the entry of an MCP client's own configuration file that points it at
switchboard serve: at the default endpoint (/mcp), or with --endpoint at a
named one ([[endpoints]]: /e/NAME/mcp unless its path says otherwise), at the
address of [gateway] listen (default ` + config.DefaultGatewayListen + `). CLIENT is one of
claude-desktop, claude-code, cursor, vscode; the file is the user's own:

  claude-desktop  claude_desktop_config.json (mcpServers), in the folder of
                  the system's application settings
  claude-code     ~/.claude.json (mcpServers, the user's scope)
  cursor          ~/.cursor/mcp.json (mcpServers)
  vscode          the user's Code/User/mcp.json (servers)

The entry is named switchboard, or switchboard-NAME for an endpoint (--name
to choose). It first shows the change and asks before writing (--yes to
write without asking, --dry-run to only show it); the rest of the file,
comments included, is kept, and the previous text saved as FILE.bak. A file
that is not JSON, or whose servers are not an object, is refused, naming the
file, and left alone.

No token is ever written into a client's file. Where the endpoint (or the
gateway) has a token, the entry carries an Authorization header that the
client fills in: Claude Code (${NAME}) and Cursor (${env:NAME}) from an
environment variable — the variable of the token's {{env.NAME}}, or, for
{{secrets.NAME}}, NAME in capitals, which you set to that secret where the
client runs; VS Code from an input variable (${input:ENTRY-token}, added to
the file's inputs), which it asks you for once and keeps in its secret
storage. Claude Desktop reads no URL from its file and expands
no variable: its entry starts 'switchboard serve --stdio' (with --endpoint
NAME), whose client is the owner and needs no token.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("connect: name one client: switchboard connect %s", strings.Join(connectClients, "|"))
			}
			if !slices.Contains(connectClients, args[0]) {
				return usageErr("connect: unknown client %q (want %s)", args[0], strings.Join(connectClients, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.connectClient(args[0], endpoint, name, yes, dryRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&endpoint, "endpoint", "", "a named endpoint ([[endpoints]] name) instead of /mcp")
	fl.StringVar(&name, "name", "", "the entry's name in the client's file (default switchboard, or switchboard-ENDPOINT)")
	fl.BoolVarP(&yes, "yes", "y", false, "write without asking")
	fl.BoolVar(&dryRun, "dry-run", false, "show the change; write nothing")
	return cmd
}

func (e *env) connectClient(client, endpoint, name string, yes, dryRun bool) error {
	if e.jsonOut && !yes && !dryRun {
		return usageErr("connect: with --json there is no question to answer: add --yes to write, or --dry-run")
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	urlPath, token := gateway.DefaultEndpoint.Path, cfg.Gateway.AuthToken
	if endpoint != "" {
		// A configured endpoint, or one added at run time (the REST API,
		// the web UI).
		ep, rt, rts, ok, err := e.findEndpoint(e.ctx, cfg, endpoint)
		switch {
		case err != nil:
			return failed(fmt.Errorf("connect %s: %w", client, err))
		case !ok:
			return usageErr("connect %s: no endpoint %q (%s)", client, endpoint, allEndpointNames(cfg, rts))
		case rt != nil && !rt.decoded:
			return usageErr("connect %s: endpoint %q (added at run time) cannot be read as stored: %v", client, endpoint, rt.err)
		case rt != nil && rt.err != nil:
			fmt.Fprintf(e.stderr, "switchboard: warning: endpoint %s is not served now: %v\n", endpoint, rt.err)
		}
		urlPath, _, _, _ = ep.Paths()
		if ep.AuthToken != "" {
			token = ep.AuthToken
		}
	}
	if name == "" {
		name = "switchboard"
		if endpoint != "" {
			name += "-" + endpoint
		}
	}
	out := connectJSON{Client: client, Endpoint: endpoint, DryRun: dryRun}
	var entry clientEntry
	if client == config.ClientClaudeDesktop {
		exe, err := os.Executable()
		if err != nil {
			return failed(fmt.Errorf("connect %s: the path of this program: %w", client, err))
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		entry = clientEntry{Command: exe, Args: []string{"serve", "--stdio"}}
		if endpoint != "" {
			entry.Args = append(entry.Args, "--endpoint", endpoint)
		}
		// Claude Desktop starts it without the shell's environment.
		if f := cmpOr(e.configFile, e.getenv("SWITCHBOARD_CONFIG")); f != "" {
			entry.Args = append(entry.Args, "--config", absPath(f))
		}
	} else {
		addr, err := connectAddr(cfg.Gateway.Listen)
		if err != nil {
			return usageErr("connect %s: %v", client, err)
		}
		out.URL = "http://" + addr + urlPath
		entry = clientEntry{URL: out.URL}
		if client != config.ClientCursor {
			entry.Type = "http"
		}
		switch {
		case token == "":
		case client == config.ClientVSCode:
			out.TokenInput = name + "-token"
			entry.Headers = map[string]string{"Authorization": "Bearer ${input:" + out.TokenInput + "}"}
		default:
			out.TokenEnv = tokenEnv(token)
			ref := "${env:" + out.TokenEnv + "}"
			if client == config.ClientClaudeCode {
				ref = "${" + out.TokenEnv + "}"
			}
			entry.Headers = map[string]string{"Authorization": "Bearer " + ref}
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return failed(err)
	}
	cf, _ := config.ConnectFile(client, &config.ClientOptions{Home: e.home(), Dir: dir, Getenv: e.getenv})
	out.File = cf.Path
	ce, err := config.EditClientEntry(cf, name, entry)
	if err != nil {
		if ps := config.Problems(err); len(ps) > 0 {
			return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("connect %s: %s cannot be edited, and is left as it is:\n%s", client, cf.Path, indent(err.Error())), details: problemDetails(err)}
		}
		return failed(fmt.Errorf("connect %s: %s cannot be edited, and is left as it is: %w", client, cf.Path, err))
	}
	if out.TokenInput != "" {
		what := "the gateway"
		if endpoint != "" {
			what = "endpoint " + endpoint
		}
		in := vscodeInput{Type: "promptString", ID: out.TokenInput, Description: "The token of Switchboard's " + what + " (" + token + ")", Password: true}
		if err := ce.AddInput(out.TokenInput, in); err != nil {
			return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("connect %s: %s cannot be edited, and is left as it is: %w", client, cf.Path, err), details: problemDetails(err)}
		}
	}
	out.Field, out.Old, out.New, out.Changed = ce.Field, string(ce.Old), string(ce.New), ce.Changed()
	if !e.jsonOut {
		e.printf("%s", e.connectPreview(client, ce))
	}
	switch {
	case !out.Changed:
		if !e.jsonOut {
			fmt.Fprintf(e.stderr, "switchboard: %s already has this entry; nothing to write\n", e.tildePath(cf.Path))
		}
	case dryRun:
		if !e.jsonOut {
			fmt.Fprintf(e.stderr, "switchboard: dry run: nothing written\n")
		}
	default:
		if !yes && !e.confirm(fmt.Sprintf("write %s? [y/N] ", e.tildePath(cf.Path))) {
			return &exitError{kind: daemon.KindFailed, err: fmt.Errorf("connect %s: not written (answer y, or pass --yes)", client)}
		}
		backup, err := ce.Write()
		if err != nil {
			return failed(fmt.Errorf("connect %s: %w", client, err))
		}
		out.Written, out.Backup = true, backup
	}
	if e.jsonOut {
		return e.printJSON(out)
	}
	if out.Written {
		e.printf("connected %s to %s in %s\n", config.ClientTitle(client), cmpOr(out.URL, "switchboard serve --stdio"), cf.Path)
		if out.Backup != "" {
			fmt.Fprintf(e.stderr, "switchboard: the previous file is %s\n", out.Backup)
		}
	}
	if out.TokenInput != "" && out.Written {
		fmt.Fprintf(e.stderr, "switchboard: VS Code asks for the token (input %s) when it first starts the server, and keeps it in its secret storage\n", out.TokenInput)
	}
	if out.TokenEnv != "" {
		what := "the token"
		if kind, n := secretRef(token); kind == "secrets" {
			what = "the token (secret " + n + " of switchboard's secret store)"
		}
		fmt.Fprintf(e.stderr, "switchboard: %s reads %s from the environment variable %s: set it where %s starts\n", config.ClientTitle(client), what, out.TokenEnv, config.ClientTitle(client))
	}
	return nil
}

// connectPreview shows the entry connect writes, as a diff of the entry.
func (e *env) connectPreview(client string, ce *config.ClientEdit) string {
	var b strings.Builder
	state := ""
	if !ce.Exists() {
		state = " (a new file)"
	}
	fmt.Fprintf(&b, "%s: %s%s, %s:\n", config.ClientTitle(client), e.tildePath(ce.File.Path), state, ce.Field)
	// The entry's lines after the first are indented as in the file:
	// shown without what they share.
	lines := func(prefix string, text []byte) {
		ls := strings.Split(string(text), "\n")
		common := -1
		for _, l := range ls[1:] {
			if n := len(l) - len(strings.TrimLeft(l, " \t")); strings.TrimSpace(l) != "" && (common < 0 || n < common) {
				common = n
			}
		}
		for i, l := range ls {
			if i > 0 && common > 0 && len(l) >= common {
				l = l[common:]
			}
			fmt.Fprintf(&b, "%s %s\n", prefix, l)
		}
	}
	if ce.Old != nil && !ce.Changed() {
		lines(" ", ce.New)
		return b.String()
	}
	if ce.Old != nil {
		lines("-", ce.Old)
	}
	lines("+", ce.New)
	if ce.Input != nil {
		fmt.Fprintf(&b, "and in inputs:\n")
		lines("+", ce.Input)
	}
	return b.String()
}

// confirm asks question on stderr and reads the answer from stdin: yes
// only for y or yes.
func (e *env) confirm(question string) bool {
	fmt.Fprint(e.stderr, question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	if !e.stderrTTY {
		fmt.Fprintln(e.stderr)
	}
	return a == "y" || a == "yes"
}

// connectAddr is where a client on this machine reaches a serve listening
// on listen ([gateway] listen): loopback for an address of every
// interface.
func connectAddr(listen string) (string, error) {
	if listen == "" {
		listen = config.DefaultGatewayListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("[gateway] listen %q: %v", listen, err)
	}
	if port == "0" {
		return "", fmt.Errorf("[gateway] listen %q picks a free port at each start, which a client cannot follow: set a port", listen)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}

// tokenEnv is the environment variable a client reads token from: the one
// its {{env.NAME}} names, or for {{secrets.NAME}} NAME in capitals (a-z,
// 0-9 and _ kept, the rest _); SWITCHBOARD_TOKEN for anything else.
func tokenEnv(token string) string {
	kind, name := secretRef(token)
	switch kind {
	case "env":
		return name
	case "secrets":
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 'a' + 'A'
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
				return r
			}
			return '_'
		}, name)
	}
	return "SWITCHBOARD_TOKEN"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

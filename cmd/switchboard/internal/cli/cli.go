// Package cli implements the switchboard command.
//
// Results go to stdout, diagnostics to stderr. Every command that prints
// something has a stable --json form (fields may be added, never changed in
// meaning); with --json a failure is also a JSON object on stdout,
// {"error": {"code": ..., "message": ...}} (exit.go). Exit codes: 0
// success, 1 a failure of the work (the tool reported an error, a server
// failed), 2 a usage or input error (bad flags, an unknown tool, arguments
// the schema refuses, a configuration problem), 130 interrupted (Ctrl-C).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/version"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailed      = 1   // the work failed: the tool reported an error, a server failed, a run failed
	ExitUsage       = 2   // a usage or input error: bad flags, an unknown tool, arguments the schema refuses, a configuration problem
	ExitInterrupted = 130 // Ctrl-C or SIGTERM (128 + SIGINT, as shells report it)
)

// exitError carries an exit code through cobra, with what --json says of
// it (see exit.go): its kind says both.
type exitError struct {
	kind    daemon.Kind
	err     error // already reported when nil
	details []problemJSON
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.kind.Exit())
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{kind: daemon.KindUsage, err: fmt.Errorf(format, args...)}
}

// failed is err as the command's failure, its exit code and --json code
// said by what it is (classify): an unknown tool or arguments the schema
// refuses are the user's to fix (2), the rest a failure of the work (1).
func failed(err error) error {
	return &exitError{kind: classify(err), err: err}
}

// env is what one invocation runs with.
type env struct {
	// ctx is Main's: Ctrl-C or SIGTERM ends it, and with it the opening
	// of the state store (a database that does not answer) by whichever
	// command first needs it.
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	lookupEnv      func(string) (string, bool)
	stderrTTY      bool

	configFile string
	jsonOut    bool
	verbose    int
	// wroteJSON: a --json document (or line) reached stdout, so a
	// failure is not written as a second one (exit.go).
	wroteJSON bool
	// reportsAll: the command prints every server's state, errors and
	// warnings itself (servers), so the log does not repeat them unless -v.
	reportsAll bool
	noDaemon   bool

	red *secret.Redactor

	// state is the state store, opened by the first command that needs it
	// and closed when Main returns.
	state    *store.Store
	stateErr error
	// tokens is where OAuth tokens are kept (oauthTokens), made once.
	tokens    *oauth.Tokens
	tokensErr error
}

// Main runs the switchboard command with args (without the program name) and
// returns the exit code. ctx ending (Ctrl-C) cancels what is running.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{
		ctx:       ctx,
		stdin:     stdin,
		stdout:    stdout,
		stderr:    stderr,
		getenv:    os.Getenv,
		lookupEnv: os.LookupEnv,
		stderrTTY: isTerminal(stderr),
		red:       secret.NewRedactor(),
	}
	// Everything written to stderr passes the redactor.
	rw := e.red.Writer(stderr)
	e.stderr = rw
	defer func() {
		if f, ok := rw.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}()
	defer func() {
		if e.state != nil {
			e.state.Close()
		}
	}()
	root := e.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	return e.exit(ctx, err, args)
}

func (e *env) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "switchboard",
		Short: "Connect LLM agents to the tools of many MCP servers",
		Long: `Switchboard connects to many MCP servers at once (stdio, Streamable HTTP,
legacy SSE and WebSocket) and offers their tools, resources and prompts,
named mcp_{server}_{tool}, allowlisted, validated and bounded by timeouts.

Configuration is read from $XDG_CONFIG_HOME/switchboard/config.toml, then
./switchboard.toml, then the file named by --config or SWITCHBOARD_CONFIG
(TOML, or the mcpServers JSON of Claude Desktop, Cursor and VS Code).

Results go to stdout, diagnostics to stderr. With --json a failure is also a
JSON object on stdout: {"error": {"code": "unknown_tool", "message": "...",
"details": [...]}}, details listing configuration problems (file, line, path,
message).

Exit codes:
  0    success
  1    the work failed: the tool reported an error, a server failed to start
       or to answer, a run failed
  2    a usage or input error: a bad flag or argument, an unknown tool, server,
       prompt or agent, arguments the tool's schema refuses, a configuration
       problem
  130  interrupted (Ctrl-C)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints what `switchboard version` prints, but not through
	// cobra's Version field: its output format needs SetVersionTemplate, a
	// text/template, and executing a template calls
	// reflect.Value.MethodByName, after which the linker keeps every
	// exported method of every type in the binary, used or not (8 MB more:
	// docs/size.md; TestDeadCodeElimination). Without a Version, cobra
	// answers flags given to the root command, which runs nothing, with its
	// help function: --version is seen there.
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if v, _ := c.Flags().GetBool("version"); v && c == root {
			e.printf("switchboard %s\n", version.Read())
			return
		}
		help(c, args)
	})
	pf := root.PersistentFlags()
	pf.StringVarP(&e.configFile, "config", "c", "", "config file (TOML or mcpServers JSON); default $SWITCHBOARD_CONFIG")
	pf.BoolVar(&e.jsonOut, "json", false, "print the result as JSON")
	pf.CountVarP(&e.verbose, "verbose", "v", "log more to stderr (-v info, -vv debug)")
	root.Flags().Bool("version", false, "print the version and the commit it was built from")
	pf.BoolVar(&e.noDaemon, "no-daemon", false, "start the servers here even when a switchboard serve of this configuration runs")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	root.AddCommand(
		e.serversCommand(),
		e.toolsCommand(),
		e.callCommand(),
		e.resourcesCommand(),
		e.readCommand(),
		e.promptsCommand(),
		e.promptCommand(),
		e.validateCommand(),
		e.secretsCommand(),
		e.authCommand(),
		e.runCommand(),
		e.workflowsCommand(),
		e.workflowCommand(),
		e.runsCommand(),
		e.tasksCommand(),
		e.agentsCommand(),
		e.serveCommand(),
		e.importCommand(),
		e.addCommand(),
		e.removeCommand(),
		e.searchCommand(),
		e.outdatedCommand(),
		e.upgradeCommand(),
		e.endpointsCommand(),
		e.connectCommand(),
		e.statsCommand(),
		e.versionCommand(),
	)
	return root
}

// loadConfig loads the layered configuration; problems are a usage error.
func (e *env) loadConfig() (*config.Config, error) {
	cfg, err := e.loadConfigRaw()
	if err != nil {
		return cfg, configErr(err)
	}
	return cfg, nil
}

// loadConfigRaw loads the layered configuration; the error joins every
// *config.Problem.
func (e *env) loadConfigRaw() (*config.Config, error) {
	file := e.configFile
	if file == "" {
		file = e.getenv("SWITCHBOARD_CONFIG")
	}
	return config.Load(&config.LoadOptions{File: file, Getenv: e.getenv})
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// logger is the stderr logger; silent but for warnings unless -v.
func (e *env) logger() *slog.Logger {
	level := slog.LevelWarn
	switch {
	case e.reportsAll && e.verbose == 0:
		level = slog.LevelError
	case e.verbose == 1:
		level = slog.LevelInfo
	case e.verbose >= 2:
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

// startHost loads the config and connects to its servers, or uses those of
// the running `switchboard serve` of the same configuration (useDaemon).
// With allOptional, a failing server does not fail the start (for
// `servers`, which reports).
func (e *env) startHost(ctx context.Context, allOptional bool, only string) (backend, *config.Config, error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	servers := cfg.Servers
	if only != "" {
		s, ok := cfg.Server(only)
		if !ok {
			return nil, nil, unknownServer(cfg, only)
		}
		servers = []config.Server{s}
	}
	if len(servers) == 0 {
		return nil, nil, usageErr("%s", noServers(cfg))
	}
	if d := e.useDaemon(ctx, cfg, only); d != nil {
		return d, cfg, nil
	}
	if allOptional {
		servers = append([]config.Server(nil), servers...)
		for i := range servers {
			servers[i].Optional = true
		}
	}
	opts, err := e.hostOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	// A server may ask the user during any request (a call, a read, a
	// prompt): a form on a terminal, else declined and said.
	opts.Elicitation = e.elicitation("")
	// The generation a serve's host speaks to its servers (the gateway's
	// choice: under it a server written against the older API can still
	// ask for input during a call): what a command prints — a result's
	// _meta, a server's protocol version — is then the same whether a
	// serve answers it or this host.
	opts.ProtocolVersion = gateway.UpstreamProtocolVersion
	h, err := e.connect(ctx, servers, opts)
	if err != nil {
		return nil, nil, err
	}
	return h, cfg, nil
}

// startHint adds to a failed start (a *host.StartError) how to go on
// without each required server that failed: one server with a problem
// (imported with a variable not set here, say) otherwise stops every
// command that starts the configuration's servers, and the error alone
// does not say what to do.
func (e *env) startHint(err error, servers []config.Server) error {
	var se *host.StartError
	if !errors.As(err, &se) {
		return err
	}
	var lines []string
	for _, f := range se.Failed {
		i := slices.IndexFunc(servers, func(s config.Server) bool { return s.ID == f.Server })
		if i < 0 || servers[i].Source.File == "" {
			continue
		}
		s := servers[i]
		if strings.HasSuffix(s.Source.File, ".json") {
			lines = append(lines, fmt.Sprintf(`to go on without %s: set "optional": true in its entry (%s), or delete it there`, s.ID, s.Source))
			continue
		}
		rm := "switchboard remove " + s.ID
		if target, terr := e.editTarget(""); terr != nil || e.configFile != "" || absPath(target) != absPath(s.Source.File) {
			rm = "switchboard --config " + s.Source.File + " remove " + s.ID
		}
		lines = append(lines, fmt.Sprintf("to go on without %s: set optional = true in its table (%s), or remove it: %s", s.ID, s.Source, rm))
	}
	if len(lines) == 0 {
		return err
	}
	return &hinted{err: err, hint: strings.Join(lines, "\nswitchboard: ")}
}

// hinted is an error with what to do about it, on lines of its own.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() + "\nswitchboard: " + h.hint }
func (h *hinted) Unwrap() error { return h.err }

// connect starts a host over servers, showing on a terminal which are
// still starting.
func (e *env) connect(ctx context.Context, servers []config.Server, opts *host.Options) (*host.Host, error) {
	h, err := host.New(servers, opts)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	p := e.startProgress(servers)
	stop := p.follow(h)
	err = h.Start(ctx)
	stop()
	p.done() // clear the progress line before any answer
	if err != nil {
		if ctx.Err() != nil {
			return nil, failed(fmt.Errorf("cancelled: %w", err))
		}
		return nil, failed(e.startHint(err, servers))
	}
	return h, nil
}

// hostOptions are the host options every command starts with: the stderr
// logger, the redactor, the secret store, the tool-list cache.
func (e *env) hostOptions(cfg *config.Config) (*host.Options, error) {
	n, err := e.network(cfg)
	if err != nil {
		return nil, err
	}
	tokens, err := e.oauthTokens(cfg)
	if err != nil {
		// Only the servers that sign in need them: they fail, saying why.
		tokens = &oauth.Tokens{Unavailable: err}
	}
	guardrails, err := e.guardrails(cfg, n)
	if err != nil {
		return nil, err
	}
	return &host.Options{
		Guardrails:          guardrails,
		Logger:              e.logger(),
		ToolNameFormat:      cfg.ToolNameFormat,
		Redactor:            e.red,
		Secrets:             e.secretStore(),
		LookupEnv:           e.lookupEnv,
		ToolCache:           e.toolCache(cfg),
		Pins:                e.pinStore(cfg),
		Network:             n,
		MaxDescriptionBytes: cfg.Limits.MaxDescriptionBytes,
		MaxNameBytes:        cfg.Limits.MaxNameBytes,
		OAuthTokens:         tokens,
	}, nil
}

// network is cfg's [network] policy with the proxy's placeholders resolved
// (and registered with the redactor), for the host and the LLM providers.
func (e *env) network(cfg *config.Config) (*netguard.Network, error) {
	var store secret.Store = secret.EnvStore{LookupEnv: e.lookupEnv}
	if strings.Contains(cfg.Network.Proxy, "{{secrets.") {
		store = e.secretStore()
	}
	n, err := cfg.Network.Resolve(e.lookupEnv, store, e.red)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return n, nil
}

// guardrails is cfg's [[guardrails]] chain, the hooks' tokens resolved
// (and registered with the redactor).
func (e *env) guardrails(cfg *config.Config, n *netguard.Network) (*guardrail.Chain, error) {
	var store secret.Store = secret.EnvStore{LookupEnv: e.lookupEnv}
	for _, g := range cfg.Guardrails {
		if strings.Contains(g.Token, "{{secrets.") {
			store = e.secretStore()
			break
		}
	}
	c, err := cfg.Guardrails.Chain(e.lookupEnv, store, e.red, n)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return c, nil
}

// toolCache is the state store (stateStore), or nil when it cannot be
// opened: the cache only saves time, so no command fails for want of it.
func (e *env) toolCache(cfg *config.Config) host.ToolCache {
	if st := e.stateStore(cfg); st != nil {
		return st
	}
	return nil
}

// pinStore is the state store, which keeps the pinned tool definitions;
// nil (not a nil *store.Store) when there is none.
func (e *env) pinStore(cfg *config.Config) host.PinStore {
	if st := e.stateStore(cfg); st != nil {
		return st
	}
	return nil
}

// stateStore is the state store at cfg's [state] database, or else at
// statePath(), opened once per command; nil (a warning with -v) when it
// cannot be opened.
func (e *env) stateStore(cfg *config.Config) *store.Store {
	if e.state == nil && e.stateErr == nil {
		var secrets secret.Store
		if strings.Contains(cfg.State.Database, "{{secrets.") {
			secrets = e.secretStore() // opened only when needed: it may warn
		}
		where, err := cfg.State.ResolveDatabase(e.lookupEnv, secrets, e.red)
		if where == "" && err == nil {
			where = e.statePath()
		}
		if e.stateErr = err; err == nil {
			e.state, e.stateErr = store.Open(e.ctx, where, nil)
		}
		if e.stateErr != nil {
			e.logger().Warn("no state store", "err", e.stateErr)
		}
	}
	return e.state
}

// statePath is $XDG_STATE_HOME/switchboard/switchboard.db (default
// ~/.local/state/switchboard/switchboard.db), or "" (store.DefaultPath)
// when there is no home to put it in.
func (e *env) statePath() string {
	if d := e.getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "switchboard", "switchboard.db")
	}
	if home := e.getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "switchboard", "switchboard.db")
	}
	return ""
}

// unknownServer is the usage error of a server id the configuration does
// not have.
func unknownServer(cfg *config.Config, id string) error {
	return &exitError{kind: daemon.KindUnknownServer, err: fmt.Errorf("no server %q in the configuration (%s)", id, serverIDs(cfg))}
}

func serverIDs(cfg *config.Config) string {
	ids := make([]string, len(cfg.Servers))
	for i, s := range cfg.Servers {
		ids[i] = s.ID
	}
	if len(ids) == 0 {
		return "none configured"
	}
	return "configured: " + strings.Join(ids, ", ")
}

// isTerminal reports whether w is a terminal (x/term asks the kernel; a
// character device such as /dev/null is not one).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printJSON writes v as indented JSON to stdout, redacted.
func (e *env) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return failed(err)
	}
	e.wroteJSON = true
	_, err = fmt.Fprintln(e.stdout, escapeHidden(e.red.Redact(string(b))))
	return err
}

// escapeHidden writes, in JSON text, every character a terminal would act
// on or not show — C1 controls, format characters (bidi controls, zero-width
// characters, tag characters), other default-ignorable ones and variation
// selectors — as a \u escape: the same JSON, but what a server left in a
// value the host keeps as it is (a tool result, an enum value) is seen on
// a terminal for what it is. Such characters occur only inside strings.
func escapeHidden(s string) string {
	hidden := func(r rune) bool {
		return (r >= 0x7f && r < 0xa0) || (r > 0x7f && (unicode.Is(unicode.Cf, r) ||
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)))
	}
	i := strings.IndexFunc(s, hidden)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// printf writes the text output of a command to stdout: redacted, and
// cleaned of terminal escapes and control and invisible characters
// (host.CleanText; newlines and tabs kept), since it holds what servers
// sent as they sent it (a tool's result, a resource's text) and a terminal
// would act on it. --json output (printJSON) is exact instead, those
// characters escaped.
func (e *env) printf(format string, args ...any) {
	fmt.Fprint(e.stdout, e.red.Redact(host.CleanText(fmt.Sprintf(format, args...))))
}

// eprintf writes a line about a server's doing to stderr, cleaned as
// printf cleans (stderr is redacted by its writer).
func (e *env) eprintf(format string, args ...any) {
	fmt.Fprint(e.stderr, host.CleanText(fmt.Sprintf(format, args...)))
}
